"""Texts for people: English in the code, with what a page needs to say them in another language.

The scorer and the camera pipeline speak English, and the CLI and the JSON API print
that English as it is. A page in Nepali or Hindi must say the same in its own words,
so a :class:`Message` *is* its English text (a ``str``: every existing use prints,
compares and serialises it unchanged) and also keeps its ``template``, with
``%(name)s`` placeholders, and the ``params`` that fill it. :mod:`web.i18n` translates
the template and fills in the same params. Card names and player names are always
params, never part of a template, so they are never translated. A param that is itself
a Message is translated too, so a reason can be built from parts.

:func:`N_` marks a template for the catalogues (``pybabel`` extracts ``N_("...")``)
and returns it unchanged; nothing here imports Babel.

>>> error = Message(N_("'%(card)s' appears %(n)s times; %(decks)s decks have %(decks)s"), card="QS", n=4, decks=3)
>>> error
"'QS' appears 4 times; 3 decks have 3"
>>> error.template, dict(error.params)
("'%(card)s' appears %(n)s times; %(decks)s decks have %(decks)s", {'card': 'QS', 'n': 4, 'decks': 3})
>>> error == "'QS' appears 4 times; 3 decks have 3"
True
"""

from __future__ import annotations

import re
from functools import lru_cache
from types import MappingProxyType
from typing import Iterable, Mapping, Sequence

_PLACEHOLDER = re.compile(r"%\((\w+)\)s")


def N_(template: str) -> str:
    """Mark ``template`` for extraction into the catalogues; it is translated where it is shown.

    >>> N_("seen fee")
    'seen fee'
    """
    return template


class Message(str):
    """English text that remembers its ``template`` and ``params`` (see the module docstring).

    Without params the template is the text as it is (a ``%`` in it stays).

    >>> Message(N_("seen fee")).params
    mappingproxy({})
    >>> reason = Message(N_("%(reason)s; %(cards)s unmatched"), reason=Message(N_("%(n)s life"), n=1), cards="7H")
    >>> reason, reason.params["reason"].template
    ('1 life; 7H unmatched', '%(n)s life')
    """

    __slots__ = ("template", "params")
    template: str
    params: Mapping[str, object]

    def __new__(cls, template: str, /, **params: object) -> Message:
        text = template % params if params else template
        self = super().__new__(cls, text)
        self.template = template
        self.params = MappingProxyType(params)
        return self

    def __reduce__(self) -> tuple[object, ...]:
        return _rebuild, (self.template, dict(self.params))


def either(items: Sequence[object]) -> str:
    """``a or b or c`` (one item: itself), with "or" translatable.

    >>> either(["nepali", "rummy"]), either([13, 16, 21]).template, either([21])
    ('nepali or rummy', '%(first)s or %(rest)s', '21')
    """
    if len(items) < 2:
        return "".join(str(item) for item in items)
    return Message(N_("%(first)s or %(rest)s"), first=items[0], rest=either(items[1:]))


def _rebuild(template: str, params: dict[str, object]) -> Message:
    return Message(template, **params)


@lru_cache(maxsize=None)
def _pattern(template: str) -> re.Pattern[str]:
    """A regular expression that reads the params of ``template`` back out of its English."""
    parts: list[str] = []
    seen: set[str] = set()
    position = 0
    for placeholder in _PLACEHOLDER.finditer(template):
        parts.append(re.escape(template[position:placeholder.start()]))
        name = placeholder.group(1)
        parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>.+?)")
        seen.add(name)
        position = placeholder.end()
    parts.append(re.escape(template[position:]))
    return re.compile("".join(parts), re.DOTALL)


def recognise(text: str, templates: Iterable[str]) -> Message | None:
    """The Message among ``templates`` whose English is exactly ``text``, else None.

    For texts kept only as English (a ledger stores a payment's reason as text): the
    params are read back as text, and a template with more fixed words wins over a
    looser one.

    >>> templates = [N_("seen fee"), N_("maal difference: %(payee)s %(payee_maal)s, %(payer)s %(payer_maal)s")]
    >>> found = recognise("maal difference: Sita 10, Hari 2", templates)
    >>> found.template == templates[1], dict(found.params)
    (True, {'payee': 'Sita', 'payee_maal': '10', 'payer': 'Hari', 'payer_maal': '2'})
    >>> recognise("something else", templates) is None
    True
    """
    fixed = sorted(templates, key=lambda t: -len(_PLACEHOLDER.sub("", t)))
    for template in fixed:
        match = _pattern(template).fullmatch(text)
        if match is not None:
            message = Message(template, **match.groupdict())
            if message == text:
                return message
    return None


__all__ = ["Message", "N_", "either", "recognise"]
