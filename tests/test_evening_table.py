"""Issue 54, items 2-6, 8, 11 and 13 in process: the round form, History, a stale form and Check a hand.

The Flask test client on a real SQLite file; the pages' scripts are walked in Chromium in
``test_browser_evening.py``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

import pytest
from flask.testing import FlaskClient

from scorer import get_rules
from scorer.maal import plausible_maal
from web.app import create_app
from web_support import PLAYERS, form_version

#: A hand that finishes by melds with the tiplu JC (7 melds of 3, 21 cards, already discarded).
FINISHING = "3S 4S 5S 6H 6H 6H 9D 10D JD 2C 3C 4C KS KD KC 7C 8C 9C AH 2H 3H"


def text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#39;", "'").replace("&#34;", '"')


def round_form(**fields: str) -> dict[str, str]:
    """The round form for the four players: Anna won by melds, everybody seen, plus ``fields``."""
    return {"tiplu": "JC", "winner": "Anna", "finish": "melds", **{f"p{i}_seen": "on" for i in range(4)},
            "p1_maal": "2", **fields}


def rounds(client: FlaskClient, sid: int) -> list[dict[str, Any]]:
    return list(client.get(f"/api/sessions/{sid}").get_json()["rounds"])


# --- 2: a round without a tiplu -----------------------------------------------------------------------

@pytest.mark.parametrize("form, saved", [
    ({"no_winner": "yes"}, False),  # the empty form, "Save a round with no winner?" answered OK
    ({"winner": "Anna", "p0_seen": "on"}, False),  # a winner but no tiplu
    ({"no_winner": "yes", "stock_out": "yes"}, True),  # nobody won and nobody saw: said explicitly
    ({"winner": "Anna", "stock_out": "yes", "p0_seen": "on"}, False),  # a winner saw the tiplu
], ids=["empty", "winner without tiplu", "stock ran out", "winner and stock ticked"])
def test_a_round_without_a_tiplu_is_refused_under_its_field(client: FlaskClient, make_session: Callable[..., int],
                                                             form: dict[str, str], saved: bool) -> None:
    sid = make_session()
    page = client.post(f"/sessions/{sid}/rounds/new", data=form)
    assert (page.status_code == 302) is saved
    assert len(rounds(client, sid)) == int(saved)
    if not saved:
        html = page.get_data(as_text=True)
        assert re.search(r'id="tiplu-error"[^>]*>Enter the tiplu', html), text(html)


# --- 3: a maal above what a hand plausibly holds ----------------------------------------------------------

def test_a_maal_above_the_plausible_most_is_asked_before_saving(client: FlaskClient,
                                                                make_session: Callable[..., int]) -> None:
    sid = make_session()
    assert plausible_maal(get_rules()) == 47
    blank = text(client.get(f"/sessions/{sid}/rounds/new").get_data(as_text=True))
    assert "a hand rarely holds over 47 maal: saving asks first" in blank
    asked = client.post(f"/sessions/{sid}/rounds/new", data=round_form(p1_maal="150"))
    html = asked.get_data(as_text=True)
    assert asked.status_code == 400 and rounds(client, sid) == []
    assert "Is 150 right?" in text(html) and 'name="p1_maal_sure" value="150"' in html
    changed = client.post(f"/sessions/{sid}/rounds/new", data=round_form(p1_maal="160", p1_maal_sure="150"))
    assert changed.status_code == 400 and "Is 160 right?" in text(changed.get_data(as_text=True))
    kept = client.post(f"/sessions/{sid}/rounds/new", data=round_form(p1_maal="150", p1_maal_sure="150"))
    assert kept.status_code == 302 and rounds(client, sid)[0]["players"]["Ben"]["maal"] == 150
    plain = client.post(f"/sessions/{sid}/rounds/new", data=round_form(p1_maal="47"))
    assert plain.status_code == 302


def test_the_plausible_maal_follows_the_session_options(client: FlaskClient,
                                                        make_session: Callable[..., int]) -> None:
    sid = make_session(options={"tiplu_pair": 20, "alter": True})
    expected = plausible_maal(get_rules("nepali", {"tiplu_pair": 20, "alter": True}))
    assert expected > 47
    page = text(client.get(f"/sessions/{sid}/rounds/new").get_data(as_text=True))
    assert f"rarely holds over {expected} maal" in page


# --- 4: a restore says what it will do, and asks ------------------------------------------------------

def test_restoring_an_old_deletion_says_which_rounds_move_and_asks(client: FlaskClient,
                                                                   make_session: Callable[..., int]) -> None:
    sid = make_session()
    for maal in ("1", "2", "3"):
        assert client.post(f"/sessions/{sid}/rounds/new", data=round_form(p1_maal=maal)).status_code == 302
    assert client.post(f"/sessions/{sid}/rounds/2/delete", data=form_version(client, sid, 2)).status_code == 302
    client.post(f"/sessions/{sid}/rounds/new", data=round_form(p1_maal="4"))  # the real round 3 since
    history = client.get(f"/sessions/{sid}/history").get_data(as_text=True)
    link = re.search(r'href="(/sessions/\d+/history/\d+/restore)"', history)
    assert link, text(history)
    before = rounds(client, sid)
    plan = client.get(link.group(1))
    words = text(plan.get_data(as_text=True))
    assert plan.status_code == 200 and rounds(client, sid) == before  # asking changes nothing
    assert "It goes back in as round 2, and the 2 rounds now numbered 2 to 3 each move down one number." in words
    assert "Round 2 → 3" in words and "Round 3 → 4" in words and "counts it twice" in words
    done = client.post(link.group(1))
    assert done.status_code == 302
    assert [r["players"]["Ben"]["maal"] for r in rounds(client, sid)] == [1, 2, 3, 4]
    again = client.get(link.group(1))
    assert again.status_code == 409 and "already restored" in again.get_data(as_text=True)


# --- 5: a stale form keeps what was typed and sends it again with one tap ----------------------------------

@pytest.fixture
def guarded(tmp_path: Path) -> FlaskClient:
    """A client of an app that checks CSRF tokens, as served."""
    app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "csrf.db"), "SECRET_KEY": "t"})
    return app.test_client()


def test_a_stale_form_keeps_the_typed_round_and_resends_it(guarded: FlaskClient) -> None:
    created = guarded.post("/api/sessions", json={"players": PLAYERS})
    sid = created.get_json()["id"]
    guarded.get(f"/sessions/{sid}/rounds/new")
    typed = round_form(p1_maal="7", p2_maal="3", csrf_token="expired-token", submission="s-1")
    stale = guarded.post(f"/sessions/{sid}/rounds/new", data=typed)
    html = stale.get_data(as_text=True)
    assert stale.status_code == 400 and "CSRF" not in html and "csrf" not in text(html).lower()
    assert "Nothing was saved yet" in text(html) and "What you typed is kept" in text(html)
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', html))
    assert fields["p1_maal"] == "7" and fields["p2_maal"] == "3" and fields["tiplu"] == "JC"
    assert fields["csrf_token"] != "expired-token"
    action = re.search(r'<form method="post" action="([^"]+)" id="resend-form"', html)
    assert action and action.group(1) == f"/sessions/{sid}/rounds/new"
    sent = guarded.post(action.group(1), data=fields)
    assert sent.status_code == 302
    saved = rounds(guarded, sid)
    assert len(saved) == 1 and saved[0]["players"]["Ben"]["maal"] == 7 and saved[0]["players"]["Carla"]["maal"] == 3


# --- 6: a checked hand carries into the round form ---------------------------------------------------------

def test_a_checked_hand_is_used_for_this_round(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    checked = client.post(f"/sessions/{sid}/verify", data={"tiplu": "JC", "hand": FINISHING})
    html = checked.get_data(as_text=True)
    assert "Valid: the hand finishes" in html and "Use for this round" in html
    form = re.search(r'<form method="get" action="([^"]+)" id="use-for-round".*?</form>', html, re.S)
    assert form
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', form.group(0)))
    assert fields == {"tiplu": "JC", "finish": "melds", "winner_cards": FINISHING}
    page = client.get(form.group(1), query_string={**fields, "winner": "Carla"}).get_data(as_text=True)
    assert re.search(r'name="tiplu" value="JC"', page)
    assert re.search(r'name="winner" value="Carla" checked', page)
    assert re.search(r'name="finish" value="melds" checked', page)
    assert f'name="p2_cards" value="{FINISHING}"' in page
    assert re.search(r'name="p2_seen"[^>]*checked', page)


# --- 8, 11: the money line, and named controls ------------------------------------------------------------

def test_the_round_page_says_points_and_money_as_the_end_page(client: FlaskClient) -> None:
    form = {**{f"player{i}": name for i, name in enumerate(["Hari", "Sita"])}, "rules": "nepali",
            "rate_per_point": "10", "rate_currency": "Rs"}
    sid = int(client.post("/sessions/new", data=form).headers["Location"].rstrip("/").rsplit("/", 1)[1])
    client.post(f"/api/sessions/{sid}/rounds", json={"tiplu": "JC", "winner": "Sita", "players": {
        "Hari": {"seen": True, "maal": 0}, "Sita": {"seen": True, "maal": 3}}})
    page = text(client.get(f"/sessions/{sid}/rounds/1").get_data(as_text=True))
    end = text(client.get(f"/sessions/{sid}/end").get_data(as_text=True))
    assert "Hari pays Sita 6 points (Rs 60)" in page and "Hari pays Sita 6 points (Rs 60)" in end


def test_the_form_names_each_control_by_player_and_suit(client: FlaskClient,
                                                        make_session: Callable[..., int]) -> None:
    sid = make_session()
    html = client.get(f"/sessions/{sid}/rounds/new").get_data(as_text=True)
    assert html.index('class="skip-link" href="#round-form"') < html.index('<header')
    assert 'name="p1_seen" aria-label="Ben has seen"' in html
    assert 'data-suit="H" aria-label="hearts"' in html and 'aria-label="H"' not in html


# --- 13: two decks set the hand size -------------------------------------------------------------------------

def test_ticking_two_decks_deals_13_cards_as_the_api_does(client: FlaskClient) -> None:
    form = {**{f"player{i}": name for i, name in enumerate(["A", "B", "C"])}, "rules": "rummy",
            "opt_rummy_two_decks": "on", "opt_rummy_hand_size": "21"}
    created = client.post("/sessions/new", data=form)
    assert created.status_code == 302, text(created.get_data(as_text=True))
    sid = int(created.headers["Location"].rstrip("/").rsplit("/", 1)[1])
    api = client.post("/api/sessions", json={"players": ["A", "B", "C"], "rules": "rummy",
                                             "options": {"two_decks": True}}).get_json()
    assert client.get(f"/api/sessions/{sid}").get_json()["options"]["hand_size"] == api["options"]["hand_size"] == 13
    chosen = client.post("/sessions/new", data={**form, "opt_rummy_hand_size": "16"})
    sid = int(chosen.headers["Location"].rstrip("/").rsplit("/", 1)[1])
    assert client.get(f"/api/sessions/{sid}").get_json()["options"]["hand_size"] == 16


# --- 9: a valid dublee finish needs no "is a third copy hidden?" ----------------------------------------------

DUBLEES_22 = "2S 2S 3H 3H 4D 4D 5C 5C 6S 6S 7H 7H 8D 8D 9C 9C KS KD KC QH QH AD".split()


def test_a_valid_dublee_photo_asks_about_no_hidden_copy(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    pairs = [[i, i + 1] for i in range(0, 16, 2)]
    stacked = [{"card": DUBLEES_22[i], "box": [i * 10, 0, i * 10 + 8, 8], "kind": "stacked_copy"} for i in range(0, 16, 2)]
    payload = {"cards": DUBLEES_22, "purpose": "hand", "tiplu": "JC", "groups": [*pairs, [16, 17, 18], [19, 20], [21]],
               "faint": stacked}
    answer = client.post(f"/sessions/{sid}/cards/check", json=payload).get_json()
    assert answer["verdict"]["valid"] and answer["verdict"]["route"] == "dublees"
    assert [d for d in answer["doubts"] if d["kind"] in ("stacked_copy", "faint_card")] == []
    short = {**payload, "cards": DUBLEES_22[:-2], "groups": [*pairs, [16, 17, 18], [19]]}  # 20 cards: places count
    doubts = client.post(f"/sessions/{sid}/cards/check", json=short).get_json()["doubts"]
    assert any(d["kind"] == "stacked_copy" for d in doubts)


# --- 10: plain messages ----------------------------------------------------------------------------------------

def test_a_busy_port_is_said_in_plain_words() -> None:
    import errno
    import socket
    from io import StringIO

    from web.cli import main
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        err = StringIO()
        code = main(["serve", "--port", str(port), "--no-qr"], stdout=StringIO(), stderr=err)
    assert code == 2 and f"port {port} is already in use" in err.getvalue() and "Errno" not in err.getvalue()
    assert errno.EADDRINUSE  # the case named above


def test_one_printed_joker_is_said_in_the_singular(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session(options={"printed_jokers": 1})
    answer = client.post(f"/api/sessions/{sid}/rounds", json={
        "tiplu": "JC", "winner": "Anna", "players": {"Anna": {"seen": True, "cards": ["JOKER", "JOKER"]},
                                                      "Ben": {}, "Carla": {}, "Dan": {}}})
    assert answer.status_code == 400 and "only 1 printed joker is in play" in answer.get_json()["error"]


def test_a_faint_spot_goes_once_its_card_count_is_met(client: FlaskClient, make_session: Callable[..., int]) -> None:
    """maal_spread.jpg reads its 8 cards, both 5D in play among them (the tiplu's third lies under the stock):
    the faint corner that looks like 5D can be no other 5D."""
    sid = make_session()
    faint = [{"card": "5D", "box": [10, 10, 20, 20]}]
    maal = ["5H", "5D", "KS", "5D", "2C", "6D", "QH", "4D"]
    answer = client.post(f"/sessions/{sid}/cards/check",
                         json={"cards": maal, "purpose": "maal", "tiplu": "5D", "faint": faint}).get_json()
    assert answer["maal"]["total"] > 0 and answer["doubts"] == []
    one_short = client.post(f"/sessions/{sid}/cards/check",
                            json={"cards": maal[:3], "purpose": "maal", "tiplu": "5D", "faint": faint}).get_json()
    assert [d["kind"] for d in one_short["doubts"]] == ["faint_card"]
