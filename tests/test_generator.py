"""The synthetic table generator: determinism, labels on the rendered corners, geometry.

These tests use the OpenCV-drawn faces only (no Debian package needed); the SVG deck test
is skipped when ``kdegames-card-data-kf5`` or ``rsvg-convert`` is missing.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter
from io import StringIO
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorer import CLASS_NAMES
from vision.training.data.decks import (Deck, DeckError, drawn_decks, installed_svg_decks, load_svg_faces, render_deck,
                                   svg_deck)
from vision.training.data.faces import CORNER_CODES, DRAWN_STYLES, FaceError, draw_face, face_from_image
from vision.training.data.generate import generate_dataset
from vision.training.data.scenes import MIN_VISIBLE, SCENE_TYPES, SceneError, render_scene
from web.cli import main
from web.cli.generate import parse_size


@pytest.fixture(scope="module")
def one_deck() -> list[Deck]:
    return drawn_decks()[:1]


def _digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != "data.yaml"}


def test_same_seed_gives_identical_files(tmp_path: Path) -> None:
    a = generate_dataset(tmp_path / "a", 4, seed=7, size=(320, 320), crop=True, decks="drawn")
    b = generate_dataset(tmp_path / "b", 4, seed=7, size=(320, 320), crop=True, decks="drawn")
    generate_dataset(tmp_path / "c", 4, seed=8, size=(320, 320), crop=True, decks="drawn")
    da, db, dc = _digest(tmp_path / "a"), _digest(tmp_path / "b"), _digest(tmp_path / "c")
    assert a.count == b.count == 4 and a.boxes == b.boxes
    assert da == db
    assert da != dc


def test_dataset_layout_and_label_lines(tmp_path: Path) -> None:
    out = tmp_path / "set"
    summary = generate_dataset(out, 5, seed=2, size=(320, 240), decks="drawn", val_fraction=0.4)
    assert (summary.train, summary.val) == (3, 2)
    assert (out / "classes.txt").read_text().split("\n")[:53] == list(CLASS_NAMES)
    yaml = (out / "data.yaml").read_text()
    assert "nc: 53" in yaml and "train: train.txt" in yaml and "  52: 'JOKER'" in yaml
    listed = (out / "train.txt").read_text().split() + (out / "val.txt").read_text().split()
    assert sorted(Path(p).name for p in listed) == sorted(p.name for p in (out / "images").iterdir())
    for label in (out / "labels").iterdir():
        geo = json.loads((out / "geometry" / f"{label.stem}.json").read_text())
        lines = label.read_text().splitlines()
        assert len(lines) == len(geo["boxes"])
        for line, box in zip(lines, geo["boxes"]):
            cls, cx, cy, w, h = line.split()
            assert 0 <= int(cls) < 53 and CLASS_NAMES[int(cls)] == box["name"]
            for v in (cx, cy, w, h):
                assert 0.0 <= float(v) <= 1.0
            x0, y0, x1, y1 = box["bbox"]
            assert float(cx) == pytest.approx((x0 + x1) / 2 / 320, abs=1e-5)
            assert float(h) == pytest.approx((y1 - y0) / 240, abs=1e-5)


def _inside(poly: np.ndarray, x: float, y: float, tol: float = 2.5) -> bool:
    return cv2.pointPolygonTest(poly.astype(np.float32), (float(x), float(y)), True) >= -tol


@pytest.mark.parametrize("scene", SCENE_TYPES)
def test_boxes_sit_on_ink_inside_their_card(scene: str, one_deck: list[Deck]) -> None:
    """On a plain background with no effects, every box holds dark/red index ink and lies
    inside the outline of the card it names."""
    rng = np.random.default_rng(11)
    r = render_scene(rng, scene, size=(800, 600), decks=one_deck, effects=False,
                     background="plain")
    assert r.labels, "a scene should show at least one corner"
    cards = {c["id"]: c for c in r.geometry["cards"]}
    paper = np.array(DRAWN_STYLES[0].paper, np.float32)
    for lab in r.labels:
        card = cards[lab.card_id]
        assert card["card"] == lab.name
        poly = np.array(card["outline"])
        assert _inside(poly, (lab.x0 + lab.x1) / 2, (lab.y0 + lab.y1) / 2, tol=0), lab
        slack = 0.5 * max(lab.x1 - lab.x0, lab.y1 - lab.y0) + 2
        for x, y in ((lab.x0, lab.y0), (lab.x1, lab.y0), (lab.x0, lab.y1), (lab.x1, lab.y1)):
            assert _inside(poly, x, y, tol=slack), (lab, card["outline"])
        patch = r.image[int(lab.y0):int(np.ceil(lab.y1)), int(lab.x0):int(np.ceil(lab.x1))]
        diff = np.abs(patch.astype(np.float32) - paper).sum(axis=2)
        assert (diff > 150).mean() > 0.08, f"box {lab} holds almost no ink"


def test_identical_copies_are_all_labelled(one_deck: list[Deck]) -> None:
    """A tunnela of three identical cards: three physical cards, each with its own tl box."""
    r = render_scene(np.random.default_rng(3), "tunnela", size=(800, 600), decks=one_deck,
                     cards=["7H"] * 3, effects=False, card_px=160)
    assert [c["card"] for c in r.geometry["cards"]] == ["7H"] * 3
    assert len({c["group"] for c in r.geometry["cards"]}) == 1
    tl_ids = {b.card_id for b in r.labels if b.corner == "tl"}
    assert tl_ids == {0, 1, 2}
    assert {b.name for b in r.labels} == {"7H"}


@pytest.mark.parametrize("scene,groups", [
    ("tunnela", [["QS"] * 3, ["2D"] * 2, ["KC"]]),
    ("meld_row", [["5H", "6H", "7H"], ["QS"] * 3, ["AD", "AC", "AS"], ["9C", "9C"]]),
    ("meld_row", [["2S", "3S", "4S"]] * 8),
])
def test_caller_given_groups_become_geometry_groups(scene: str, groups: list[list[str]],
                                                    one_deck: list[Deck]) -> None:
    r = render_scene(np.random.default_rng(21), scene, size=(1280, 960), decks=one_deck,
                     cards=groups, effects=False)
    by_group: dict[str, list[str]] = {}
    for c in r.geometry["cards"]:
        by_group.setdefault(c["group"], []).append(c["card"])
    assert sorted(by_group.values()) == sorted(groups)


def test_fixed_cards_in_order_and_single_cards_show_both_corners(one_deck: list[Deck]) -> None:
    cards = ["AS", "10D", "JOKER"]
    r = render_scene(np.random.default_rng(5), "single", size=(900, 500), decks=one_deck,
                     cards=cards, effects=False, card_px=120)
    assert [c["card"] for c in r.geometry["cards"]] == cards
    per_card = Counter(b.card_id for b in r.labels)
    assert per_card == Counter({0: 2, 1: 2, 2: 2})
    for b in r.geometry["boxes"]:
        assert b["corner"] in ("tl", "br") and b["visible"] >= MIN_VISIBLE


def test_meld_row_hides_covered_corners(one_deck: list[Deck]) -> None:
    """In an overlapped meld only the last card keeps its bottom-right index."""
    r = render_scene(np.random.default_rng(4), "meld_row", size=(900, 600), decks=one_deck,
                     cards=["5S", "6S", "7S"], effects=False, card_px=150)
    corners = {(b.card_id, b.corner) for b in r.labels}
    assert {(0, "tl"), (1, "tl"), (2, "tl"), (2, "br")} <= corners
    assert (0, "br") not in corners and (1, "br") not in corners


def test_face_down_distractors_get_no_boxes(one_deck: list[Deck]) -> None:
    """Piles of face-down cards occlude cards like any card but are never labelled."""
    seen_backs = 0
    for seed in range(12):
        r = render_scene(np.random.default_rng(seed), "meld_row", size=(480, 360), decks=one_deck,
                         effects=False, distractors=True)
        backs = {b["id"] for b in r.geometry["backs"]}
        seen_backs += len(backs)
        assert all(b["card"] == "BACK" for b in r.geometry["backs"])
        assert not backs & {c["id"] for c in r.geometry["cards"]}
        assert not backs & {lab.card_id for lab in r.labels}
    assert seen_backs > 0


def test_printed_words_get_no_boxes_and_share_0_leaves_a_seed_as_it_was(one_deck: list[Deck]) -> None:
    """Words on the table (``words=1``) change the picture, never the labels; ``words=0`` draws
    nothing from the generator, so the campaign's data sets are made again exactly."""
    kw = dict(size=(480, 360), decks=one_deck, effects=True, distractors=True, randomise=True, card_px=90.0)
    for seed in range(4):
        plain = render_scene(np.random.default_rng(seed), "meld_row", **kw)  # type: ignore[arg-type]
        again = render_scene(np.random.default_rng(seed), "meld_row", words=0.0, **kw)  # type: ignore[arg-type]
        worded = render_scene(np.random.default_rng(seed), "meld_row", words=1.0, **kw)  # type: ignore[arg-type]
        assert np.array_equal(plain.image, again.image)
        assert not np.array_equal(plain.image, worded.image)
        assert [lab.name for lab in worded.labels] == [lab.name for lab in plain.labels]


