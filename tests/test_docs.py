"""The documents stay for their readers (CONTRIBUTING.md): short where they are read first, and no history in code.

The model card describes the shipped version only, the README's camera section is for a family,
and which session, round of work or version measured what lives in the git log and
``models/HISTORY.md``, never in the code's docstrings and comments.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: The packages whose code must carry no history notes.
CODE = ("scorer", "vision", "web")
#: "session 21", "sessions 8-10", "round of work 3". Game sessions in examples are written without a number
#: ("no such session"); a game's or a learner's "round 3 of 12" is no history.
HISTORY_NOTE = re.compile(r"\b[Ss]essions? \d+|(?<![-\w])rounds? of work \d+")
#: A version tag of the model ("v0.8", "since v0.8.6").
VERSION_TAG = re.compile(r"\bv0\.\d")
#: Modules that must name old ``model.json`` formats (to read enrolled decks of older versions) and so may
#: write version tags; paths relative to the repository root, e.g. ``"vision/settings.py"``.
VERSION_TAGS_ALLOWED: frozenset[str] = frozenset()


def section(text: str, heading: str) -> list[str]:
    """The lines of a ``## `` section, from its heading to the next one.

    >>> section("# T\\n## A\\none\\n\\n## B\\ntwo\\n", "## A")
    ['## A', 'one', '']
    """
    lines = text.split("\n")
    start = lines.index(heading)
    end = next((k for k in range(start + 1, len(lines)) if lines[k].startswith("## ")), len(lines))
    return lines[start:end]


def notes_in(text: str, allow_versions: bool = False) -> list[tuple[int, str]]:
    """(line number, line) of every line of ``text`` that says which session, round or version measured something.

    >>> notes_in("Chosen in session 16 on 150 scenes.\\n--rounds 100, no such session.\\nSince v0.8 it faces.")
    [(1, 'Chosen in session 16 on 150 scenes.'), (3, 'Since v0.8 it faces.')]
    >>> notes_in("Since v0.8 it faces.", allow_versions=True)
    []
    """
    return [(number, line.strip()) for number, line in enumerate(text.split("\n"), 1)
            if HISTORY_NOTE.search(line) or (not allow_versions and VERSION_TAG.search(line))]


def test_the_model_card_is_at_most_200_lines() -> None:
    lines = (ROOT / "models" / "README.md").read_text(encoding="utf-8").rstrip("\n").split("\n")
    assert len(lines) <= 200, f"models/README.md has {len(lines)} lines: move the history to models/HISTORY.md"


def test_the_readme_camera_section_is_at_most_60_lines() -> None:
    camera = section((ROOT / "README.md").read_text(encoding="utf-8"), "## The camera")
    while camera and not camera[-1].strip():
        camera.pop()
    assert len(camera) <= 60, f"the README's camera section has {len(camera)} lines: details go to docs/camera.md"
    assert "docs/camera.md" in "\n".join(camera)


def test_contributing_states_the_commit_subject_limit() -> None:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert re.search(r"subject is at most 72 characters", text)


def test_no_history_notes_in_code() -> None:
    found = []
    for package in CODE:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            found += [f"{name}:{number}: {line}"
                      for number, line in notes_in(path.read_text(encoding="utf-8"), name in VERSION_TAGS_ALLOWED)]
    assert not found, "which session, round or version measured what goes to the git log or models/HISTORY.md:\n" \
        + "\n".join(found)
