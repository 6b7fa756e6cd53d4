"""Enrolment photos on a family's tablecloths: every card of a suit found, in reading order.

The photos are rendered by :mod:`vision.training.data.enrol_photos` from designs kept out of
training (nicu-white, nicu-ornamental, and the light-ink-on-dark-stock proc-gold-on-black)
on striped, checked, floral, knitted, wooden, felt, white and cream cloths, with lights,
glare, shadows and a tilted camera. Each run checks one design and suit per cloth (a
different one for each cloth); ``bench/bench_enrol.py`` checks the whole set.
"""

from __future__ import annotations

import numpy as np
import pytest

from vision.enrolment import CardSearch, card_names, find_cards, photo_hints
from vision.training.data.enrol_photos import TABLECLOTHS, TEST_DESIGNS, design_photo, found_right

pytest.importorskip("onnxruntime")


@pytest.mark.parametrize("cloth", list(TABLECLOTHS))
def test_every_card_of_a_suit_is_found_on_the_cloth(cloth: str) -> None:
    k = list(TABLECLOTHS).index(cloth)
    photo = design_photo(TEST_DESIGNS[k % len(TEST_DESIGNS)], cloth, seed=0, suit="SHDC"[k % 4])
    found = find_cards(photo.image, photo.suit, f"{photo.name}.jpg")
    assert [c.card for c in found] == card_names(photo.suit)
    assert found_right([c.outline for c in found], photo), f"{photo.name}: a card found where none lies"


@pytest.mark.parametrize("design, cloth, seed, suit", [
    ("nicu-ornamental", "white-cloth", 1, "S"),  # the 4S's indices boxed only under the first search's score
    ("nicu-ornamental", "cream-cloth", 1, "S"),  # the 8S's top index read as facing sideways: a lone card
    ("nicu-white", "white-cloth", 0, "C"),  # clubs pips misread as facing 20-40 degrees off
    ("nicu-ornamental", "cream-cloth", 2, "S"),  # glare hides indices: neighbouring cards' pairs as common
    ("nicu-white", "stripes", 2, "C"),  # the 4C faded by glare to one index, its facing misread
])
def test_a_suit_whose_indices_are_misread_or_faint_is_still_found(design: str, cloth: str, seed: int,
                                                                  suit: str) -> None:
    photo = design_photo(design, cloth, seed=seed, suit=suit)
    found = find_cards(photo.image, photo.suit, f"{photo.name}.jpg")
    assert found_right([c.outline for c in found], photo), f"{photo.name}: a card found where none lies"


def test_a_busy_cloth_without_cards_is_named_as_the_trouble() -> None:
    cloth = TABLECLOTHS["stripes"](np.random.default_rng(3), 640, 480)
    assert "plain cloth" in " ".join(photo_hints(cloth, CardSearch(())))
    assert photo_hints(np.full((480, 640, 3), 128, np.uint8), CardSearch(())) == [
        "the photo is dark or flat: take it in more light"]


@pytest.mark.parametrize("shift, touching", [(30, True), (150, False)])
def test_cards_that_overlap_are_told_to_lie_apart(shift: int, touching: bool) -> None:
    card = ((200.0, 150.0), (300.0, 150.0), (300.0, 290.0), (200.0, 290.0))
    other = tuple((x + shift, y) for x, y in card)
    lit = np.random.default_rng(0).integers(90, 200, (480, 640, 3)).astype(np.uint8)
    hints = [str(h) for h in photo_hints(lit, CardSearch((card, other)))]
    assert ("some cards touch or overlap: lay them apart" in hints) is touching, hints
