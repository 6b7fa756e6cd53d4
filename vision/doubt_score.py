"""How likely a card read from a photo is wrong, from what the whole reading shows about it.

A card's own confidence says little on its own: on a whole table most cards show one
index (the rest of the card lies under its neighbour), and a lone index at table
distance scores lower than a paired one at arm's length, right or not. What makes a
card wrong is mostly where it lies: a card of the same name right beside it (one index
read twice), an index overlapping another card's (one index named two ways), a corner
much smaller than the photo's others. :class:`DoubtScore` is a logistic regression over
:data:`FEATURES`, fitted on held-out photos (``tiplu calibrate``,
:mod:`vision.training.measure.calibrate`) and kept in ``model.json``'s ``"calibration"`` under
``"doubt_score"``; a card whose probability of being wrong is at least ``flag_above`` is
marked ``uncertain`` (:meth:`vision.pipeline.Reader.flag`). The regression may also read every
product of two features (``terms`` ``"quadratic"``, :func:`expanded`): one index
seen alone weighs more where a card of its name lies right beside it, which one weight per feature
cannot say.

>>> from vision.geometry import Corner
>>> from vision.geometry import PhysicalCard
>>> corners = [Corner("8D", 0.9, (0, 0, 10, 16)), Corner("8D", 0.5, (3, 0, 13, 16)), Corner("KS", 0.9, (60, 0, 70, 16))]
>>> cards = [PhysicalCard(c.card, c.confidence, c.box, (k,)) for k, c in enumerate(corners)]
>>> [round(f["same_name_nearby"], 2) for f in card_features(corners, cards)]
[0.88, 0.88, 0.0]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import combinations_with_replacement
from typing import Any

import numpy as np

from vision.geometry import Corner, PhysicalCard, box_iou

#: What the score reads of each card, in the order of its weights:
#: ``confidence_logit`` the card's confidence as log-odds; ``runner_up`` the classifier's
#: probability of the next likeliest card; ``lone`` 1 where one index was seen (0 paired);
#: ``relative_size_log`` the log of its biggest index's side over the photo's median corner side;
#: ``same_name_nearby`` and ``crowded`` how near (1 on top, 0 far) the nearest corner of another
#: card of the same name, and of any name, lies, in index sides (:data:`NEAR_SCALE`);
#: ``overlap`` the most its corners overlap another card's (IoU); ``cards_log`` the log of the
#: number of cards read.
FEATURES = ("confidence_logit", "runner_up", "lone", "relative_size_log", "same_name_nearby", "overlap",
            "crowded", "cards_log")

#: Index sides over which nearness falls to 1/e.
NEAR_SCALE = 1.5

#: What the regression reads of :data:`FEATURES`: ``"linear"`` the features alone,
#: ``"quadratic"`` the features and the product of every two of them, squares included (:func:`expanded`).
TERMS = ("linear", "quadratic")


def expanded(row: Sequence[float], terms: str) -> tuple[float, ...]:
    """A card's :data:`FEATURES` as the regression of ``terms`` reads them.

    >>> expanded((2.0, 3.0), "linear"), expanded((2.0, 3.0), "quadratic")
    ((2.0, 3.0), (2.0, 3.0, 4.0, 6.0, 9.0))
    """
    if terms == "linear":
        return tuple(row)
    return tuple(row) + tuple(row[i] * row[j] for i, j in combinations_with_replacement(range(len(row)), 2))


def term_count(terms: str) -> int:
    """How many weights a regression of ``terms`` over :data:`FEATURES` has.

    >>> term_count("linear"), term_count("quadratic")
    (8, 44)
    """
    return len(expanded((0.0,) * len(FEATURES), terms))


class DoubtScoreError(ValueError):
    """``model.json``'s ``"doubt_score"`` cannot be used; the message says what to fix."""


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def card_features(corners: Sequence[Corner], cards: Sequence[PhysicalCard]) -> list[dict[str, float]]:
    """:data:`FEATURES` of every card of a reading (``cards`` index ``corners``)."""
    if not cards:
        return []
    boxes = np.array([c.box for c in corners], dtype=float).reshape(-1, 4)
    sides = np.maximum(np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]), 1e-6)
    centres = (boxes[:, :2] + boxes[:, 2:]) / 2
    owner = np.full(len(corners), -1)
    for i, card in enumerate(cards):
        owner[list(card.corners)] = i
    names = np.array([cards[k].card if k >= 0 else "" for k in owner])
    distance = np.linalg.norm(centres[:, None, :] - centres[None, :, :], axis=2) / sides[:, None]
    overlap = box_iou(boxes, boxes)
    median = float(np.median(sides))
    out = []
    for i, card in enumerate(cards):
        own = list(card.corners)
        others = (owner >= 0) & (owner != i)
        same = others & (names == card.card)
        near_any = float(distance[own][:, others].min()) if others.any() else math.inf
        near_same = float(distance[own][:, same].min()) if same.any() else math.inf
        runner_up = card.alternatives[0][1] if card.alternatives else 0.0
        out.append({"confidence_logit": _logit(card.confidence), "runner_up": runner_up,
                    "lone": float(len(own) == 1),
                    "relative_size_log": math.log(float(sides[own].max()) / median),
                    "same_name_nearby": math.exp(-near_same / NEAR_SCALE),
                    "overlap": float(overlap[own][:, others].max()) if others.any() else 0.0,
                    "crowded": math.exp(-near_any / NEAR_SCALE), "cards_log": math.log(len(cards))})
    return out


