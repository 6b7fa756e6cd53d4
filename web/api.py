"""Every JSON route: the API under ``/api/`` and the JSON that the pages' own scripts fetch.

``bp`` (``/api/...``) serves programs: JSON bodies, rounds with ``Idempotency-Key``,
history and exports; no CSRF token, the table code in the ``X-Table-Code`` header.
``page_api`` serves the pages' scripts at addresses beside the pages (photos, the
server's camera, ``cards/check``, the round form's live preview): same origin and a
CSRF token, like the forms. Bad input answers 4xx with ``{"error": "what to fix"}``
and stores nothing; :mod:`web.errors` gives each error its status. Error texts follow
the request's language everywhere; ``page_api`` answers also say the scorer's texts
(reasons, maal labels, doubts) in it, since the pages show them, while ``/api/`` answers
data in English. Who may call them (the table code, same-origin writes, JSON bodies)
is :mod:`web.security`'s.

Example (``curl``)::

    curl -X POST localhost:8000/api/sessions -d '{"players": ["Anna", "Ben"], "rules": "nepali"}'
    {"id": 1, ...}
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Mapping, TypeVar

import numpy as np
from flask import Blueprint, Response, current_app, jsonify, request, send_file, url_for
from flask.typing import ResponseReturnValue

from scorer import RULE_FAMILIES, RuleSet
from web import decks, ledger, payloads, photos, security
from web.camera import camera_for
from web.db import get_db
from web.errors import (USER_ERRORS, BadRequest, NotFound, PreconditionRequired, RoundChanged, StaleRound,
                        Unavailable, json_error)
from web.i18n import _, localized
from vision.pipeline import PhotoReading
from vision.score import score_reading
from web.payloads import RoundEntry
from web.rounds import score_round
from web.security import csrf, takes_upload

bp = Blueprint("api", __name__, url_prefix="/api")
csrf.exempt(bp)
page_api = Blueprint("page_api", __name__)

Picture = TypeVar("Picture")


def json_body() -> dict[str, Any]:
    """The request's JSON object (see :func:`web.payloads.json_object`)."""
    return payloads.json_object(request.get_data(cache=True))


def source() -> str:
    return f"api {request.remote_addr or ''}".strip()


def sent_round(session_id: int, body: Mapping[str, Any] | None = None) -> RoundEntry:
    """The round this request sends, checked against the session's players and rules.

    ``body`` is a JSON payload; without one the round form is read.
    """
    setup = ledger.session_setup(get_db(), session_id)
    payload = payloads.round_form(request.form, setup.players, setup.rules) if body is None else body
    return payloads.round_entry(payload, setup.players, setup.rules)


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
def create_session() -> ResponseReturnValue:
    db = get_db()
    new = payloads.new_session(json_body())
    decks.check_deck(new.deck)
    session_id = ledger.create_session(db, new, source=source())
    session = ledger.get_session(db, session_id)
    body = {"id": session_id, "rounds_planned": session["rounds_planned"], "players": session["players"],
            "rules": session["rules"], "options": session["options"], "deck": session["deck"], "rate": session["rate"]}
    return jsonify(body), 201, {"Location": url_for("api.get_session", session_id=session_id)}


@bp.get("/sessions/<session:session_id>")
def get_session(session_id: int) -> Response:
    return jsonify(ledger.get_session(get_db(), session_id))


@bp.patch("/sessions/<session:session_id>")
def update_session(session_id: int) -> Response:
    changes = payloads.session_changes(json_body())
    if "deck" in changes.given:
        decks.check_deck(changes.deck)
    return jsonify(ledger.update_session(get_db(), session_id, changes, source=source()))


@bp.delete("/sessions/<session:session_id>")
def delete_session(session_id: int) -> ResponseReturnValue:
    db = get_db()
    kept = photos.session_photo_ids(db, ledger.session_setup(db, session_id).id)
    ledger.delete_session(db, session_id, source=source())
    photos.remove_files(photos.photo_folder(), kept)
    return "", 204


