"""The pages people use at the table: sessions, round entry, results, ledger, history, end.

Forms post plain fields; :func:`round_payload` turns them into the same payload
the JSON API takes, so a round typed on a phone and a round posted by a script
go through the very same checks and the same scorer.

Example: ``GET /sessions/new`` shows the new-session form with every house-rule
option of every family, generated from :data:`scorer.RULE_FAMILIES`.
"""

from __future__ import annotations

import hmac
import secrets
from typing import Any, Mapping
from urllib.parse import urlsplit

from flask import (Blueprint, Response, abort, current_app, flash, jsonify, redirect, render_template, request,
                   send_file, url_for)
from werkzeug.datastructures import MultiDict

from scorer import ALL_FACES, RULE_FAMILIES, TipluError, get_rules
from scorer.rules import DEFAULT_FAMILY
from web import ledger, photos
from web.app import TABLE_CODE_COOKIE, table_code_ok
from web.camera import camera_for
from web.db import get_db
from web.i18n import _

bp = Blueprint("views", __name__)

SUIT_SYMBOL = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
MAX_SEATS = 6


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


@bp.app_context_processor
def template_helpers() -> dict[str, Any]:
    return {"card_faces": card_faces, "suit_symbol": SUIT_SYMBOL, "rule_families": RULE_FAMILIES,
            "needs_code": not table_code_ok(), "has_camera": lambda: camera_for(current_app) is not None}


def source() -> str:
    return f"web {request.remote_addr or ''}".strip()


@bp.get("/")
def index() -> str:
    return render_template("index.html", sessions=ledger.list_sessions(get_db()))


def session_form_values(form: Mapping[str, str]) -> dict[str, Any]:
    """Read the new-session form: players, family, its options, planned rounds."""
    family = form.get("rules", DEFAULT_FAMILY)
    if family not in RULE_FAMILIES:
        raise ledger.InputError(_("rules: pick one of %(families)s", families=", ".join(RULE_FAMILIES)))
    players = [form.get(f"player{i}", "").strip() for i in range(MAX_SEATS)]
    options: dict[str, Any] = {}
    for spec in RULE_FAMILIES[family].options:
        key = f"opt_{family}_{spec.name}"
        options[spec.name] = key in form if spec.kind == "bool" else form.get(key, spec.default)
    return {"players": [p for p in players if p], "rules": family, "options": options,
            "rounds_planned": form.get("rounds_planned", "").strip() or None,
            "title": form.get("title", "")}


@bp.route("/sessions/new", methods=["GET", "POST"])
def new_session() -> Any:
    error = None
    if request.method == "POST":
        try:
            values = session_form_values(request.form)
            session_id = ledger.create_session(get_db(), values["players"], values["rules"], values["options"],
                                               rounds_planned=values["rounds_planned"], title=values["title"],
                                               source=source())
        except TipluError as exc:
            error = str(exc)
        else:
            return redirect(url_for("views.session_page", session_id=session_id))
    status = 400 if error else 200
    return render_template("session_new.html", error=error, form=request.form, max_seats=MAX_SEATS,
                           default_family=DEFAULT_FAMILY), status


def settings_form(session: Mapping[str, Any]) -> MultiDict[str, str]:
    """A stored session as new-session form fields, to prefill the settings form."""
    values: MultiDict[str, str] = MultiDict({"rules": session["rules"], "title": session["title"] or "",
                                             "rounds_planned": str(session["rounds_planned"] or "")})
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


@bp.route("/sessions/<session_id>/settings", methods=["GET", "POST"])
def session_settings(session_id: str) -> Any:
    """Change the title and agreed rounds any time; players and rules only before the first round."""
    db = get_db()
    session = ledger.get_session(db, session_id)
    error = None
    form: Mapping[str, str] = settings_form(session)
    if request.method == "POST":
        form = request.form
        try:
            if session["options_locked"]:
                changes = {"title": form.get("title", ""),
                           "rounds_planned": form.get("rounds_planned", "").strip() or None}
            else:
                changes = session_form_values(form)
            ledger.update_session(db, session["id"], changes, source=source())
        except TipluError as exc:
            error = str(exc)
        else:
            flash(_("Settings saved."))
            return redirect(url_for("views.session_page", session_id=session["id"]))
    return render_template("session_new.html", error=error, form=form, max_seats=MAX_SEATS,
                           default_family=session["rules"], session=session, edit=session), 400 if error else 200