def feature_rows(corners: Sequence[Corner], cards: Sequence[PhysicalCard]) -> list[tuple[float, ...]]:
    """:func:`card_features` as rows in :data:`FEATURES` order."""
    return [tuple(f[name] for name in FEATURES) for f in card_features(corners, cards)]


@dataclass(frozen=True)
class DoubtScore:
    """A fitted logistic regression: P(card wrong) from its standardised :data:`FEATURES`
    (and, with ``terms`` ``"quadratic"``, their products: :func:`expanded`).

    >>> score = DoubtScore(mean=(0.0,) * 8, scale=(1.0,) * 8, weights=(-1.0,) + (0.0,) * 7, bias=0.0, flag_above=0.4)
    >>> round(score.probability((0.0,) * 8), 2), score.flags((2.0,) + (0.0,) * 7), score.flags((-2.0,) + (0.0,) * 7)
    (0.5, False, True)
    """

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float
    flag_above: float
    terms: str = TERMS[0]

    def probability(self, row: Sequence[float]) -> float:
        z = self.bias + sum(w * (x - m) / s for w, x, m, s in zip(self.weights, expanded(row, self.terms),
                                                                   self.mean, self.scale))
        return 1.0 / (1.0 + math.exp(-max(min(z, 50.0), -50.0)))

    def flags(self, row: Sequence[float]) -> bool:
        """Should the player check the card with these features?"""
        return self.probability(row) >= self.flag_above

    def at(self, flag_above: float) -> DoubtScore:
        return replace(self, flag_above=flag_above)

    def to_json(self) -> dict[str, Any]:
        return {"features": list(FEATURES), "terms": self.terms, "mean": [round(v, 6) for v in self.mean],
                "scale": [round(v, 6) for v in self.scale], "weights": [round(v, 6) for v in self.weights],
                "bias": round(self.bias, 6), "flag_above": round(self.flag_above, 6)}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> DoubtScore:
        """Read ``model.json``'s ``"doubt_score"``, checking it fits this tiplu's :data:`FEATURES`
        (without ``"terms"``, a linear score, as older models wrote it).

        >>> DoubtScore.from_json({"features": ["confidence_logit"], "mean": [0], "scale": [1], "weights": [1],
        ...                       "bias": 0, "flag_above": 0.5})
        Traceback (most recent call last):
        ...
        vision.doubt_score.DoubtScoreError: model.json calibration.doubt_score: its features are ['confidence_logit'], this tiplu reads ['confidence_logit', 'runner_up', 'lone', 'relative_size_log', 'same_name_nearby', 'overlap', 'crowded', 'cards_log']; calibrate the model again (tiplu calibrate)
        """
        where = "model.json calibration.doubt_score"
        if not isinstance(raw, Mapping):
            raise DoubtScoreError(f"{where}: give an object, not {raw!r}")
        if list(raw.get("features", [])) != list(FEATURES):
            raise DoubtScoreError(f"{where}: its features are {raw.get('features')!r}, this tiplu reads "
                                  f"{list(FEATURES)!r}; calibrate the model again (tiplu calibrate)")
        terms = raw.get("terms", TERMS[0])
        if terms not in TERMS:
            raise DoubtScoreError(f"{where}.terms: give one of {list(TERMS)}, not {terms!r}")
        count = term_count(terms)
        values: dict[str, Any] = {"terms": terms}
        for name in ("mean", "scale", "weights"):
            seq = raw.get(name)
            if (not isinstance(seq, list) or len(seq) != count
                    or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                               for v in seq)):
                raise DoubtScoreError(f"{where}.{name}: give {count} numbers, one per {terms} term")
            values[name] = tuple(float(v) for v in seq)
        if any(s <= 0 for s in values["scale"]):
            raise DoubtScoreError(f"{where}.scale: every scale must be above 0")
        for name, low, high in (("bias", -math.inf, math.inf), ("flag_above", 0.0, 1.0)):
            v = raw.get(name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not low <= v <= high:
                raise DoubtScoreError(f"{where}.{name}: give a number{' from 0 to 1' if high == 1.0 else ''}, "
                                      f"not {v!r}")
            values[name] = float(v)
        return cls(**values)


#: The ridge (L2) penalty of :func:`fit_doubt_score`, on standardised features.
RIDGE = 1.0
#: The forms :func:`vision.training.measure.calibrate.choose_score` fits, in this order (a later one is
#: kept only where it flags fewer of the calibration cards): the terms and the ridge penalty.
FORMS: tuple[tuple[str, float], ...] = (("linear", RIDGE),) + tuple(("quadratic", r) for r in (1.0, 3.0, 10.0, 30.0, 100.0))


def fit_doubt_score(rows: Sequence[Sequence[float]], wrong: Sequence[bool], ridge: float = RIDGE,
                    flag_above: float = 0.5, terms: str = TERMS[0]) -> DoubtScore:
    """Fit :class:`DoubtScore` by Newton's method (ridge-penalised logistic regression).

    The terms are standardised first, so the penalty treats them alike and the weights
    say how much each one matters.

    >>> rows = [(x, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0) for x in (-3, -2, -1, 1, 2, 3)]
    >>> score = fit_doubt_score(rows, [True, True, False, True, False, False])
    >>> score.weights[0] < 0, score.probability(rows[0]) > score.probability(rows[-1])
    (True, True)
    >>> len(fit_doubt_score(rows, [True, True, False, True, False, False], terms="quadratic").weights)
    44
    """
    x = np.asarray([expanded(row, terms) for row in rows], dtype=float).reshape(len(rows), term_count(terms))
    y = np.asarray(wrong, dtype=float)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = np.c_[np.ones(len(x)), (x - mean) / scale]
    penalty = ridge * np.diag([0.0] + [1.0] * x.shape[1])
    w = np.zeros(z.shape[1])
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ w, -50, 50)))
        gradient = z.T @ (p - y) + penalty @ w
        hessian = (z * (p * (1 - p))[:, None]).T @ z + penalty
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return DoubtScore(tuple(float(v) for v in mean), tuple(float(v) for v in scale),
                      tuple(float(v) for v in w[1:]), float(w[0]), flag_above, terms)