@bp.post("/sessions/<session:session_id>/end")
def end_session(session_id: int) -> Response:
    ended = payloads.session_ended(json_body()) if request.get_data(cache=True).strip() else True
    return jsonify(ledger.end_session(get_db(), session_id, ended=ended, source=source()))


@bp.post("/sessions/<session:session_id>/rounds")
def add_round(session_id: int) -> ResponseReturnValue:
    """Add a round; a repeated ``Idempotency-Key`` answers the round as it is now (409 edited, 410 deleted)."""
    body = json_body()
    key = payloads.idempotency_key(request.headers.get("Idempotency-Key"))
    try:
        result, replayed = ledger.add_round(get_db(), session_id, sent_round(session_id, body), idempotency_key=key,
                                            source=source())
    except RoundChanged as changed:
        changed.details["location"] = url_for("api.round_", session_id=session_id,
                                              number=changed.details["round"]["number"])
        raise
    headers = {"Location": url_for("api.round_", session_id=session_id, number=result["number"]),
               "ETag": etag(ledger.round_version(get_db(), session_id, result["number"]))}
    if replayed:
        headers["Idempotent-Replayed"] = "true"
    return jsonify(result), 201, headers


@bp.post("/sessions/<session:session_id>/rounds/preview")
def preview_round(session_id: int) -> Response:
    """Score a round without saving it."""
    body = json_body()
    return jsonify(score_round(sent_round(session_id, body)).to_dict())


def etag(version: str) -> str:
    """A round's version as an ``ETag`` (quoted).

    >>> etag("12.3"), if_match_version('"12.3"'), if_match_version('W/"12.3"')
    ('"12.3"', '12.3', '12.3')
    """
    return f'"{version}"'


def if_match_version(header: str | None) -> str:
    """The version an edit or a delete was read at, from its ``If-Match``: 428 when it has none."""
    value = (header or "").strip()
    if not value:
        raise PreconditionRequired(_("send the header If-Match with the ETag of the round's GET, so that a round "
                                     "changed or deleted since is not overwritten or removed"))
    return value.removeprefix("W/").strip('"')


def stale_round_answer(error: StaleRound) -> ResponseReturnValue:
    """409 with the round as it is now, and its ``ETag`` (to read it, and send again if still meant)."""
    answer = json_error(error)
    version = error.details.get("version")
    if version and isinstance(answer, Response):
        answer.headers["ETag"] = etag(version)
    return answer


@bp.route("/sessions/<session:session_id>/rounds/<round:number>", methods=["GET", "PUT", "DELETE"])
def round_(session_id: int, number: int) -> ResponseReturnValue:
    """A round by its number; a ``PUT`` or ``DELETE`` must carry ``If-Match`` with the ``ETag`` of its GET.

    A stale one (the round was edited or deleted since, or an earlier round's delete
    moved it) answers 409 with the round as it is now, and changes nothing.
    """
    db = get_db()
    rnd = ledger.get_round(db, session_id, number)  # an unknown session or round is 404 before anything else
    try:
        if request.method == "PUT":
            version = if_match_version(request.headers.get("If-Match"))
            body = json_body()
            edited = ledger.update_round(db, session_id, number, sent_round(session_id, body), version=version,
                                         source=source())
            return jsonify(edited), 200, {"ETag": etag(ledger.round_version(db, session_id, edited["number"]))}
        if request.method == "DELETE":
            ledger.delete_round(db, session_id, number, version=if_match_version(request.headers.get("If-Match")),
                                source=source())
            return "", 204
    except StaleRound as error:
        return stale_round_answer(error)
    return jsonify(rnd), 200, {"ETag": etag(ledger.round_version(db, session_id, number))}


@bp.get("/sessions/<session:session_id>/history")
def history(session_id: int) -> Response:
    return jsonify({"history": ledger.audit_trail(get_db(), session_id)})


