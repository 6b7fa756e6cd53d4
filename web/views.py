"""The pages people use at the table: sessions, round entry, results, ledger, history, end.

Forms post plain fields; :mod:`web.payloads` turns them into the same payload
the JSON API takes, so a round typed on a phone and a round posted by a script
go through the very same checks and the same scorer. The JSON that these pages'
scripts fetch is served by :mod:`web.api`.

Example: ``GET /sessions/new`` shows the new-session form with every house-rule
option of every family, generated from :data:`scorer.RULE_FAMILIES`.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import segno

from flask import Blueprint, Response, abort, current_app, flash, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue
from werkzeug.datastructures import MultiDict

from scorer import ALL_FACES, RULE_FAMILIES
from scorer.kinds import Scoring, WildSource
from scorer.maal import plausible_maal
from scorer.payments import PairLine, evening_net, fewest_payments, net_pairs, read_settlement
from scorer.settle import Payment
from scorer.rules import DEFAULT_FAMILY
from web import corrections, decks, ledger, payloads, photos
from web.api import sent_round
from web.bounds import maal_limit, parse_digits, penalty_limit
from web.camera import camera_for
from web.db import get_db
from web.errors import (USER_ERRORS, BadRequest, Conflict, KeyReused, NotFound, StaleRound, error_response,
                        status_of)
from web.i18n import LANGUAGE_COOKIE, N_, _, available_languages, current_language, ngettext, translate
from web.payloads import MAX_SEATS
from web.security import code_exempt, code_link, is_table_code, list_devices, safe_next, set_code_cookie, table_code_ok
from web.security import revoke_device as revoke_device_of, set_device_revoked
from web.network import is_loopback_host, lan_addresses

bp = Blueprint("views", __name__)

SUIT_SYMBOL = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
#: What a screen reader says for each suit button of the card grid.
SUIT_NAMES = {"S": N_("spades"), "H": N_("hearts"), "D": N_("diamonds"), "C": N_("clubs")}


def card_faces() -> list[dict[str, str]]:
    """The 53 faces as the card grid shows them: value, rank label, suit symbol and colour."""
    faces = []
    for card in ALL_FACES:
        if card.is_joker:
            faces.append({"value": "JOKER", "rank": "JK", "suit": "★", "colour": "joker"})
        else:
            faces.append({"value": str(card), "rank": card.rank_name, "suit": SUIT_SYMBOL[card.suit],
                          "colour": "red" if card.is_red else "black"})
    return faces


def card_ranks() -> list[str]:
    """The 13 ranks in order, as the card picker offers them before the suit.

    >>> card_ranks()[:3], card_ranks()[-1]
    (['A', '2', '3'], 'K')
    """
    return list(dict.fromkeys(card.rank_name for card in ALL_FACES if not card.is_joker))


#: Each rule family by the name a family at the table calls it (the registry's key is for the API).
RULE_NAMES: Mapping[str, str] = {"nepali": N_("Nepali Marriage"), "rummy": N_("Marriage rummy")}
#: What a kept photo shows, by its upload purpose (web.photos.PURPOSES), as its caption says it.
PHOTO_PURPOSES: Mapping[str, str] = {"hand": N_("declared hand"), "maal": N_("maal cards"), "tiplu": N_("tiplu"),
                                     "turned": N_("turned card"), "penalty": N_("cards left in hand")}


def rules_name(family: str) -> str:
    """A rule family in the page's language (its registry key, ``nepali``, is never shown)."""
    if family in RULE_NAMES:
        return _(RULE_NAMES[family])
    known = RULE_FAMILIES.get(family)
    return _(known.title) if known else family


def photo_purpose(purpose: str) -> str:
    """What a kept photo shows, in the page's language."""
    return _(PHOTO_PURPOSES[purpose]) if purpose in PHOTO_PURPOSES else purpose


def source_name(source: str) -> str:
    """Where a change came from, as History says it: "phone or browser · 192.168.1.23", "this computer".

    The audit trail stores ``web 127.0.0.1``, ``api 10.0.0.5`` or ``demo``.
    """
    kind, _space, address = source.partition(" ")
    kinds = {"web": _("phone or browser"), "api": _("API"), "demo": _("demo")}
    shown_kind = kinds.get(kind, kind)
    if not address:
        return shown_kind
    where = _("this computer") if is_loopback_host(address) else address
    return f"{shown_kind} · {where}"


def money(points: int, rate: Mapping[str, Any] | None) -> str:
    """``points`` in the session's money, as settle-up shows it beside them: "Rs 60", "₹60", "" without a rate.

    Only display: the points stay the score, and the rate multiplies them here, never in a script.

    >>> money(6, {"per_point": 10, "currency": "Rs"}), money(3, {"per_point": 2.5, "currency": "₹"})
    ('Rs 60', '₹7.50')
    >>> money(6, None), money(2, {"per_point": 1, "currency": ""})
    ('', '2 in money')
    """
    chosen = payloads.session_rate(rate)
    if chosen is None:
        return ""
    amount = chosen.amount(points)
    if not chosen.currency:
        return _("%(amount)s in money", amount=amount)
    if len(chosen.currency) == 1 and not chosen.currency.isalnum():
        return f"{chosen.currency}{amount}"
    return _("%(currency)s %(amount)s", currency=chosen.currency, amount=amount)


