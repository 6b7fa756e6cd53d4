"""Translations with Flask-Babel: English in the code, Nepali and Hindi catalogues beside it.

Strings are marked with ``_()`` in Python and in templates and extracted with
``pybabel`` (``web/babel.cfg``). The catalogues live in
``web/translations/<lang>/LC_MESSAGES/tiplu.po`` with the compiled ``.mo`` committed
beside them (``pybabel compile -d web/translations -D tiplu``; a test checks they
match). The language is the footer's choice (a cookie), else the phone's
``Accept-Language``, else English. Card names (``10H``, ``JC``) are never translated.

Texts from the scorer and the camera pipeline are :class:`scorer.Message` values
(English that keeps its template and params); :func:`translate` says them in the
page's language, here at the edge: templates, error answers and the pages' JSON
(:func:`localized`). The API under ``/api/`` translates its error texts like its own
and answers data in English.

>>> _("Ledger")
'Ledger'
>>> _("Round %(n)s", n=3)
'Round 3'
>>> translate(Message(N_("only %(n)s dublees, %(needed)s needed"), n=6, needed=8))
'only 6 dublees, 8 needed'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import flask_babel
from flask import Flask, has_request_context, request
from flask_babel import Babel

from scorer import N_, Message, TipluError, recognise
from scorer.maal import LABELS
from scorer.payments import EVENING
from scorer.settle import REASONS

TRANSLATIONS = Path(__file__).with_name("translations")
DOMAIN = "tiplu"
LANGUAGE_COOKIE = "tiplu_lang"
#: Each language in its own script, for the footer's switch.
LANGUAGE_NAMES = {"en": "English", "ne": "नेपाली", "hi": "हिन्दी"}

babel = Babel(configure_jinja=False)

#: Scorer texts a ledger keeps only as English (payment and house-rule reasons, maal labels):
#: :func:`translate` recognises them among these templates.
STORED_TEXTS: tuple[str, ...] = (*REASONS, *LABELS, EVENING)


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


def plural_forms(singular: str, plural: str) -> dict[str, str]:
    """A count's sentence in the page's language for a script that learns the count later.

    The script gets the form for 1, for 0 and for any other count, each with ``%(n)s``
    written as ``%n`` for it to fill, so "1 card" and "2 cards" read right in every
    catalogue: Hindi says 0 like 1, Nepali and English like 2.

    >>> plural_forms("%(n)s card", "%(n)s cards")
    {'one': '%n card', 'zero': '%n cards', 'other': '%n cards'}
    """
    def form(n: int) -> str:
        template = (flask_babel.get_translations().ngettext(singular, plural, n) if has_request_context()
                    else (singular if n == 1 else plural))
        return template.replace("%(n)s", "%n")
    return {"one": form(1), "zero": form(0), "other": form(2)}


def translate(text: object) -> str:
    """A text from the scorer or the camera pipeline, in the request's language.

    A :class:`scorer.Message` (or a :class:`scorer.TipluError`, by its message) is
    translated by its template, then filled with its params; a param that is itself
    a Message is translated too, and card and player names, being params, stay as
    they are. Plain text a ledger stored (:data:`STORED_TEXTS`) is recognised first;
    any other text is shown as it is. Without a request (or in English) this is the
    English, exactly.

    >>> translate("maal difference: Sita 10, Hari 2"), translate("Anything")
    ('maal difference: Sita 10, Hari 2', 'Anything')
    """
    message = text.message if isinstance(text, TipluError) else text
    if not isinstance(message, Message):
        message = recognise(message, STORED_TEXTS) if isinstance(message, str) else None
        if message is None:
            return str(text)
    template = flask_babel.gettext(message.template) if has_request_context() else message.template
    if not message.params:
        return template
    return template % {name: translate(value) if isinstance(value, Message) else value
                       for name, value in message.params.items()}


def localized(data: Any) -> Any:
    """``data`` (JSON-shaped: dicts, lists, text) with every :class:`scorer.Message` in it translated.

    For the JSON the pages' own scripts show (a verdict's reason, maal labels, doubts);
    other text, such as card names and keys, is left alone.

    >>> localized({"reason": Message(N_("seen fee")), "cards": ["10H"]})
    {'reason': 'seen fee', 'cards': ['10H']}
    """
    if isinstance(data, Message):
        return translate(data)
    if isinstance(data, dict):
        return {key: localized(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [localized(value) for value in data]
    return data


def init_app(app: Flask) -> None:
    """Flask-Babel with the tiplu catalogues; ``_``, ``ngettext`` and the language helpers in every template."""
    babel.init_app(app, locale_selector=select_language, default_domain=DOMAIN,
                   default_translation_directories=str(TRANSLATIONS))
    app.jinja_env.globals.update(_=_, ngettext=ngettext, plural_forms=plural_forms, translate=translate,
                                 current_language=current_language,
                                 language_names=language_names)
