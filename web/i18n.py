"""Translations with Flask-Babel: English in the code, Nepali and Hindi catalogues beside it.

Strings are marked with ``_()`` in Python and in templates and extracted with
``pybabel`` (``web/babel.cfg``). The catalogues live in
``web/translations/<lang>/LC_MESSAGES/tiplu.po`` with the compiled ``.mo`` committed
beside them (``pybabel compile -d web/translations -D tiplu``; a test checks they
match). The language is the footer's choice (a cookie), else the phone's
``Accept-Language``, else English. Card names (``10H``, ``JC``) are never translated.

>>> _("Ledger")
'Ledger'
>>> _("Round %(n)s", n=3)
'Round 3'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import flask_babel
from flask import Flask, has_request_context, request
from flask_babel import Babel

TRANSLATIONS = Path(__file__).with_name("translations")
DOMAIN = "tiplu"
LANGUAGE_COOKIE = "tiplu_lang"
#: Each language in its own script, for the footer's switch.
LANGUAGE_NAMES = {"en": "English", "ne": "नेपाली", "hi": "हिन्दी"}

babel = Babel(configure_jinja=False)


def available_languages() -> list[str]:
    """Languages with a compiled catalogue, plus English (the source language)."""
    found = sorted(p.parent.parent.name for p in TRANSLATIONS.glob(f"*/LC_MESSAGES/{DOMAIN}.mo"))
    return ["en", *(code for code in found if code != "en")]


def language_names() -> dict[str, str]:
    """The footer's switch: every available language, named in itself."""
    return {code: LANGUAGE_NAMES.get(code, code) for code in available_languages()}


def select_language() -> str:
    """The footer's choice (cookie), else the best ``Accept-Language`` match, else English."""
    if not has_request_context():
        return "en"
    languages = available_languages()
    chosen = request.cookies.get(LANGUAGE_COOKIE)
    if chosen in languages:
        return chosen
    return request.accept_languages.best_match(languages) or "en"


def current_language() -> str:
    """The language of this request's page, for ``<html lang>``."""
    return select_language()


def _(text: str, **values: Any) -> str:
    """Translate ``text`` for the current request, then fill ``%(name)s`` placeholders."""
    if not has_request_context():
        return text % values if values else text
    return flask_babel.gettext(text, **values)


def ngettext(singular: str, plural: str, n: int, **values: Any) -> str:
    """Plural-aware translation; ``n`` is also available as ``%(n)s``."""
    if not has_request_context():
        return (singular if n == 1 else plural) % {"n": n, **values}
    return flask_babel.ngettext(singular, plural, n, n=n, **values)


def N_(text: str) -> str:
    """Mark ``text`` for the catalogue where it is defined; it is translated where it is shown with ``_()``."""
    return text


def init_app(app: Flask) -> None:
    """Flask-Babel with the tiplu catalogues; ``_``, ``ngettext`` and the language helpers in every template."""
    babel.init_app(app, locale_selector=select_language, default_domain=DOMAIN,
                   default_translation_directories=str(TRANSLATIONS))
    app.jinja_env.globals.update(_=_, ngettext=ngettext, current_language=current_language,
                                 language_names=language_names)