def payment_line(payer: str, payee: str, points: int, rate: Mapping[str, Any] | None) -> str:
    """One payment in words, with its money when the session has a rate: "Hari pays Sita 6 points (Rs 60)".

    The round page and the End page say a payment the same way (one sentence, so no
    layout can glue the money to the points).

    >>> payment_line("Hari", "Sita", 6, {"per_point": 10, "currency": "Rs"}), payment_line("Hari", "Sita", 6, None)
    ('Hari pays Sita 6 points (Rs 60)', 'Hari pays Sita 6')
    """
    if payloads.session_rate(rate) is None:
        return _("%(payer)s pays %(payee)s %(points)s", payer=payer, payee=payee, points=points)
    return ngettext("%(payer)s pays %(payee)s %(n)s point (%(money)s)", "%(payer)s pays %(payee)s %(n)s points (%(money)s)",
                    points, payer=payer, payee=payee, money=money(points, rate))


#: How to install the train extra from the project folder (the Quick start's virtualenv).
TRAIN_INSTALL = ".venv/bin/pip install -e '.[train]'"


def train_hint(missing: str | None) -> str | None:
    """What the Decks page says when learning a deck cannot start here (``missing``: why, from the learner).

    A family reads it on a phone: the command to run in the project folder, and that it is a
    large download.

    >>> train_hint(None) is None, TRAIN_INSTALL in (train_hint("torch is missing") or "")
    (True, True)
    """
    if missing is None:
        return None
    return _("Teaching a deck needs the train extra, a few GB to download (PyTorch). In the tiplu folder, run: "
             "%(command)s", command=TRAIN_INSTALL)


@bp.app_context_processor
def template_helpers() -> dict[str, Any]:
    return {"card_faces": card_faces, "card_ranks": card_ranks, "suit_symbol": SUIT_SYMBOL, "rule_families": RULE_FAMILIES,
            "rules_name": rules_name, "photo_purpose": photo_purpose, "source_name": source_name, "money": money,
            "payment_line": payment_line, "suit_names": SUIT_NAMES,
            "Scoring": Scoring, "WildSource": WildSource,
            "needs_code": not table_code_ok(), "has_camera": lambda: camera_for(current_app) is not None}


def source() -> str:
    return f"web {request.remote_addr or ''}".strip()


@bp.get("/")
def index() -> str:
    db = get_db()
    return render_template("index.html", sessions=ledger.list_sessions(db), deleted=ledger.deleted_sessions(db))


#: The session form's money fields, by the key a rate message starts with ("rate.per_point: -1 is below 0").
RATE_FORM_FIELDS: Mapping[str, tuple[str, str]] = {
    "rate": ("rate_per_point", N_("Money per point")), "rate.per_point": ("rate_per_point", N_("Money per point")),
    "rate.currency": ("rate_currency", N_("Currency"))}


def session_form_errors(message: str) -> tuple[str | None, dict[str, str]]:
    """A session form's error: at the top, or under the money field it names, in plain words.

    >>> session_form_errors("rate.per_point: -1 is below 0")
    (None, {'rate_per_point': 'Money per point: -1 is below 0'})
    >>> session_form_errors("title: write it as text")
    ('title: write it as text', {})
    """
    match = re.match(r"(rate(?:\.per_point|\.currency)?): (.*)", message, re.S)
    if not match:
        return message, {}
    field, label = RATE_FORM_FIELDS[match.group(1)]
    return None, {field: f"{_(label)}: {match.group(2)}"}


@bp.route("/sessions/new", methods=["GET", "POST"])
def new_session() -> ResponseReturnValue:
    error: str | None = None
    field_errors: dict[str, str] = {}
    if request.method == "POST":
        try:
            new = payloads.new_session(payloads.session_form(request.form))
            decks.check_deck(new.deck)
            session_id = ledger.create_session(get_db(), new, source=source())
        except USER_ERRORS as exc:
            error, field_errors = session_form_errors(translate(exc))
        else:
            return redirect(url_for("views.session_page", session_id=session_id))
    status = 400 if error or field_errors else 200
    return render_template("session_new.html", error=error, field_errors=field_errors, form=request.form,
                           max_seats=MAX_SEATS, default_family=DEFAULT_FAMILY,
                           decks=decks.list_decks(decks.decks_folder())), status


def settings_form(session: Mapping[str, Any]) -> MultiDict[str, str]:
    """A stored session as new-session form fields, to prefill the settings form."""
    values: MultiDict[str, str] = MultiDict({"rules": session["rules"], "title": session["title"] or "",
                                             "rounds_planned": str(session["rounds_planned"] or ""),
                                             "deck": session["deck"] or payloads.STANDARD_DECK})
    chosen = payloads.session_rate(session.get("rate"))
    if chosen is not None:
        values["rate_per_point"], values["rate_currency"] = chosen.amount(1), chosen.currency
    for seat, name in enumerate(session["players"]):
        values[f"player{seat}"] = name
    for spec in RULE_FAMILIES[session["rules"]].options:
        value = session["options"][spec.name]
        key = f"opt_{session['rules']}_{spec.name}"
        if spec.kind != "bool":
            values[key] = str(value)
        elif value:
            values[key] = "on"
    return values