@bp.post("/sessions/<session:session_id>/history/<int:audit_id>/restore")
def restore_round(session_id: int, audit_id: int) -> ResponseReturnValue:
    """Bring back the round that history entry ``audit_id`` deleted (201); a round comes back once (409)."""
    rnd = ledger.restore_round(get_db(), session_id, audit_id, source=source())
    return jsonify(rnd), 201


@bp.get("/sessions/<session:session_id>/export.csv")
def export_csv(session_id: int) -> Response:
    text = ledger.export_csv(get_db(), session_id)
    return Response(text, mimetype="text/csv",
                    headers={"Content-Disposition": f"attachment; filename=tiplu-session-{session_id}.csv"})


@bp.get("/sessions/<session:session_id>/export.json")
def export_json(session_id: int) -> Response:
    data = ledger.export_json(get_db(), session_id)
    response = jsonify(data)
    response.headers["Content-Disposition"] = f"attachment; filename=tiplu-session-{data['session']['id']}.json"
    return response


@bp.get("/devices")
def devices() -> Response:
    """The devices let in with the table code (each phone's cookie), newest first; ``this`` is the asking one;
    and those shut out."""
    return jsonify({"devices": security.list_devices(), "shut_out": security.list_devices(shut_out=True)})


@bp.delete("/devices/<device_id>")
def revoke_device(device_id: str) -> ResponseReturnValue:
    """Shut one device out (its cookie stops working; it must enter the code again)."""
    security.revoke_device(device_id)
    return "", 204


@bp.post("/devices/<device_id>/let-in")
def let_in_device(device_id: str) -> ResponseReturnValue:
    """Let a device that was shut out in again (its cookie works again; the code alone does not)."""
    security.set_device_revoked(device_id, False)
    return "", 204


def uploaded_photo() -> bytes:
    """The bytes of the multipart field ``image`` (read at most one byte past the limit)."""
    upload = request.files.get("image")
    if upload is None:
        if request.mimetype != "multipart/form-data":
            raise BadRequest(_("send the photo as multipart/form-data with the file in the field \"image\" "
                               "(curl -F image=@photo.jpg ...), not as %(type)s", type=request.mimetype or "no type"))
        raise BadRequest(_("no photo: put the file in the multipart field \"image\""))
    max_bytes, _pixels = photos.image_limits()
    return upload.stream.read(max_bytes + 1)


def decoded_photo(data: bytes) -> photos.PhotoToKeep:
    """The upload's pixels as they are read and kept (:func:`web.photos.decode_for_reading`); call it
    inside :func:`web.photos.photo_slot` (the header is checked first)."""
    max_bytes, max_pixels = photos.image_limits()
    return photos.decode_for_reading(data, max_bytes=max_bytes, max_pixels=max_pixels)


def read_photo(image: np.ndarray, name: str, model_path: str | None = None,
               rules: RuleSet | None = None) -> PhotoReading:
    """The photo's cards, read with ``model_path`` (a session's deck) or the app's standard model, and
    bounded by ``rules`` (a session's: how many copies of a card, how many printed jokers)."""
    return photos.read_image(image, name=name, model_path=model_path or current_app.config.get("MODEL_PATH"),
                             rules=rules)


def read_and_keep(session_id: int, deck: str | None, rules: RuleSet, take: Callable[[], photos.PhotoToKeep],
                  cost: int = 0) -> tuple[photos.StoredPhoto, PhotoReading, str | None]:
    """Take the picture, read its cards with the session's deck and rules, then store both with the session
    in one step (inside a photo slot); and a notice when the deck is gone and the standard one read it.

    The upload form's ``purpose`` and ``seat`` are checked before anything is
    decoded, and nothing is written until the reading succeeded, so a failed request
    leaves no file and no row.
    """
    target = payloads.photo_target(request.form)
    photos.check_free_space(photos.photo_folder())
    model_path, notice = decks.model_for(deck)
    read_with = "" if deck is None or notice else deck  # the deck model_for found, '' for the standard one
    photo_id = photos.new_photo_id()
    with photos.photo_slot(cost):
        taken = take()
        image = photos.fit_for_reading(taken.image)
        reading = read_photo(image, f"{photo_id}.jpg", model_path, rules)
        photo = photos.store_photo(get_db(), photos.photo_folder(), image, session_id=session_id,
                                   purpose=target.purpose, seat=target.seat, reading=reading.to_dict(),
                                   photo_id=photo_id, read_with=read_with,
                                   jpeg=taken.jpeg if image is taken.image else None)
    return photo, reading, notice


