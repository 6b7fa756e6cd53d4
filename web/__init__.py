"""The web app, the API and the ``tiplu`` command line.

OpenCV's pixel ceiling is set here too, before any module of ``web`` loads ``cv2``
(see :mod:`vision`, which sets the same figure): ``import vision`` here would load
the vision package into ``tiplu check``, which must stay light.
"""

import os

#: The pixels OpenCV decodes at most in this process: :data:`vision.OPENCV_MAX_PIXELS`.
OPENCV_MAX_PIXELS = 8192 * 6144

os.environ.setdefault("OPENCV_IO_MAX_IMAGE_PIXELS", str(OPENCV_MAX_PIXELS))