@bp.route("/sessions/<session:session_id>/settings", methods=["GET", "POST"])
def session_settings(session_id: int) -> ResponseReturnValue:
    """Change the title and agreed rounds any time; players and rules only before the first round."""
    db = get_db()
    session = ledger.get_session(db, session_id)
    error: str | None = None
    field_errors: dict[str, str] = {}
    form: Mapping[str, str] = settings_form(session)
    if request.method == "POST":
        form = request.form
        try:
            changes = payloads.session_changes(
                payloads.plan_form(form) if session["options_locked"] else payloads.session_form(form))
            decks.check_deck(changes.deck)
            ledger.update_session(db, session["id"], changes, source=source())
        except USER_ERRORS as exc:
            error, field_errors = session_form_errors(translate(exc))
        else:
            flash(_("Settings saved."))
            return redirect(url_for("views.session_page", session_id=session["id"]))
    return render_template("session_new.html", error=error, field_errors=field_errors, form=form,
                           max_seats=MAX_SEATS, default_family=session["rules"], session=session, edit=session,
                           decks=decks.list_decks(decks.decks_folder())), 400 if error or field_errors else 200


@bp.get("/sessions/<session:session_id>")
def session_page(session_id: int) -> str:
    session = ledger.get_session(get_db(), session_id)
    chart = {"labels": [_("start")] + [str(r["number"]) for r in session["rounds"]],
             "datasets": [{"label": name, "data": [0] + [r["totals"][name] for r in session["rounds"]]}
                          for name in session["players"]]}
    return render_template("ledger.html", session=session, chart=chart)


def form_values(rnd: Mapping[str, Any], session: Mapping[str, Any]) -> MultiDict[str, str]:
    """A stored round as form fields, to prefill the edit form."""
    values: MultiDict[str, str] = MultiDict()
    for key in ("tiplu", "turned", "winner", "finish"):
        if rnd.get(key):
            values[key] = rnd[key]
    if not rnd.get("winner"):
        values["no_winner"] = "yes"
        if not rnd.get("tiplu") and not rnd.get("turned"):
            values["stock_out"] = "yes"
    for seat, name in enumerate(session["players"]):
        line = rnd["players"][name]
        if line.get("cards"):
            values[f"p{seat}_cards"] = " ".join(line["cards"])
        elif line.get("penalty") is not None:
            values[f"p{seat}_penalty"] = str(line["penalty"])
        elif line.get("maal") is not None:
            values[f"p{seat}_maal"] = str(line["maal"])
        if line.get("seen"):
            values[f"p{seat}_seen"] = "on"
        if line.get("seen_by"):
            values[f"p{seat}_seen_by"] = line["seen_by"]
        if line.get("wrong_close"):
            values[f"p{seat}_wrong_close"] = "on"
        if line.get("dealt_tunnelas"):
            values[f"p{seat}_tunnelas"] = " ".join(line["dealt_tunnelas"])
        if line.get("false_declaration"):
            values[f"p{seat}_false_declaration"] = "on"
    return values


def has_printed_jokers(session: Mapping[str, Any]) -> bool:
    """Does the card grid offer the joker (the session's rules play with printed jokers)?"""
    return ledger.rules_of(session).printed_jokers > 0


def render_round_form(session: Mapping[str, Any], form: Mapping[str, str], *, number: int | None,
                      error: str | None = None, field_errors: Mapping[str, str] | None = None,
                      version: str | None = None, changed: Sequence[ChangedField] = ()) -> tuple[str, int]:
    """The round form; an edit carries the round's ``version`` as it was read (:func:`web.ledger.version_of`),
    and after a stale save, ``changed`` lists what another phone saved beside what this one typed (409)."""
    dealer = (session["rounds"][number - 1]["dealer"] if number else session["next_dealer"])
    failed = bool(error or field_errors)
    if field_errors and not error:
        error = _("Nothing was saved: fix what is marked below.")
    if number and version is None:
        version = form.get("version", "")
    rules = ledger.rules_of(session)
    plausible = plausible_maal(rules) if rules.scoring == Scoring.MAAL else None
    return render_template("round_form.html", session=session, form=form, number=number, error=error,
                           field_errors=field_errors or {}, dealer=dealer, jokers=has_printed_jokers(session),
                           submission=secrets.token_urlsafe(16), version=version, changed=changed,
                           plausible=plausible, unsure=unsure_maal(session, form)), \
        409 if changed else 400 if failed else 200


@dataclass(frozen=True)
class ChangedField:
    """One field of the round form that another phone saved otherwise than this one typed."""

    label: str
    saved: str
    typed: str


def changed_fields(session: Mapping[str, Any], saved: Mapping[str, str], typed: Mapping[str, str]
                   ) -> list[ChangedField]:
    """The round form's fields whose saved value (another phone's) differs from the typed one, in form order.

    >>> [f.label for f in changed_fields({"players": ["Anna", "Ben"]}, {"winner": "Anna", "p1_maal": "3"},
    ...                                  {"winner": "Ben", "p1_maal": "3", "csrf_token": "x"})]
    ['winner']
    """
    names = {"tiplu": _("tiplu"), "turned": _("turned card"), "winner": _("winner"), "finish": _("finish"),
             "no_winner": _("nobody won")}
    keys = [key for key in dict.fromkeys([*saved, *typed]) if key in names or re.fullmatch(r"p\d+_\w+", key)]
    out = []
    for key in keys:
        if saved.get(key, "") == typed.get(key, ""):
            continue
        match = re.fullmatch(r"p(\d+)_(\w+)", key)
        if match and int(match.group(1)) < len(session["players"]):
            label = f"{session['players'][int(match.group(1))]}: {match.group(2).replace('_', ' ')}"
        else:
            label = names.get(key, key)
        out.append(ChangedField(label, saved.get(key, "") or "–", typed.get(key, "") or "–"))
    return out