def photo_answer(photo: photos.StoredPhoto) -> dict[str, Any]:
    """The stored photo as the answers show it: its row and where to fetch it."""
    return {**photo.to_dict(), "url": url_for("page_api.photo_file", session_id=photo.session_id,
                                              photo_id=photo.id)}


@bp.post("/detect")
@takes_upload
def detect() -> Response:
    """The cards in one photo, as ``tiplu detect`` prints them.

    With the form field ``session`` (and optionally ``purpose``, ``seat``) the photo is
    also kept with that session, under a generated name, and ``photo`` says where. With
    ``tiplu`` (or, for rummy, ``turned``) and optionally ``seen`` (``false``) and, without a
    session, ``rules`` (a family's name), the answer also holds ``score``: the verdict, maal and
    doubts as ``tiplu score --json`` prints them (:func:`vision.score.score_reading`, the one path
    the photo review's check takes too), under the session's rules and player count.
    """
    data = uploaded_photo()
    session_field = request.form.get("session", "").strip()
    asked = payloads.score_fields(request.form)
    if not session_field:
        rules = payloads.rules_named(request.form.get("rules"))
        with photos.photo_slot(photos.decode_cost(data)):
            reading = read_photo(decoded_photo(data).image, "upload")
        return jsonify(localized(reading.to_dict() | scored_answer(reading, rules, asked)))
    session = ledger.session_setup(get_db(), payloads.session_id(session_field))
    photo, reading, notice = read_and_keep(session.id, session.deck, session.rules, lambda: decoded_photo(data),
                                           photos.decode_cost(data))
    return jsonify(localized({**reading.to_dict(), "photo": photo_answer(photo),
                              **scored_answer(reading, session.rules, asked, len(session.players)),
                              **({"notice": notice} if notice else {})}))


def scored_answer(reading: PhotoReading, rules: RuleSet, asked: payloads.ScoreFields,
                  players: int | None = None) -> dict[str, Any]:
    """``{"score": ...}`` (``tiplu score --json``'s shape) when the upload named a tiplu or a turned card, else ``{}``."""
    if asked.tiplu is None and asked.turned is None:
        return {}
    verdict = score_reading(reading, rules, tiplu=asked.tiplu, turned=asked.turned, seen=asked.seen, players=players)
    return {"score": verdict.to_dict()}


def json_for_session(view: Callable[..., ResponseReturnValue]) -> Callable[..., ResponseReturnValue]:
    """Find the URL's session first (an unknown one answers 404 like a page), then answer as JSON.

    The view gets the session (as :func:`web.ledger.get_session` gives it); what it raises
    from :data:`~web.errors.USER_ERRORS` answers ``{"error": ...}`` with its status, since
    a page's script asked.
    """
    @functools.wraps(view)
    def answer(session_id: int, **kwargs: Any) -> ResponseReturnValue:
        session = ledger.get_session(get_db(), session_id)
        try:
            return view(session, **kwargs)
        except USER_ERRORS as error:
            return json_error(error)
    return answer


def from_camera(take: Callable[[], Picture]) -> Picture:
    """What the server's camera gives, or :class:`Unavailable` saying to check it."""
    try:
        return take()
    except (OSError, RuntimeError) as error:
        raise Unavailable(_("the camera gave no picture (%(why)s); check it is connected", why=error)) from None


