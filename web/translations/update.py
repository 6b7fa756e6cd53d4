"""Rebuild the catalogues: extract every marked string, add the rule registry's texts, update ne and hi, compile.

Run from the repository root after changing any user-facing text::

    python web/translations/update.py

Strings come from ``_()``/``N_()``/``ngettext()``/``plural_forms()`` in ``web/``, ``scorer/`` and
``vision/`` and the templates (``web/babel.cfg``), plus each rule family's title, description, option help and
word choices from :data:`scorer.RULE_FAMILIES` (the pages show those through
``_()``). New strings arrive in ``ne`` and ``hi`` untranslated; the compiled
``.mo`` files are committed so that nothing runs at install time.
"""

from __future__ import annotations

import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
DOMAIN = "tiplu"
LANGUAGES = ("ne", "hi")
KEYWORDS = {"_": None, "N_": None, "gettext": None, "ngettext": (1, 2), "plural_forms": (1, 2)}


def registry_texts() -> list[str]:
    """The words of the rule registry that the pages show: titles, descriptions, option help, choices."""
    sys.path.insert(0, str(ROOT))
    from scorer import RULE_FAMILIES
    texts: list[str] = []
    for family in RULE_FAMILIES.values():
        texts += [family.title, family.description]
        for spec in family.options:
            texts.append(spec.help)
            texts += [c for c in spec.choices or () if isinstance(c, str)]
    return list(dict.fromkeys(texts))


def template() -> Catalog:
    """Every string to translate, as a fresh template catalogue."""
    with open(ROOT / "web" / "babel.cfg", encoding="utf-8") as config:
        method_map, options_map = parse_mapping_cfg(config)
    catalog = Catalog(project="tiplu", domain=DOMAIN, charset="utf-8")
    for _file, _line, message, comments, _context in extract_from_dir(
            str(ROOT), method_map, options_map, keywords=KEYWORDS, strip_comment_tags=True):
        catalog.add(message, None, auto_comments=comments)
    for text in registry_texts():
        if text not in catalog:
            catalog.add(text, None, auto_comments=["from the rule registry (scorer.RULE_FAMILIES)"])
    return catalog


def main() -> None:
    pot = template()
    with open(HERE / f"{DOMAIN}.pot", "wb") as out:
        write_po(out, pot, omit_header=False, no_location=True, sort_output=True, width=100)
    for language in LANGUAGES:
        po_path = HERE / language / "LC_MESSAGES" / f"{DOMAIN}.po"
        po_path.parent.mkdir(parents=True, exist_ok=True)
        if po_path.exists():
            with open(po_path, "rb") as source:
                catalog = read_po(source, locale=language, domain=DOMAIN)
        else:
            catalog = Catalog(locale=language, domain=DOMAIN, project="tiplu", charset="utf-8")
        catalog.update(pot, no_fuzzy_matching=True)
        with open(po_path, "wb") as out:
            write_po(out, catalog, no_location=True, sort_output=True, width=100, ignore_obsolete=True)
        with open(po_path.with_suffix(".mo"), "wb") as out:
            write_mo(out, catalog)


if __name__ == "__main__":
    main()