def unsure_maal(session: Mapping[str, Any], form: Mapping[str, str]) -> dict[str, int]:
    """Maal fields typed above what a hand plausibly holds (:func:`scorer.maal.plausible_maal`), by field.

    Not refused: a rich hand exists. The form asks "is 150 right?" under the field with a
    box to tick, and saves once it is ticked for that same number.

    >>> unsure_maal({"rules": "nepali", "options": {}, "players": ["Hari", "Sita"]},
    ...             {"p0_maal": "150", "p1_maal": "12"})
    {'p0_maal': 150}
    """
    rules = ledger.rules_of(session)
    if rules.scoring != Scoring.MAAL:
        return {}
    plausible = plausible_maal(rules)
    unsure = {}
    for seat in range(len(session["players"])):
        field = f"p{seat}_maal"
        number = parse_digits(form.get(field, "").strip(), maal_limit(rules))
        if number is not None and number > plausible and form.get(f"{field}_sure") != str(number):
            unsure[field] = number
    return unsure


def posted_round(session: Mapping[str, Any]) -> MultiDict[str, str]:
    """The round form as posted, with the winner ticked as seen (a winner has always seen)."""
    form = MultiDict(request.form)
    winner = form.get("winner", "")
    if winner in session["players"] and ledger.rules_of(session).scoring == Scoring.MAAL:
        form[f"p{session['players'].index(winner)}_seen"] = "on"
    return form


def round_form_problems(session: Mapping[str, Any], form: Mapping[str, str]) -> dict[str, str]:
    """Fields to fix before the round is scored: typed values, and a winner or a confirmed "nobody won".

    A number more than a hand can hold is caught here too, with the others, so that the first
    save marks it under its own field rather than after every other mistake is fixed.
    """
    rules = ledger.rules_of(session)
    problems = payloads.round_form_problems(form, session["players"], rules)
    penalty = rules.scoring == Scoring.PENALTY
    limit = penalty_limit(rules) if penalty else maal_limit(rules)
    for seat, name in enumerate(session["players"]):
        field = f"p{seat}_{'penalty' if penalty else 'maal'}"
        typed = form.get(field, "").strip()
        if field not in problems and typed.isascii() and typed.isdigit() and parse_digits(typed, limit) is None:
            what = _("%(name)s's penalty points", name=name) if penalty else _("%(name)s's maal", name=name)
            problems[field] = _("%(what)s: %(number)s is more than a hand can hold (at most %(maximum)s)",
                                what=what, number=typed[:12], maximum=limit)
    if not form.get("winner") and not form.get("no_winner"):
        problems["winner"] = (_("Tap the name of the player who closed, or tick \"Nobody won this round\".")
                              if rules.scoring == Scoring.PENALTY else
                              _("Tap the winner's name, or tick \"Nobody won this round\"."))
    if rules.wild_source == WildSource.TIPLU and not form.get("tiplu", "").strip() and "tiplu" not in problems:
        if form.get("winner") or not form.get("stock_out"):
            problems["tiplu"] = _("Enter the tiplu: every round has one, unless nobody saw it before the stock "
                                  "ran out (then tick \"Nobody won this round\" and \"The stock ran out\").")
    for field, number in unsure_maal(session, form).items():
        problems.setdefault(field, _("Is %(number)s right? Under these rules a hand rarely holds more than "
                                     "%(plausible)s maal. Tick the box to keep it, or fix the number.",
                                     number=number, plausible=plausible_maal(rules)))
    return problems


def save_round_form(session: Mapping[str, Any], number: int | None) -> ResponseReturnValue:
    """Check, score and store the posted round form; on a problem show the form again, as typed."""
    db = get_db()
    form = posted_round(session)
    problems = round_form_problems(session, form)
    if problems:
        return render_round_form(session, form, number=number, field_errors=problems)
    body = payloads.round_form(form, session["players"], ledger.rules_of(session))
    replayed = False
    try:
        kept = corrections.read_corrections(form.getlist("correction"))
        with corrections.saved_with(db) as written:
            if number is None:
                key = payloads.idempotency_key(form.get("submission") or None)
                rnd, replayed = ledger.add_round(db, session["id"], sent_round(session["id"], body),
                                                 idempotency_key=key, source=source())
            else:
                rnd = ledger.update_round(db, session["id"], number, sent_round(session["id"], body),
                                          version=form.get("version", ""), source=source())
            photos.link_photos(db, session["id"], rnd["number"], form.getlist("photo"))
            if not replayed:
                corrections.keep_review(db, session, kept, written)
    except StaleRound as stale:
        return stale_round_form(session, form, stale)
    except KeyReused:
        return render_round_form(session, form, number=number, error=_(
            "This form was already saved as a round, with other values. Check the ledger; "
            "to save these values as a new round, press Save again."))
    except USER_ERRORS as exc:
        field, message = field_of_error(session, translate(exc))
        if field:
            return render_round_form(session, form, number=number, field_errors={field: message})
        return render_round_form(session, form, number=number, error=message)
    if number is not None:
        flash(_("Round %(n)s was changed; every total after it was recomputed.", n=number))
    return redirect(url_for("views.round_page", session_id=session["id"], number=rnd["number"]))


#: A checked payload's message names a player's field by its key ("players.Ram.maal: ..."): the
#: round form's field for each key, where the message is shown instead.
FORM_FIELDS: Mapping[str, str] = {"maal": "p%d_maal", "penalty": "p%d_penalty", "cards": "p%d_cards",
                                  "dealt_tunnelas": "p%d_tunnelas"}