@bp.get("/sessions/<session_id>")
def session_page(session_id: str) -> str:
    session = ledger.get_session(get_db(), session_id)
    chart = {"labels": [_("start")] + [str(r["number"]) for r in session["rounds"]],
             "datasets": [{"label": name, "data": [0] + [r["totals"][name] for r in session["rounds"]]}
                          for name in session["players"]]}
    return render_template("ledger.html", session=session, chart=chart)


def round_payload(form: Mapping[str, str], session: Mapping[str, Any]) -> dict[str, Any]:
    """The round form as the API's payload (fields left empty are left out)."""
    rummy = session["rules"] == "rummy"
    winner = form.get("winner") or None
    payload: dict[str, Any] = {"winner": winner, "finish": (form.get("finish") or None) if winner else None}
    if rummy:
        payload["turned"] = form.get("turned", "").strip() or None
    else:
        payload["tiplu"] = form.get("tiplu", "").strip() or None
    players: dict[str, Any] = {}
    for seat, name in enumerate(session["players"]):
        entry: dict[str, Any] = {}
        cards = form.get(f"p{seat}_cards", "").strip()
        if cards:
            entry["cards"] = cards
        if rummy:
            entry["wrong_close"] = f"p{seat}_wrong_close" in form
            if form.get(f"p{seat}_penalty", "").strip():
                entry["penalty"] = form[f"p{seat}_penalty"].strip()
        else:
            entry["seen"] = f"p{seat}_seen" in form
            if form.get(f"p{seat}_seen_by"):
                entry["seen_by"] = form[f"p{seat}_seen_by"]
            if form.get(f"p{seat}_maal", "").strip():
                entry["maal"] = form[f"p{seat}_maal"].strip()
            if form.get(f"p{seat}_tunnelas", "").strip():
                entry["dealt_tunnelas"] = form[f"p{seat}_tunnelas"].strip()
            if f"p{seat}_false_declaration" in form:
                entry["false_declaration"] = True
        players[name] = entry
    payload["players"] = players
    return payload


def form_values(rnd: Mapping[str, Any], session: Mapping[str, Any]) -> MultiDict[str, str]:
    """A stored round as form fields, to prefill the edit form."""
    values: MultiDict[str, str] = MultiDict()
    for key in ("tiplu", "turned", "winner", "finish"):
        if rnd.get(key):
            values[key] = rnd[key]
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


def render_round_form(session: Mapping[str, Any], form: Mapping[str, str], *, number: int | None,
                      error: str | None = None) -> tuple[str, int]:
    dealer = (session["rounds"][number - 1]["dealer"] if number else session["next_dealer"])
    jokers = get_rules(session["rules"], session["options"]).printed_jokers > 0
    return render_template("round_form.html", session=session, form=form, number=number, error=error,
                           dealer=dealer, jokers=jokers, submission=secrets.token_urlsafe(16)), \
        400 if error else 200


@bp.route("/sessions/<session_id>/rounds/new", methods=["GET", "POST"])
def new_round(session_id: str) -> Any:
    db = get_db()
    session = ledger.get_session(db, session_id)
    if request.method == "POST":
        try:
            rnd, _replayed = ledger.add_round(db, session["id"], round_payload(request.form, session),
                                              idempotency_key=request.form.get("submission") or None,
                                              source=source())
        except ledger.KeyReusedError:
            return render_round_form(session, request.form, number=None, error=_(
                "This form was already saved as a round, with other values. Check the ledger; "
                "to save these values as a new round, press Save again."))
        except TipluError as exc:
            return render_round_form(session, request.form, number=None, error=str(exc))
        photos.link_photos(db, session["id"], rnd["number"], request.form.getlist("photo"))
        return redirect(url_for("views.round_page", session_id=session["id"], number=rnd["number"]))
    return render_round_form(session, MultiDict(), number=None)


@bp.post("/sessions/<session_id>/rounds/preview")
def preview_round(session_id: str) -> Any:
    """The round as the scorer would settle it, without saving (the form's live preview)."""
    db = get_db()
    session = ledger.get_session(db, session_id)
    try:
        return jsonify({"round": ledger.preview_round(db, session["id"], round_payload(request.form, session))})
    except TipluError as exc:
        return jsonify({"error": str(exc)}), 400