def test_cli_words_share_must_be_a_share(tmp_path: Path) -> None:
    err = StringIO()
    assert main(["generate", str(tmp_path / "bad"), "--words", "1.5"], stdout=StringIO(), stderr=err) == 2
    assert "words is a share of the scenes, from 0 to 1; got 1.5" in err.getvalue()


@pytest.mark.parametrize("threshold,expect_fewer", [(0.95, True), (0.3, False)])
def test_visibility_threshold_changes_labels(threshold: float, expect_fewer: bool,
                                             one_deck: list[Deck]) -> None:
    kw = dict(size=(640, 640), decks=one_deck, crop=True, card_px=120)
    base = render_scene(np.random.default_rng(9), "fan", **kw)
    other = render_scene(np.random.default_rng(9), "fan", min_visible=threshold, **kw)
    assert np.array_equal(base.image, other.image)
    if expect_fewer:
        assert len(other.labels) <= len(base.labels)
        assert all(b.visible >= threshold for b in other.labels)
    else:
        assert len(other.labels) >= len(base.labels)


@pytest.mark.parametrize("card", ["AS", "10H", "QD", "7C", "JOKER"])
def test_drawn_face_index_boxes_hold_the_ink(card: str) -> None:
    face = draw_face(card)
    for corner, (x0, y0, x1, y1) in face.boxes.items():
        ink = face.ink == CORNER_CODES[corner]
        ys, xs = np.nonzero(ink)
        assert (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1) == (x0, y0, x1, y1)
    w, h = face.size
    assert face.index_br == (w - face.index_tl[2], h - face.index_tl[3],
                             w - face.index_tl[0], h - face.index_tl[1])


