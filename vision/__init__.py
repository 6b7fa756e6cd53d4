"""Reading cards from photos. Importing the package sets OpenCV's own pixel ceiling first.

OpenCV reads ``OPENCV_IO_MAX_IMAGE_PIXELS`` once, when ``cv2`` is loaded, and refuses to
decode a larger image whatever its file header claimed (its default is a billion
pixels). :mod:`vision.images` checks the header's size before decoding, but the
decoder may find another size than the header walk did; so the ceiling is set here,
before any module of the package imports ``cv2``, to :data:`OPENCV_MAX_PIXELS`
unless the environment already sets it.

>>> int(os.environ["OPENCV_IO_MAX_IMAGE_PIXELS"]) >= 8192 * 6144
True
"""

from __future__ import annotations

import os

#: The pixels OpenCV decodes at most, in this process: the largest photo limit (8192 x 6144).
OPENCV_MAX_PIXELS = 8192 * 6144

os.environ.setdefault("OPENCV_IO_MAX_IMAGE_PIXELS", str(OPENCV_MAX_PIXELS))
