"""The JSON API: sessions, rounds (with ``Idempotency-Key``), history and exports.

Bad input answers 4xx with ``{"error": "what to fix"}`` and stores nothing;
the error handlers in :mod:`web.app` turn every :class:`scorer.TipluError`
into 400 (404 for an unknown session or round, 409 for a forbidden change).

Example (``curl``)::

    curl -X POST localhost:8000/api/sessions -d '{"players": ["Anna", "Ben"], "rules": "nepali"}'
    {"id": 1, ...}
"""

from __future__ import annotations

import json
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request, url_for

from scorer import RULE_FAMILIES
from web import ledger, photos
from web.db import get_db
from web.i18n import _
from web.rounds import InputError

bp = Blueprint("api", __name__, url_prefix="/api")


def json_body() -> dict[str, Any]:
    """The request's JSON object, or an :class:`InputError` saying what is wrong with it."""
    raw = request.get_data(cache=True)
    if not raw.strip():
        raise InputError(_("send a JSON object in the request body"))
    try:
        payload = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError(_("the body is not UTF-8 text; send JSON")) from None
    except json.JSONDecodeError as error:
        raise InputError(_("malformed JSON at line %(line)s column %(column)s: %(why)s", line=error.lineno,
                           column=error.colno, why=error.msg)) from None
    if not isinstance(payload, dict):
        raise InputError(_("send a JSON object ({...}), not a list or a single value"))
    return payload


def source() -> str:
    return f"api {request.remote_addr or ''}".strip()


@bp.get("/rules")
def rules() -> Response:
    """Every rule family with its options and defaults (what a new-session form offers)."""
    return jsonify({name: {"title": family.title, "players_min": family.players_min,
                           "lower_is_better": family.lower_is_better, "description": family.description,
                           "options": [{"name": o.name, "default": o.default, "help": o.help, "kind": o.kind,
                                        "choices": list(o.choices) if o.choices else None,
                                        "minimum": o.minimum, "maximum": o.maximum} for o in family.options]}
                    for name, family in RULE_FAMILIES.items()})


@bp.get("/sessions")
def list_sessions() -> Response:
    return jsonify({"sessions": ledger.list_sessions(get_db())})


@bp.post("/sessions")
def create_session() -> tuple[Response, int, dict[str, str]]:
    payload = json_body()
    unknown = set(payload) - {"players", "rules", "options", "rounds_planned", "title", "first_dealer"}
    if unknown:
        raise InputError(_("unknown field %(fields)s (use %(allowed)s)", fields=", ".join(sorted(map(repr, unknown))),
                           allowed="players, rules, options, rounds_planned, title, first_dealer"))
    first = payload.get("first_dealer", 0)
    if isinstance(first, bool) or not isinstance(first, int):
        raise InputError(_("first_dealer: give the dealer's seat number, 0 for the first player"))
    db = get_db()
    session_id = ledger.create_session(db, payload.get("players"), payload.get("rules", "nepali"),
                                       payload.get("options"), rounds_planned=payload.get("rounds_planned"),
                                       title=payload.get("title", ""), first_dealer=first, source=source())
    session = ledger.get_session(db, session_id)
    body = {"id": session_id, "rounds_planned": session["rounds_planned"], "players": session["players"],
            "rules": session["rules"], "options": session["options"]}
    return jsonify(body), 201, {"Location": url_for("api.get_session", session_id=session_id)}


@bp.get("/sessions/<session_id>")
def get_session(session_id: str) -> Response:
    return jsonify(ledger.get_session(get_db(), session_id))


@bp.patch("/sessions/<session_id>")
def update_session(session_id: str) -> Response:
    return jsonify(ledger.update_session(get_db(), session_id, json_body(), source=source()))


@bp.delete("/sessions/<session_id>")
def delete_session(session_id: str) -> tuple[str, int]:
    db = get_db()
    kept = photos.session_photo_ids(db, ledger.get_session(db, session_id)["id"])
    ledger.delete_session(db, session_id, source=source())
    photos.remove_files(photos.photo_folder(), kept)
    return "", 204


