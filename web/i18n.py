"""A tiny gettext wrapper so every user-facing string can be translated later.

Strings are marked with ``_()`` in Python and in templates. Translations are
standard gettext catalogues in ``web/translations/<lang>/LC_MESSAGES/tiplu.mo``;
none ship yet, so ``_()`` returns the English text. The language comes from the
request's ``Accept-Language`` header.

>>> _("Ledger")
'Ledger'
>>> _("Round %(n)s", n=3)
'Round 3'
"""

from __future__ import annotations

import gettext
from functools import lru_cache
from pathlib import Path
from typing import Any

from flask import Flask, has_request_context, request

TRANSLATIONS = Path(__file__).with_name("translations")
DOMAIN = "tiplu"


def available_languages() -> list[str]:
    """Languages with a compiled catalogue, plus English (the source language)."""
    found = sorted(p.parent.parent.name for p in TRANSLATIONS.glob(f"*/LC_MESSAGES/{DOMAIN}.mo"))
    return ["en", *found]


@lru_cache(maxsize=32)
def _catalogue(language: str) -> gettext.NullTranslations:
    return gettext.translation(DOMAIN, TRANSLATIONS, languages=[language], fallback=True)


def current_language() -> str:
    if not has_request_context():
        return "en"
    best = request.accept_languages.best_match(available_languages())
    return best or "en"


def _(text: str, **values: Any) -> str:
    """Translate ``text`` for the current request, then fill ``%(name)s`` placeholders."""
    translated = _catalogue(current_language()).gettext(text)
    return translated % values if values else translated


def ngettext(singular: str, plural: str, n: int, **values: Any) -> str:
    """Plural-aware translation; ``n`` is also available as ``%(n)s``."""
    translated = _catalogue(current_language()).ngettext(singular, plural, n)
    return translated % {"n": n, **values}


def init_app(app: Flask) -> None:
    """Make ``_``, ``ngettext`` and ``current_language`` available in every template."""
    app.jinja_env.globals.update(_=_, ngettext=ngettext, current_language=current_language)