@bp.get("/sessions/<session_id>/rounds/<number>")
def round_page(session_id: str, number: str) -> str:
    db = get_db()
    session = ledger.get_session(db, session_id)
    rnd = ledger.get_round(db, session["id"], number)
    kept = photos.round_photos(db, session["id"], rnd["number"]) if table_code_ok() else []
    return render_template("round_result.html", session=session, round=rnd, photos=kept)


@bp.route("/sessions/<session_id>/rounds/<number>/edit", methods=["GET", "POST"])
def edit_round(session_id: str, number: str) -> Any:
    db = get_db()
    session = ledger.get_session(db, session_id)
    rnd = ledger.get_round(db, session["id"], number)
    if request.method == "POST":
        try:
            ledger.update_round(db, session["id"], rnd["number"], round_payload(request.form, session),
                                source=source())
        except TipluError as exc:
            return render_round_form(session, request.form, number=rnd["number"], error=str(exc))
        photos.link_photos(db, session["id"], rnd["number"], request.form.getlist("photo"))
        flash(_("Round %(n)s was changed; every total after it was recomputed.", n=rnd["number"]))
        return redirect(url_for("views.round_page", session_id=session["id"], number=rnd["number"]))
    return render_round_form(session, form_values(rnd, session), number=rnd["number"])


@bp.post("/sessions/<session_id>/rounds/<number>/delete")
def delete_round(session_id: str, number: str) -> Any:
    db = get_db()
    session = ledger.get_session(db, session_id)
    ledger.delete_round(db, session["id"], number, source=source())
    flash(_("Round %(n)s was deleted; later rounds moved up and the totals were recomputed.", n=number))
    return redirect(url_for("views.session_page", session_id=session["id"]))


@bp.get("/sessions/<session_id>/history")
def history(session_id: str) -> str:
    db = get_db()
    session = ledger.get_session(db, session_id)
    return render_template("history.html", session=session, entries=ledger.audit_trail(db, session["id"]))


@bp.route("/sessions/<session_id>/end", methods=["GET", "POST"])
def end_session(session_id: str) -> Any:
    db = get_db()
    session = ledger.get_session(db, session_id)
    if request.method == "POST":
        session = ledger.end_session(db, session["id"], ended=request.form.get("action") != "reopen",
                                     source=source())
        if not session["ended_at"]:
            return redirect(url_for("views.session_page", session_id=session["id"]))
    return render_template("session_end.html", session=session)


def json_error(message: str, status: int = 400) -> tuple[Response, int]:
    return jsonify({"error": message}), status


def keep_and_read(session: Mapping[str, Any], image: Any) -> tuple[Response, int]:
    """Store the photo with the session, read its cards and answer both as JSON."""
    db = get_db()
    seat = request.form.get("seat", "").strip()
    photo = photos.store_photo(db, photos.photo_folder(), image, session_id=session["id"],
                               purpose=request.form.get("purpose") or "hand",
                               seat=int(seat) if seat.isdigit() else None)
    reading = photos.read_image(image, name=photo.file_name, model_path=current_app.config.get("MODEL_PATH"))
    photos.save_reading(db, photo.id, reading)
    url = url_for("views.photo_file", session_id=session["id"], photo_id=photo.id)
    return jsonify({"photo": {**photo.to_dict(), "url": url}, "reading": reading}), 201


@bp.post("/sessions/<session_id>/photos")
def upload_photo(session_id: str) -> tuple[Response, int]:
    """A photo from the phone's camera or files (field ``image``): kept with the session, cards read."""
    session = ledger.get_session(get_db(), session_id)
    upload = request.files.get("image")
    if upload is None:
        return json_error(_("no photo arrived: take the photo again"))
    max_bytes, max_pixels = photos.image_limits()
    try:
        image = photos.decode_photo(upload.stream.read(max_bytes + 1), max_bytes=max_bytes, max_pixels=max_pixels)
        return keep_and_read(session, image)
    except TipluError as error:
        return json_error(str(error))


@bp.post("/sessions/<session_id>/photos/camera")
def camera_photo(session_id: str) -> tuple[Response, int]:
    """A photo from the camera attached to the server (404 when there is none)."""
    session = ledger.get_session(get_db(), session_id)
    camera = camera_for(current_app)
    if camera is None:
        return json_error(_("this server has no camera; use the phone's Photograph button"), 404)
    try:
        image = camera.frame()
    except (OSError, RuntimeError) as error:
        return json_error(_("the camera gave no picture (%(why)s); check it is connected", why=error), 503)
    try:
        return keep_and_read(session, image)
    except TipluError as error:
        return json_error(str(error))