@bp.post("/sessions/<session_id>/end")
def end_session(session_id: str) -> Response:
    raw = request.get_data(cache=True)
    ended = True
    if raw.strip():
        payload = json_body()
        ended = payload.get("ended", True)
        if not isinstance(ended, bool):
            raise InputError(_("ended: give true to end the session or false to reopen it"))
    return jsonify(ledger.end_session(get_db(), session_id, ended=ended, source=source()))


@bp.post("/sessions/<session_id>/rounds")
def add_round(session_id: str) -> tuple[Response, int, dict[str, str]]:
    key = request.headers.get("Idempotency-Key")
    result, replayed = ledger.add_round(get_db(), session_id, json_body(), idempotency_key=key, source=source())
    headers = {"Location": url_for("api.round_", session_id=session_id, number=result["number"])}
    if replayed:
        headers["Idempotent-Replayed"] = "true"
    return jsonify(result), 201, headers


@bp.post("/sessions/<session_id>/rounds/preview")
def preview_round(session_id: str) -> Response:
    """Score a round without saving it."""
    return jsonify(ledger.preview_round(get_db(), session_id, json_body()))


@bp.route("/sessions/<session_id>/rounds/<number>", methods=["GET", "PUT", "DELETE"])
def round_(session_id: str, number: str) -> Any:
    db = get_db()
    if request.method == "PUT":
        return jsonify(ledger.update_round(db, session_id, number, json_body(), source=source()))
    if request.method == "DELETE":
        ledger.delete_round(db, session_id, number, source=source())
        return "", 204
    return jsonify(ledger.get_round(db, session_id, number))


@bp.get("/sessions/<session_id>/history")
def history(session_id: str) -> Response:
    return jsonify({"history": ledger.audit_trail(get_db(), session_id)})


@bp.get("/sessions/<session_id>/export.csv")
def export_csv(session_id: str) -> Response:
    text = ledger.export_csv(get_db(), session_id)
    return Response(text, mimetype="text/csv",
                    headers={"Content-Disposition": f"attachment; filename=tiplu-session-{int(session_id)}.csv"})


@bp.get("/sessions/<session_id>/export.json")
def export_json(session_id: str) -> Response:
    data = ledger.export_json(get_db(), session_id)
    response = jsonify(data)
    response.headers["Content-Disposition"] = f"attachment; filename=tiplu-session-{data['session']['id']}.json"
    return response


def uploaded_photo() -> bytes:
    """The bytes of the multipart field ``image`` (read at most one byte past the limit)."""
    upload = request.files.get("image")
    if upload is None:
        if request.mimetype != "multipart/form-data":
            raise InputError(_("send the photo as multipart/form-data with the file in the field \"image\" "
                               "(curl -F image=@photo.jpg ...), not as %(type)s", type=request.mimetype or "no type"))
        raise InputError(_("no photo: put the file in the multipart field \"image\""))
    max_bytes, _pixels = photos.image_limits()
    return upload.stream.read(max_bytes + 1)


@bp.post("/detect")
def detect() -> Response:
    """The cards in one photo, as ``tiplu detect`` prints them.

    With the form field ``session`` (and optionally ``purpose``, ``seat``) the photo is
    also kept with that session, under a generated name, and ``photo`` says where.
    """
    data = uploaded_photo()
    max_bytes, max_pixels = photos.image_limits()
    image = photos.decode_photo(data, max_bytes=max_bytes, max_pixels=max_pixels)
    session_id = request.form.get("session", "").strip()
    photo = None
    if session_id:
        db = get_db()
        session = ledger.get_session(db, session_id)
        seat = request.form.get("seat", "").strip()
        photo = photos.store_photo(db, photos.photo_folder(), image, session_id=session["id"],
                                   purpose=request.form.get("purpose") or "hand",
                                   seat=int(seat) if seat.isdigit() else None)
    reading = photos.read_image(image, name=photo.file_name if photo else "upload",
                                model_path=current_app.config.get("MODEL_PATH"))
    if photo is not None:
        photos.save_reading(get_db(), photo.id, reading)
        reading["photo"] = {**photo.to_dict(), "url": url_for("views.photo_file", session_id=photo.session_id,
                                                               photo_id=photo.id)}
    return jsonify(reading)
