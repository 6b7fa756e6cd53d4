"""The web app, the API and the ``tiplu`` command line.

``vision`` is imported first, so that OpenCV's pixel ceiling is set before any
module here loads ``cv2`` (see :mod:`vision`).
"""

import vision  # noqa: F401  (sets OPENCV_IO_MAX_IMAGE_PIXELS before cv2 is loaded)