def field_of_error(session: Mapping[str, Any], message: str) -> tuple[str | None, str]:
    """The form field a scorer or payload message is about, and the message in plain words.

    The payload's checks name a field by its JSON key, which a family at the table should never
    read: ``players.Ram.maal: 99999 is above 294`` becomes "Ram's maal: 99999 is above 294",
    shown under Ram's maal (None when the message names no field of the form).
    """
    match = re.match(r"players\.(.+)\.(\w+): (.*)", message, re.S)
    if not match or match.group(1) not in session["players"]:
        return None, message
    name, key, rest = match.groups()
    label = LINE_FIELD_NAMES.get(key)
    plain = f"{_(label, name=name)}: {rest}" if label else f"{name}: {rest}"
    seat = session["players"].index(name)
    return (FORM_FIELDS[key] % seat if key in FORM_FIELDS else None), plain


def stale_round_form(session: Mapping[str, Any], form: Mapping[str, str], stale: StaleRound) -> ResponseReturnValue:
    """409 for an edit of a round another phone changed since: the form as typed, what is saved beside it,
    and the version now (saving again overwrites, knowingly). A round deleted since has no form to show."""
    current = stale.details.get("round")
    if current is None:
        return error_response(str(stale), 409)
    fresh = ledger.get_session(get_db(), session["id"])
    return render_round_form(fresh, form, number=current["number"], error=str(stale),
                             version=stale.details["version"],
                             changed=changed_fields(fresh, form_values(current, fresh), form) or
                             [ChangedField(_("round"), _("changed"), _("as typed"))])


@bp.route("/sessions/<session:session_id>/rounds/new", methods=["GET", "POST"])
def new_round(session_id: int) -> ResponseReturnValue:
    session = ledger.get_session(get_db(), session_id)
    if request.method == "POST":
        return save_round_form(session, None)
    return render_round_form(session, carried_round(session, request.args), number=None)


#: What another page may carry into a new round form (Check a hand's "Use for this round").
CARRIED_FIELDS = re.compile(r"(tiplu|turned|winner|finish|p\d_cards|p\d_seen)$")


def carried_round(session: Mapping[str, Any], args: Mapping[str, str]) -> MultiDict[str, str]:
    """The new round form prefilled with what a checked hand brought: tiplu, winner, finish, the winner's cards.

    Only known fields of known players come through; nothing is saved until the form is.

    >>> carried_round({"players": ["Hari", "Sita"]}, {"tiplu": "JC", "winner": "Sita", "p1_cards": "JC 10C",
    ...                                              "winner_x": "1", "p7_cards": "2S"}).to_dict()
    {'tiplu': 'JC', 'winner': 'Sita', 'p1_cards': 'JC 10C'}
    """
    seats = len(session["players"])
    carried: MultiDict[str, str] = MultiDict()
    for key, value in args.items():
        if CARRIED_FIELDS.fullmatch(key) and (not key.startswith("p") or int(key[1]) < seats):
            carried[key] = value[:400]
    if carried.get("winner") not in session["players"]:
        carried.pop("winner", None)
    elif args.get("winner_cards"):
        carried[f"p{session['players'].index(carried['winner'])}_cards"] = args["winner_cards"][:400]
    return carried


def hand_kept(cards: list[str], discard: str | None) -> str:
    """A checked hand's cards without its discard: what the winner's maal is counted from.

    >>> hand_kept(["JC", "QD", "JC"], "JC")
    'QD JC'
    """
    kept = list(cards)
    if discard in kept:
        kept.remove(discard)
    return " ".join(kept)


def pair_lines(rnd: Mapping[str, Any]) -> tuple[PairLine, ...]:
    """The round's payments as one line per pair (the scorer's items folded under each)."""
    return net_pairs(read_settlement(rnd).payments)


def settle_up(session: Mapping[str, Any]) -> tuple[Payment, ...] | None:
    """The fewest payments that settle the evening, or None when the totals are penalty points."""
    if session["lower_is_better"] or not session["rounds"]:
        return None
    return fewest_payments(evening_net(read_settlement(rnd) for rnd in session["rounds"]))


@bp.get("/sessions/<session:session_id>/rounds/<round:number>")
def round_page(session_id: int, number: int) -> str:
    db = get_db()
    session = ledger.get_session(db, session_id)
    rnd = ledger.get_round(db, session["id"], number)
    kept = photos.round_photos(db, session["id"], rnd["number"]) if table_code_ok() else []
    return render_template("round_result.html", session=session, round=rnd, pairs=pair_lines(rnd), photos=kept)


@bp.route("/sessions/<session:session_id>/rounds/<round:number>/edit", methods=["GET", "POST"])
def edit_round(session_id: int, number: int) -> ResponseReturnValue:
    db = get_db()
    session = ledger.get_session(db, session_id)
    rnd = ledger.get_round(db, session["id"], number)
    if request.method == "POST":
        return save_round_form(session, rnd["number"])
    return render_round_form(session, form_values(rnd, session), number=rnd["number"],
                             version=ledger.round_version(db, session["id"], rnd["number"]))