def test_index_finder_recovers_a_drawn_index() -> None:
    face = draw_face("9S")
    found = face_from_image("9S", "probe", face.image)
    for got, want in ((found.index_tl, face.index_tl), (found.index_br, face.index_br)):
        assert np.allclose(got, want, atol=3), (got, want)


@pytest.mark.parametrize("bad", [("XS", FaceError), ("", FaceError)])
def test_bad_card_names_are_refused(bad: tuple[str, type]) -> None:
    with pytest.raises(bad[1]):
        draw_face(bad[0])


def test_bad_requests_raise_scene_errors(one_deck: list[Deck]) -> None:
    with pytest.raises(SceneError, match="unknown scene"):
        render_scene(np.random.default_rng(0), "poker", decks=one_deck)
    with pytest.raises(SceneError, match="too small"):
        render_scene(np.random.default_rng(0), "single", size=(10, 10), decks=one_deck)


@pytest.mark.parametrize("text,size", [("1280x960", (1280, 960)), ("640", (640, 640))])
def test_parse_size(text: str, size: tuple[int, int]) -> None:
    assert parse_size(text) == size


def test_cli_run_writes_a_dataset(tmp_path: Path) -> None:
    out = StringIO()
    assert main(["generate", str(tmp_path / "cli"), "--count", "2", "--seed", "1", "--size", "256x192",
                 "--decks", "drawn"], stdout=out) == 0
    assert len(list((tmp_path / "cli" / "labels").iterdir())) == 2
    assert json.loads(out.getvalue())["count"] == 2


def test_cli_randomised_procedural_scenes(tmp_path: Path) -> None:
    """``--randomise --procedural 1`` (the campaign's data commands): every scene lays cards of a
    fresh procedural design, turned well beyond the upright range of plain scenes."""
    out = StringIO()
    assert main(["generate", str(tmp_path / "dr"), "--count", "3", "--seed", "3", "--crop", "--randomise",
                 "--procedural", "1"], stdout=out) == 0
    scenes = [json.loads(path.read_text())["cards"] for path in sorted((tmp_path / "dr" / "geometry").iterdir())]
    assert len(scenes) == 3 and all(any(card["deck"].startswith("proc-") for card in cards) for cards in scenes)
    assert max(abs(card["angle"]) for cards in scenes for card in cards) > 45