def keep_and_read(session: Mapping[str, Any], take: Callable[[], photos.PhotoToKeep]) -> ResponseReturnValue:
    """Read the photo's cards with the session's deck, store both with the session and answer them (201)."""
    photo, reading, notice = read_and_keep(session["id"], session["deck"], ledger.rules_of(session), take)
    return jsonify({"photo": photo_answer(photo), "reading": localized(reading.to_dict()),
                    **({"notice": notice} if notice else {})}), 201


@page_api.post("/sessions/<session:session_id>/photos")
@json_for_session
def upload_photo(session: Mapping[str, Any]) -> ResponseReturnValue:
    """A photo from the phone's camera or files (field ``image``): kept with the session, cards read."""
    upload = request.files.get("image")
    if upload is None:
        raise BadRequest(_("no photo arrived: take the photo again"))
    max_bytes, _pixels = photos.image_limits()
    data = upload.stream.read(max_bytes + 1)
    return keep_and_read(session, lambda: decoded_photo(data))


@page_api.post("/sessions/<session:session_id>/photos/camera")
@json_for_session
def camera_photo(session: Mapping[str, Any]) -> ResponseReturnValue:
    """A photo from the camera attached to the server (404 when there is none)."""
    camera = camera_for(current_app)
    if camera is None:
        raise NotFound(_("this server has no camera; use the phone's Photograph button"))
    return keep_and_read(session, lambda: photos.PhotoToKeep(from_camera(camera.frame)))


@page_api.get("/camera/preview.jpg")
def camera_preview() -> ResponseReturnValue:
    """The camera's current view as a small JPEG; the page reloads it for a live preview."""
    camera = camera_for(current_app)
    try:
        if camera is None:
            raise NotFound(_("this server has no camera"))
        jpeg = from_camera(camera.preview_jpeg)
    except USER_ERRORS as error:
        return json_error(error)
    return Response(jpeg, mimetype="image/jpeg", headers={"Cache-Control": "no-store"})


@page_api.get("/sessions/<session:session_id>/photos/<photo_id>.jpg")
def photo_file(session_id: int, photo_id: str) -> ResponseReturnValue:
    """A kept photo (like every answer, only with the table code when the server asks for one)."""
    db = get_db()
    photo = photos.find_photo(db, ledger.session_setup(db, session_id).id, photo_id)
    path = photos.photo_folder() / f"{photo['id']}.jpg"
    if not path.is_file():
        return json_error(NotFound(_("the photo file is gone from the server")))
    response = send_file(path, mimetype="image/jpeg", max_age=0, conditional=False)
    response.headers["Cache-Control"] = "private, no-store"
    return response


@page_api.post("/sessions/<session:session_id>/cards/check")
@json_for_session
def check_cards(session: Mapping[str, Any]) -> ResponseReturnValue:
    """The scorer's verdict, maal or penalty for cards read from a photo (nothing is saved).

    Send a JSON object, e.g. ``{"cards": ["10C", "JC"], "purpose": "hand"}``; a hand is judged
    as ``tiplu score`` judges it (:func:`web.photos.check_cards`, web/API.md gives the fields).
    """
    try:
        payload = json_body()
    except BadRequest as error:
        raise BadRequest(_('%(why)s: send a JSON object, e.g. {"cards": ["10C", "JC"], "purpose": "hand"}',
                           why=error)) from None
    return jsonify(localized(photos.check_cards(session, payload))), 200


@page_api.post("/sessions/<session:session_id>/rounds/preview")
@json_for_session
def preview_form_round(session: Mapping[str, Any]) -> ResponseReturnValue:
    """The round form as the scorer would settle it, without saving (the form's live preview)."""
    return jsonify({"round": localized(score_round(sent_round(session["id"])).to_dict())})


@page_api.get("/decks/status")
def deck_status() -> Response:
    """The background learner's state, for the Decks page's progress bar:
    ``{"kind", "deck", "title", "state": "idle"|"running"|"done"|"failed", "epoch", "epochs", "rounds", "scenes",
    "progress", "message", "error", "result"}``, its words in the request's language."""
    response = jsonify(decks.runner().status().to_dict())
    response.headers["Cache-Control"] = "no-store"
    return response