@bp.post("/sessions/<session:session_id>/rounds/<round:number>/delete")
def delete_round(session_id: int, number: int) -> ResponseReturnValue:
    """Delete the round the form was read at (its hidden ``version``): sent twice, it deletes one round;
    a round changed since is shown as it is now (409) and stays."""
    db = get_db()
    session = ledger.get_session(db, session_id)
    try:
        kept = ledger.delete_round(db, session["id"], number, version=request.form.get("version", ""),
                                   source=source())
    except StaleRound as stale:
        current = stale.details.get("round")
        if current is None:
            return error_response(str(stale), 409)
        fresh = ledger.get_session(db, session["id"])
        page, _status = render_round_form(fresh, form_values(current, fresh), number=current["number"],
                                          error=str(stale), version=stale.details["version"])
        return page, 409
    flash(_("Round %(n)s was deleted; later rounds moved up and the totals were recomputed.", n=number),
          "undo:" + url_for("views.restore_round", session_id=session["id"], audit_id=kept))
    return redirect(url_for("views.session_page", session_id=session["id"]))


@bp.route("/sessions/<session:session_id>/history/<int:audit_id>/restore", methods=["GET", "POST"])
def restore_round(session_id: int, audit_id: int) -> ResponseReturnValue:
    """Undo a deletion: the round comes back at its number (from the flash message or History).

    ``GET`` says first what the restore will do (which number it takes, which rounds move
    down); History links there, so an old deletion is never put back without asking.
    """
    db = get_db()
    if request.method == "GET":
        session = ledger.get_session(db, session_id)
        entry = next((e for e in ledger.audit_trail(db, session_id) if e["id"] == audit_id
                      and e["action"] == "delete round"), None)
        if entry is None:
            raise NotFound(_("history entry %(id)s of session %(sid)s is no deleted round", id=audit_id,
                             sid=session_id))
        if entry.get("restored"):
            raise Conflict(_("that round was already restored; see the ledger"))
        number = min(int(entry["round"]), len(session["rounds"]) + 1)
        return render_template("restore.html", session=session, entry=entry, number=number,
                               moving=session["rounds"][number - 1:])
    rnd = ledger.restore_round(db, session_id, audit_id, source=source())
    flash(_("Round %(n)s is back; the totals were recomputed.", n=rnd["number"]))
    return redirect(url_for("views.round_page", session_id=session_id, number=rnd["number"]))


#: The fields of a player's line that History names when they change, and how.
LINE_FIELD_NAMES: Mapping[str, str] = {
    "maal": N_("%(name)s's maal"), "seen": N_("%(name)s seen"), "seen_by": N_("%(name)s seen by"),
    "cards": N_("%(name)s's cards"), "penalty": N_("%(name)s's penalty"), "wrong_close": N_("%(name)s wrong close"),
    "false_declaration": N_("%(name)s declared falsely"), "dealt_tunnelas": N_("%(name)s's tunnelas at the deal"),
}
#: The fields of a round or a session that History names when they change.
FIELD_NAMES: Mapping[str, str] = {
    "tiplu": N_("tiplu"), "turned": N_("turned card"), "winner": N_("winner"), "finish": N_("finish"),
    "title": N_("title"), "rounds_planned": N_("rounds agreed"), "rules": N_("rules"), "deck": N_("deck"),
    "rate": N_("money per point")}
#: History's line for an action on a round: the number inside one sentence, in the page's language.
ROUND_ACTIONS: Mapping[str, str] = {"add round": N_("Round %(n)s added"), "edit round": N_("Round %(n)s changed"),
                                    "delete round": N_("Round %(n)s deleted"),
                                    "restore round": N_("Round %(n)s restored")}
#: What the ledger writes in the audit trail (in English, as stored); History shows them translated.
AUDIT_ACTIONS = (N_("create session"), N_("edit session"), N_("end session"), N_("reopen session"),
                 N_("delete session"), N_("add round"), N_("edit round"), N_("delete round"), N_("restore round"))
#: Words the pages show from the rules and the round as stored (finish routes, rotation).
STORED_WORDS = (N_("melds"), N_("dublees"), N_("clockwise"), N_("counter-clockwise"))


def shown(value: Any) -> str:
    """A stored value as History shows it: cards by their names, yes/no, – for nothing."""
    if value is None or value == [] or value == "":
        return "–"
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if isinstance(value, Mapping) and "per_point" in value:
        return money(1, value)
    if isinstance(value, (list, tuple)):
        return " ".join(map(str, value)) if value else "–"
    return str(value)