def test_cli_procedural_share_must_be_a_share(tmp_path: Path) -> None:
    err = StringIO()
    assert main(["generate", str(tmp_path / "bad"), "--procedural", "1.5"], stdout=StringIO(), stderr=err) == 2
    assert "procedural is a share of the scenes, from 0 to 1; got 1.5" in err.getvalue()


@pytest.mark.skipif(not installed_svg_decks(), reason="SVG card decks or rsvg-convert missing")
def test_a_rendered_deck_is_used_without_its_package(tmp_path: Path) -> None:
    """A machine without the SVG packages (the GPU machine) uses the face cache carried to it."""
    installed = svg_deck("standard")
    render_deck(installed, tmp_path)
    elsewhere = dataclasses.replace(installed, path=tmp_path / "not-installed.svgz")
    assert elsewhere.cached(tmp_path) and not elsewhere.available
    assert len(load_svg_faces(elsewhere, tmp_path)) == len(load_svg_faces(installed, tmp_path))
    with pytest.raises(DeckError, match="install the kdegames-card-data-kf5 package"):
        render_deck(elsewhere, tmp_path / "empty-cache")


@pytest.mark.skipif(not installed_svg_decks(), reason="SVG card decks or rsvg-convert missing")
def test_svg_deck_faces_have_tight_indices(tmp_path: Path) -> None:
    faces = load_svg_faces(svg_deck("standard"), tmp_path)
    assert len(faces) == 52
    for face in faces.values():
        w, h = face.size
        x0, y0, x1, y1 = face.index_tl
        assert x1 < 0.25 * w and y1 < 0.45 * h and (x1 - x0) > 0.04 * w


# --------------------------------------------------------------------------- domain randomisation

from vision.training.data import effects, procedural  # noqa: E402


@pytest.mark.parametrize("layout", procedural.LAYOUTS)
def test_procedural_index_boxes_hold_the_ink_in_every_layout(layout: str) -> None:
    """Each index box (four on four-index decks) holds exactly its ink, in the palette's ink colour."""
    style = procedural.ProceduralStyle(procedural.palette("white-on-navy"),
                                       procedural.font_files()[0] if procedural.font_files() else "hershey:1",
                                       layout=layout)
    face = procedural.procedural_face("10D", style)
    assert set(face.boxes) == ({"tl", "br", "tr", "bl"} if layout == "four" else {"tl", "br"})
    for corner, (x0, y0, x1, y1) in face.boxes.items():
        ink = face.ink == CORNER_CODES[corner]
        ys, xs = np.nonzero(ink)
        assert (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1) == (x0, y0, x1, y1)
        glyph = face.image[..., :3][ink & (face.image[..., 3] > 200)].astype(float).mean(axis=0)
        paper = np.array(style.palette.paper, float)
        assert glyph.sum() > paper.sum() + 150, "light ink on dark stock"
    tl, br = face.boxes["tl"], face.boxes["br"]
    assert tl[0] < face.size[0] / 2 < br[0] and tl[1] < face.size[1] / 2 < br[1]


def test_training_designs_never_draw_a_held_out_palette_or_font() -> None:
    rng = np.random.default_rng(0)
    styles = [procedural.random_style(rng) for _ in range(400)]
    assert not any(s.held_out for s in styles)
    assert {s.layout for s in styles} == set(procedural.LAYOUTS)
    assert {s.palette.light_on_dark for s in styles} == {True, False}
    assert len({s.name for s in styles}) > 300, "designs by the hundred, not a handful"
    assert all(s.held_out for s in procedural.HELD_OUT_STYLES.values())
    held = procedural.held_out_decks()["proc-gold-on-black"]
    assert held.face("KS") is not None and held.face("KS").deck == "proc-gold-on-black"


