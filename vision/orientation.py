"""Which way a corner index faces, and what two indices' facing says about being one card.

A card shows its index in two opposite corners, the second turned 180 degrees. The card
stock runs from each index towards the card's middle: seen upright, the other index lies
down and to the right, along the card's diagonal (on the held-out designs' rendered tables,
41-51 degrees below the horizontal with the labelled angles, 37-57 with the network's, 5-95%).
Two copies of one card, in a meld row or a tunnela, lie side by side or head to toe, so at
least one of them sees the other somewhere else, mostly flatter. The test is centred at
:data:`DIAGONAL`, 54 degrees, chosen on the calibration scenes (46, 50, 54 and 58 tried):
it spares more of the steep side, where copies seldom lie.

A small network (``corner_orientation.onnx``, :data:`ORIENTATION_FILE`) says
the angle each index faces from a square gray crop around it (:func:`orientation_crop`):
the angle by which the photo must be turned, counter-clockwise on screen, for the index to
stand upright. :func:`diagonal_error` turns two corners' angles into the worse of their
two views of each other, in degrees; :mod:`vision.pairing` takes it as its facing test.

>>> round(diagonal_error((0, 0, 10, 16), (60, 80, 70, 96), 0.0, 180.0), 1)
0.9
>>> round(diagonal_error((0, 0, 10, 16), (80, 0, 90, 16), 0.0, 0.0), 1)
126.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import cv2
import numpy as np

from vision.settings import ORIENTATION_FILE
#: The crop's side, in the box's long sides: enough to show the card's corner around the index.
ORIENTATION_SIDE = 1.6
ORIENTATION_SIZE = 32
#: A box whose crop square reaches further than this share of its side off the photo gets no
#: angle: the crop is mostly the photo's border repeated (a card cut by the photo's edge, a
#: close-up's index near it), and on the real photos such angles were off by 30-50 degrees.
ORIENTATION_OUTSIDE = 0.1
#: Where an upright index should see the other index of its card: degrees below the horizontal.
DIAGONAL = 54.0


def orientation_crop(gray: np.ndarray, box: Sequence[float], turn: float = 0.0, scale: float = 1.0,
                     shift: tuple[float, float] = (0.0, 0.0)) -> np.ndarray:
    """The network's input for one box: a square around its centre, ``ORIENTATION_SIZE`` px, gray.

    ``turn`` (degrees, counter-clockwise on screen), ``scale`` and ``shift`` (shares of the
    side) vary the crop for training; an index facing ``a`` then faces ``a - turn``.

    >>> orientation_crop(np.zeros((100, 100), np.uint8), (10, 10, 40, 30)).shape
    (32, 32)
    """
    x1, y1, x2, y2 = (float(v) for v in box)
    side = max(ORIENTATION_SIDE * max(x2 - x1, y2 - y1) * scale, 1e-3)
    cx, cy = (x1 + x2) / 2 + shift[0] * side, (y1 + y2) / 2 + shift[1] * side
    m = cv2.getRotationMatrix2D((cx, cy), turn, ORIENTATION_SIZE / side)
    m[:, 2] += np.array([ORIENTATION_SIZE / 2 - cx, ORIENTATION_SIZE / 2 - cy])
    flags = cv2.INTER_AREA if side > 2 * ORIENTATION_SIZE else cv2.INTER_LINEAR
    return cv2.warpAffine(gray, m, (ORIENTATION_SIZE, ORIENTATION_SIZE), flags=flags, borderMode=cv2.BORDER_REPLICATE)


def inside_photo(box: Sequence[float], width: int, height: int) -> bool:
    """Whether a box's crop square lies on the photo, up to :data:`ORIENTATION_OUTSIDE` of its side.

    >>> inside_photo((40, 40, 60, 70), 200, 200), inside_photo((2, 40, 22, 70), 200, 200)
    (True, False)
    """
    x1, y1, x2, y2 = (float(v) for v in box)
    half = ORIENTATION_SIDE * max(x2 - x1, y2 - y1) / 2
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    slack = ORIENTATION_OUTSIDE * 2 * half
    return cx - half >= -slack and cy - half >= -slack and cx + half <= width + slack and cy + half <= height + slack


def orientation_input(crops: np.ndarray) -> np.ndarray:
    """Crops (N, 32, 32 uint8) as the network takes them: (N, 1, 32, 32) float, each crop's own contrast.

    >>> orientation_input(np.full((2, 32, 32), 200, np.uint8)).shape
    (2, 1, 32, 32)
    """
    x = crops.astype(np.float32)[:, None] / 255.0
    mean = x.mean(axis=(2, 3), keepdims=True)
    spread = x.std(axis=(2, 3), keepdims=True) + 0.05
    return np.ascontiguousarray((x - mean) / spread)


def output_angles(out: np.ndarray) -> np.ndarray:
    """The network's (cos, sin) rows as angles in degrees, 0-360.

    >>> output_angles(np.array([[0.0, 2.0], [-1.0, 0.0]])).tolist()
    [90.0, 180.0]
    """
    return np.degrees(np.arctan2(out[:, 1], out[:, 0])) % 360


def wrap_degrees(degrees: float) -> float:
    """An angle or angle difference folded into -180 to 180 degrees.

    >>> wrap_degrees(350.0), wrap_degrees(-190.0)
    (-10.0, 170.0)
    """
    return (degrees + 180.0) % 360.0 - 180.0


def view_angle(box: Sequence[float], other: Sequence[float], angle: float) -> float:
    """Where ``other``'s centre lies as seen from ``box`` stood upright (degrees below the horizontal).

    >>> view_angle((0, 0, 10, 10), (10, 10, 20, 20), 0.0), view_angle((0, 0, 10, 10), (10, 10, 20, 20), 90.0)
    (45.0, -45.0)
    """
    vx = (other[0] + other[2] - box[0] - box[2]) / 2
    vy = (other[1] + other[3] - box[1] - box[3]) / 2
    c, s = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    return math.degrees(math.atan2(-s * vx + c * vy, c * vx + s * vy))


def diagonal_error(a: Sequence[float], b: Sequence[float], a_angle: float, b_angle: float) -> float:
    """How far (degrees) two indices lie from being one card's: the worse of their two views of each other."""
    return max(abs(wrap_degrees(view_angle(a, b, a_angle) - DIAGONAL)), abs(wrap_degrees(view_angle(b, a, b_angle) - DIAGONAL)))