@bp.get("/camera/preview.jpg")
def camera_preview() -> Any:
    """The camera's current view as a small JPEG; the page reloads it for a live preview."""
    if not table_code_ok():
        return json_error(_("enter the table code to see the camera"), 403)
    camera = camera_for(current_app)
    if camera is None:
        return json_error(_("this server has no camera"), 404)
    try:
        jpeg = camera.preview_jpeg()
    except (OSError, RuntimeError) as error:
        return json_error(_("the camera gave no picture (%(why)s); check it is connected", why=error), 503)
    return Response(jpeg, mimetype="image/jpeg", headers={"Cache-Control": "no-store"})


@bp.get("/sessions/<session_id>/photos/<photo_id>.jpg")
def photo_file(session_id: str, photo_id: str) -> Any:
    """A kept photo, only for those who may write at this table (the table code rule)."""
    if not table_code_ok():
        return json_error(_("enter the table code to see this table's photos"), 403)
    photo = photos.find_photo(get_db(), ledger.get_session(get_db(), session_id)["id"], photo_id)
    path = photos.photo_folder() / f"{photo['id']}.jpg"
    if not path.is_file():
        return json_error(_("the photo file is gone from the server"), 404)
    response = send_file(path, mimetype="image/jpeg", max_age=0, conditional=False)
    response.headers["Cache-Control"] = "private, no-store"
    return response


@bp.post("/sessions/<session_id>/cards/check")
def check_cards(session_id: str) -> tuple[Response, int]:
    """The scorer's verdict, maal or penalty for cards read from a photo (nothing is saved)."""
    session = ledger.get_session(get_db(), session_id)
    payload = request.get_json(silent=True)
    if not isinstance(payload, dict):
        return json_error(_('send a JSON object, e.g. {"cards": ["10C", "JC"], "purpose": "hand"}'))
    try:
        return jsonify(photos.check_cards(session, payload)), 200
    except TipluError as error:
        return json_error(str(error))


@bp.route("/sessions/<session_id>/verify", methods=["GET", "POST"])
def verify_hand(session_id: str) -> Any:
    """Check a declared hand (typed, tapped or photographed) with the session's rules."""
    session = ledger.get_session(get_db(), session_id)
    form = request.form if request.method == "POST" else MultiDict()
    result = error = None
    if request.method == "POST":
        try:
            result = photos.check_cards(session, {"cards": form.get("hand", ""), "purpose": "hand",
                                                  "tiplu": form.get("tiplu"), "turned": form.get("turned")})
            if not result["cards"]:
                raise ledger.InputError(_("enter the hand: tap its cards, type them or photograph them"))
        except TipluError as exc:
            error, result = str(exc), None
    jokers = get_rules(session["rules"], session["options"]).printed_jokers > 0
    return render_template("verify.html", session=session, form=form, result=result, error=error,
                           jokers=jokers), 400 if error else 200


def safe_next(target: str | None) -> str:
    """Only redirect within this site after the code is entered."""
    if not target:
        return url_for("views.index")
    parts = urlsplit(target)
    if parts.scheme or parts.netloc:
        if parts.netloc != request.host:
            return url_for("views.index")
        return parts.path + (f"?{parts.query}" if parts.query else "")
    return target if target.startswith("/") and not target.startswith("//") else url_for("views.index")


@bp.route("/code", methods=["GET", "POST"])
def table_code() -> Any:
    """Where a phone enters the table code once; a cookie remembers it."""
    error = None
    code = current_app.config.get("TABLE_CODE")
    if request.method == "POST":
        supplied = request.form.get("code", "").strip()
        if code and hmac.compare_digest(supplied.encode(), str(code).encode()):
            response = redirect(safe_next(request.form.get("next")))
            response.set_cookie(TABLE_CODE_COOKIE, supplied, max_age=30 * 24 * 3600, httponly=True,
                                samesite="Lax")
            return response
        error = _("That is not the table code. It is printed where tiplu serve runs.")
        if not code:
            abort(404)
    return render_template("code.html", error=error, next=safe_next(request.values.get("next"))), \
        400 if error else 200


@bp.get("/licenses")
def licenses() -> Response:
    return Response(render_template("licenses.html"))