def test_randomised_scene_labels_sit_on_cards_at_any_angle() -> None:
    """Domain-randomised scenes of procedural designs: every box inside its card's outline,
    and cards turned all round the circle."""
    deck = procedural.random_decks(np.random.default_rng(1), 1)
    angles = []
    for i in range(6):
        r = render_scene(np.random.default_rng([5, i]), "maal_spread", size=(640, 480), decks=deck,
                         randomise=True)
        cards = {c["id"]: c for c in r.geometry["cards"]}
        angles += [c["angle"] for c in cards.values()]
        for lab in r.labels:
            poly = np.array(cards[lab.card_id]["outline"])
            assert _inside(poly, (lab.x0 + lab.x1) / 2, (lab.y0 + lab.y1) / 2, tol=1.0), lab
    hist = np.histogram(np.mod(angles, 360), bins=4, range=(0, 360))[0]
    assert (hist > 0).all(), hist


def test_camera_effects_and_distractors() -> None:
    rng = np.random.default_rng(2)
    img = np.full((100, 120, 3), 128, np.uint8)
    noisy = effects.salt_and_pepper(img, rng, amount=0.1)
    changed = (noisy != 128).any(axis=2).mean()
    assert 0.07 < changed < 0.13 and set(np.unique(noisy)) == {0, 128, 255}
    dim = effects.low_light(img, rng)
    assert dim.mean() < img.mean()
    frame = effects.webcam(np.random.default_rng(3).integers(0, 255, (100, 120, 3), dtype=np.uint8), rng)
    assert frame.shape == img.shape
    table = img.copy()
    effects.draw_distractors(rng, table, 40.0, count=4)
    assert (table != 128).any()


@given(seed=st.integers(0, 2**32 - 1))
def test_random_palettes_never_come_near_a_held_out_one(seed: int) -> None:
    """A random palette differs from every held-out palette by at least the margin in some colour."""
    rng = np.random.default_rng(seed)
    for _ in range(5):
        p = procedural.random_palette(rng)
        assert not p.held_out and p.name.startswith("random-")
        for q in (q for q in procedural.PALETTES if q.held_out):
            colours = [(p.paper, q.paper), (p.spades, q.spades), (p.hearts, q.hearts), (p.diamonds, q.diamonds),
                       (p.clubs, q.clubs)]
            assert any(max(abs(a - b) for a, b in zip(mine, theirs)) >= procedural.HELD_OUT_MARGIN
                       for mine, theirs in colours)


def test_random_palettes_ink_suits_alike_or_apart() -> None:
    """One, two or four inks, light on dark and dark on light, and no random draw when the share is 0
    (the campaign's earlier data sets are made again exactly)."""
    rng = np.random.default_rng(11)
    palettes = [procedural.random_palette(rng) for _ in range(200)]
    inks = {len({p.spades, p.hearts, p.diamonds, p.clubs}) for p in palettes}
    assert inks == {1, 2, 4} and {p.light_on_dark for p in palettes} == {True, False}
    assert procedural.random_style(np.random.default_rng(3), 0.0) == procedural.random_style(np.random.default_rng(3))
    assert procedural.random_style(np.random.default_rng(3), 1.0).palette.name.startswith("random-")


def test_cli_random_palettes_share_must_be_a_share(tmp_path: Path) -> None:
    err = StringIO()
    assert main(["generate", str(tmp_path / "bad"), "--procedural", "1", "--random-palettes", "2"],
                stdout=StringIO(), stderr=err) == 2
    assert "random palettes are a share of the designs, from 0 to 1; got 2" in err.getvalue()


def test_generate_with_procedural_designs_is_reproducible(tmp_path: Path) -> None:
    kw = dict(size=(320, 320), crop=True, decks="drawn", randomise=True, procedural=1.0)
    generate_dataset(tmp_path / "a", 3, seed=4, **kw)  # type: ignore[arg-type]
    generate_dataset(tmp_path / "b", 3, seed=4, **kw)  # type: ignore[arg-type]
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")
    decks = {json.loads(p.read_text())["cards"][0]["deck"] for p in (tmp_path / "a" / "geometry").glob("*.json")
             if json.loads(p.read_text())["cards"]}
    assert any(d.startswith("proc-") for d in decks), decks


def test_procedural_faces_are_the_same_in_every_process() -> None:
    """Python's str hash differs per process; a design must not."""
    import os
    import subprocess
    import sys
    code = ("import hashlib; from vision.training.data.procedural import held_out_decks; "
            "print(hashlib.sha256(held_out_decks()['proc-gold-on-black'].face('QH').image.tobytes()).hexdigest())")
    digests = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                              env=os.environ | {"PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert len(digests) == 1