def field_changes(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> list[str]:
    """What an edit changed, one line per field.

    >>> field_changes({"winner": "A", "players": {"Hari": {"maal": 2}}},
    ...               {"winner": "A", "players": {"Hari": {"maal": 6}}})
    ["Hari's maal: 2 → 6"]
    """
    if not before or not after:
        return []
    lines = [f"{_(label)}: {shown(before[key])} → {shown(after[key])}" for key, label in FIELD_NAMES.items()
             if key in before and key in after and before[key] != after[key]]
    old_options, new_options = before.get("options") or {}, after.get("options") or {}
    lines += [f"{name}: {shown(old_options.get(name))} → {shown(new_options.get(name))}"
              for name in sorted(set(old_options) | set(new_options)) if old_options.get(name) != new_options.get(name)]
    old_players, new_players = before.get("players"), after.get("players")
    if isinstance(old_players, list) and isinstance(new_players, list) and old_players != new_players:
        lines.append(f"{_('players')}: {', '.join(old_players)} → {', '.join(new_players)}")
    if isinstance(old_players, Mapping) and isinstance(new_players, Mapping):
        for name, old_line in old_players.items():
            new_line = new_players.get(name, {})
            lines += [f"{_(label, name=name)}: {shown(old_line[key])} → {shown(new_line[key])}"
                      for key, label in LINE_FIELD_NAMES.items()
                      if key in old_line and key in new_line and old_line[key] != new_line[key]]
    return lines


@bp.get("/sessions/<session:session_id>/history")
def history(session_id: int) -> str:
    """Every change, newest first, with the fields an edit changed; a deleted session's trail stays readable."""
    db = get_db()
    entries = ledger.audit_trail(db, session_id)
    deleted = None
    try:
        session = ledger.get_session(db, session_id)
    except NotFound:
        deleted = next(e for e in entries if e["action"] == "delete session")
        session = deleted["before"]
    for entry in entries:
        entry["changes"] = field_changes(entry["before"], entry["after"])
        action = entry["action"]
        entry["title"] = (_(ROUND_ACTIONS[action], n=entry["round"]) if entry["round"] and action in ROUND_ACTIONS
                          else _(action))
    return render_template("history.html", session=session, entries=entries, deleted=deleted is not None)


@bp.route("/sessions/<session:session_id>/end", methods=["GET", "POST"])
def end_session(session_id: int) -> ResponseReturnValue:
    db = get_db()
    session = ledger.get_session(db, session_id)
    if request.method == "POST":
        session = ledger.end_session(db, session["id"], ended=request.form.get("action") != "reopen",
                                     source=source())
        if not session["ended_at"]:
            return redirect(url_for("views.session_page", session_id=session["id"]))
    return render_template("session_end.html", session=session, settle=settle_up(session))


@bp.route("/sessions/<session:session_id>/verify", methods=["GET", "POST"])
def verify_hand(session_id: int) -> ResponseReturnValue:
    """Check a declared hand (typed, tapped or photographed) with the session's rules.

    The photo review's taps (``correction`` fields) are kept as corrections once the hand
    is checked, as when a round is saved; a check that fails keeps nothing and carries
    them in the form to the next try, and checking again keeps no card twice.
    """
    db = get_db()
    session = ledger.get_session(db, session_id)
    form = request.form if request.method == "POST" else MultiDict()
    result = error = None
    carried: list[str] = []
    if request.method == "POST":
        try:
            taps = corrections.read_corrections(form.getlist("correction"))
            carried = form.getlist("correction")
            result = photos.check_cards(session, {"cards": form.get("hand", ""), "purpose": "hand",
                                                  "tiplu": form.get("tiplu"), "turned": form.get("turned")})
            if not result["cards"]:
                raise BadRequest(_("enter the hand: tap its cards, type them or photograph them"))
            with corrections.saved_with(db) as written:
                corrections.keep_review(db, session, taps, written)
        except USER_ERRORS as exc:
            error, result = translate(exc), None
    kept = hand_kept(result["cards"], result["verdict"].get("discard")) if result and result.get("verdict") else ""
    return render_template("verify.html", session=session, form=form, result=result, error=error,
                           carried=carried, jokers=has_printed_jokers(session), kept=kept), 400 if error else 200


def decks_page(error: str | None = None, title: str = "", status: int = 200) -> tuple[str, int]:
    """The Decks page: the decks taught here, each with "Improve from corrections", the form to teach
    one, and the progress of the job running in the background."""
    from vision.enrolment import missing_train_extra

    counts = corrections.correction_counts(get_db())
    found = decks.list_decks(decks.decks_folder())
    standard = counts.get(None, 0) + counts.get(decks.STANDARD_CORRECTED, 0)
    return render_template("decks.html", decks=found, counts=counts, standard_corrections=standard,
                           missing=train_hint(missing_train_extra()), job=decks.runner().status(), error=error,
                           title=title), status


@bp.get("/decks")
def decks_list() -> ResponseReturnValue:
    return decks_page()


@bp.post("/decks")
def teach_deck() -> ResponseReturnValue:
    """Check the four suit photos (and the jokers photo), keep them and start learning; the page shows the progress."""
    title = request.form.get("title", "")
    uploads = []
    for field in (*decks.SUITS, decks.JOKERS):
        upload = request.files.get(field)
        if upload is not None and upload.filename:
            max_bytes, _pixels = photos.image_limits()
            uploads.append(decks.Upload(field, upload.filename, upload.stream.read(max_bytes + 1)))
    try:
        with photos.photo_slot():  # up to five photos decoded at once: the same bound on memory as any photo
            decks.teach(title, uploads)
    except USER_ERRORS as exc:
        return decks_page(translate(exc), title, status_of(exc))
    return redirect(url_for("views.decks_list"))


@bp.post("/decks/<name>/improve")
def improve_deck(name: str) -> ResponseReturnValue:
    """Fine-tune a deck (``standard``: the shipped model's copy) on the corrections kept for it."""
    db, folder = get_db(), photos.photo_folder()
    read_by: list[str | None] = [None, decks.STANDARD_CORRECTED] if name in ("standard", decks.STANDARD_CORRECTED) \
        else [name]
    try:
        counts = corrections.correction_counts(db)
        decks.improve(name, corrections.deck_corrections(db, folder, read_by), sum(counts.get(d, 0) for d in read_by))
    except USER_ERRORS as exc:
        return decks_page(translate(exc), status=status_of(exc))
    return redirect(url_for("views.decks_list"))


@bp.route("/decks/<name>/remove", methods=["GET", "POST"])
def remove_deck(name: str) -> ResponseReturnValue:
    """Ask first, then retire a taught deck: a page that says what removing it does, and a form that
    posts ``confirm=yes`` (no script needed). The shipped standard model has no such page."""
    db = get_db()
    confirmed = request.method == "POST" and request.form.get("confirm") == "yes"
    try:
        deck = decks.remove_deck(name) if confirmed else decks.deck_named(name)
    except USER_ERRORS as exc:
        return decks_page(translate(exc), status=status_of(exc))
    if confirmed:
        flash(_("%(title)s was removed. Sessions that used it read their photos with the standard deck; "
                "the corrections kept with their photos stay.", title=deck.shown_title))
        return redirect(url_for("views.decks_list"))
    sessions = db.execute("SELECT count(*) FROM sessions WHERE deck = ?", [deck.name]).fetchone()[0]
    return render_template("deck_remove.html", deck=deck, sessions=sessions,
                           kept=corrections.correction_counts(db).get(deck.name, 0))


@bp.route("/code", methods=["GET", "POST"])
@code_exempt
def table_code() -> ResponseReturnValue:
    """Where a phone enters the table code once; a cookie remembers it."""
    error = None
    if request.method == "POST":
        supplied = request.form.get("code", "").strip()
        if is_table_code(supplied):
            return set_code_cookie(redirect(safe_next(request.form.get("next"))), supplied)
        error = _("That is not the table code. It is printed where tiplu serve runs.")
        if not current_app.config.get("TABLE_CODE"):
            abort(404)
    return render_template("code.html", error=error, next=safe_next(request.values.get("next"))), \
        400 if error else 200


def join_addresses() -> list[str]:
    """Where a phone on the same Wi-Fi opens this server: the address in use, or this machine's LAN ones.

    A browser on the server itself sees ``127.0.0.1``, which no phone can open.
    """
    host, _colon, port = request.host.rpartition(":") if not request.host.endswith("]") else (request.host, "", "")
    if not is_loopback_host(host.strip("[]")):
        return [request.host_url]
    return [f"http://{address}:{port or 80}/" for address in lan_addresses()]


@bp.get("/join")
def join() -> ResponseReturnValue:
    """The address and a QR code that lets another phone in (carrying the table code), for those already in.

    Someone without the code is sent to enter it first: the code is never printed for them.
    """
    if not table_code_ok():
        return redirect(url_for("views.table_code", next=url_for("views.join")))
    code = str(current_app.config.get("TABLE_CODE") or "")
    links = []
    for address in join_addresses() if code else []:
        link = code_link(address.rstrip("/") + url_for("views.index"), code)
        links.append({"address": address, "link": link,
                      "qr": segno.make(link, error="m").svg_data_uri(scale=6, border=2, dark="#000", light="#fff")})
    return render_template("join.html", links=links, code=code, devices=list_devices() if code else [],
                           shut_out=list_devices(shut_out=True) if code else [])


@bp.post("/join/devices/<device_id>/revoke")
def revoke_device(device_id: str) -> ResponseReturnValue:
    """Shut one phone out from the join page's list: its cookie stops working (the code stays the same)."""
    try:
        revoke_device_of(device_id)
    except USER_ERRORS as exc:
        flash(translate(exc))
    else:
        flash(_("That device was shut out; only someone already in can let it in again, here."))
    return redirect(url_for("views.join"))


@bp.post("/join/devices/<device_id>/let-in")
def let_in_device(device_id: str) -> ResponseReturnValue:
    """Let a phone that was shut out in again from the join page's list: its cookie works again."""
    try:
        set_device_revoked(device_id, False)
    except USER_ERRORS as exc:
        flash(translate(exc))
    else:
        flash(_("That device is let in again."))
    return redirect(url_for("views.join"))


@bp.get("/manifest.webmanifest")
def manifest() -> Response:
    """What a phone needs to install tiplu on its home screen: name, colours, icons, start page."""
    icons = [{"src": url_for("static", filename=f"icons/tiplu-{size}.png"), "sizes": f"{size}x{size}",
              "type": "image/png", "purpose": "any maskable"} for size in (192, 512)]
    icons.append({"src": url_for("static", filename="icons/tiplu.svg"), "sizes": "any", "type": "image/svg+xml"})
    body = {"name": "tiplu", "short_name": "tiplu", "description": _("Marriage scores at the table"),
            "start_url": url_for("views.index"), "scope": url_for("views.index"), "display": "standalone",
            "background_color": "#f6f4ef", "theme_color": "#0b6e4f", "lang": current_language(), "icons": icons}
    return Response(json.dumps(body, ensure_ascii=False), mimetype="application/manifest+json")


@bp.get("/sw.js")
def service_worker() -> Response:
    """The service worker, served from the root so that it may keep every page's shell for when the Wi-Fi drops."""
    response = current_app.send_static_file("sw.js")
    response.headers["Service-Worker-Allowed"] = "/"
    response.headers["Cache-Control"] = "no-cache"
    return response


@bp.get("/offline")
def offline() -> str:
    """What the service worker shows for a page it never kept, when the server cannot be reached."""
    return render_template("offline.html")


@bp.get("/language/<code>")
def choose_language(code: str) -> ResponseReturnValue:
    """Remember the language picked in the footer (a cookie wins over the phone's Accept-Language)."""
    response = redirect(safe_next(request.args.get("next")))
    if code in available_languages():
        response.set_cookie(LANGUAGE_COOKIE, code, max_age=365 * 24 * 3600, samesite="Lax")
    return response


@bp.get("/licenses")
def licenses() -> Response:
    return Response(render_template("licenses.html"))
