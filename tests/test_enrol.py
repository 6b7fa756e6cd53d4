"""Enrolment's first half: the 13 cards of a suit photo found, named by place, their corners cut.

The photos are composed here from a design's rendered faces (the held-out nicu-white
when its package is installed, else an OpenCV-drawn deck), laid 5-5-3 and a little
turned on a felt-like table; the shipped classifier reads the corners that were cut.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.detector import CardDetector
from vision.training.enrol import EnrolError, card_names, corner_crops, find_cards
from vision.training.decks import Deck, DeckError, drawn_decks, load_decks
from vision.training.faces import Face

#: Share of the enrolment corners the shipped classifier must name right (nicu-white: 96 of 104).
CLASSIFIED_FLOOR = 0.85


def held_out_deck() -> Deck:
    try:
        return load_decks("holdout")[0]
    except (DeckError, IndexError):
        return drawn_decks()[0]


def lay_out(faces: list[Face], rng: np.random.Generator, card_w: int = 150) -> tuple[np.ndarray, list[tuple[float, float]]]:
    """A 1280x960 photo of the faces in rows of five, each turned up to 8 degrees; their centres."""
    photo = np.clip(np.full((960, 1280, 3), (60, 110, 40), int) + rng.integers(-12, 12, (960, 1280, 3)), 0, 255)
    centres = []
    for k, face in enumerate(faces):
        row, col = divmod(k, 5)
        small = cv2.resize(face.image, None, fx=card_w / face.image.shape[1], fy=card_w / face.image.shape[1],
                           interpolation=cv2.INTER_AREA)
        h, w = small.shape[:2]
        cx, cy = 140 + col * 250 + rng.uniform(-15, 15), 150 + row * 300 + rng.uniform(-15, 15)
        turn = cv2.getRotationMatrix2D((w / 2, h / 2), float(rng.uniform(-8, 8)), 1.0)
        turn[:, 2] += (cx - w / 2, cy - h / 2)
        laid = cv2.warpAffine(small, turn, (1280, 960), borderValue=(0, 0, 0, 0))
        alpha = laid[:, :, 3:4] / 255.0
        photo = photo * (1 - alpha) + laid[:, :, :3] * alpha
        centres.append((cx, cy))
    return photo.astype(np.uint8), centres


@pytest.fixture(scope="module")
def suit_photos() -> list[tuple[str, np.ndarray, list[tuple[float, float]]]]:
    deck, rng = held_out_deck(), np.random.default_rng(7)
    photos = []
    for suit in "SHDC":
        photo, centres = lay_out([deck.faces[name] for name in card_names(suit)], rng)
        photos.append((suit, photo, centres))
    return photos


def test_the_cards_are_found_in_reading_order(suit_photos: list[tuple[str, np.ndarray, list[tuple[float, float]]]]) -> None:
    for suit, photo, centres in suit_photos:
        found = find_cards(photo, suit, f"{suit}.jpg")
        assert [c.card for c in found] == card_names(suit)
        for card, (cx, cy) in zip(found, centres):
            x, y = np.mean(card.outline, axis=0)
            assert abs(x - cx) < 20 and abs(y - cy) < 20, f"{card.card} found at {x:.0f},{y:.0f}, laid at {cx:.0f},{cy:.0f}"


def test_the_shipped_classifier_reads_the_corners_cut(suit_photos: list[tuple[str, np.ndarray, list[tuple[float, float]]]]) -> None:
    detector = CardDetector()
    crops, wanted = [], []
    for suit, photo, _ in suit_photos:
        for card in find_cards(photo, suit):
            for crop in corner_crops(photo, card.outline):
                crops.append(crop)
                wanted.append(card.card)
    probs = detector.classify_crops(np.stack(crops))
    named = [detector.classes[k] if k < len(detector.classes) else None for k in probs.argmax(axis=1)]
    right = sum(a == b for a, b in zip(named, wanted))
    print(f"\nenrolment corners named by the shipped classifier: {right} of {len(wanted)}")
    assert right >= CLASSIFIED_FLOOR * len(wanted)


def test_a_photo_without_13_cards_is_refused_by_name(suit_photos: list[tuple[str, np.ndarray, list[tuple[float, float]]]]) -> None:
    suit, photo, _ = suit_photos[3]
    with pytest.raises(EnrolError, match=r"^clubs.jpg: 6 cards found, 13 needed: lay out the clubs A to K"):
        find_cards(photo[:, :700], suit, "clubs.jpg")
    with pytest.raises(EnrolError, match=r"^blank.jpg: 0 cards found"):
        find_cards(np.full((480, 640, 3), 200, np.uint8), "S", "blank.jpg")
    with pytest.raises(EnrolError, match="suit 'X'"):
        find_cards(photo, "X", "clubs.jpg")
