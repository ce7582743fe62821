"""``ladder --http-port``: the ladder's live page, against a real ``python -m harness
ladder`` process with house bots and a registered bot that dials in with its token.
Plain HTTP checks the JSON, the event stream, the replay links and that no token is ever
served; Playwright driving the system's Chromium checks that the page follows the
standings without a reload."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from configs import HOUSE_PACE_MS
from playwright.sync_api import Browser
from serve_support import Ladder, end, random_bots
from test_live_page import WAIT_S, events, get, get_json
from test_live_page import browser as browser  # the module's Chromium (a fixture)
from test_web_pages import Tab

from harness.storage.results import ResultsStore

OPERATOR_TOKEN = "operator-secret-for-the-live-page"


class LiveLadder(Ladder):
    """A ladder process serving its live page; bots registered and started on it."""

    def __init__(self, tmp_path: Path) -> None:
        self.bots: list[subprocess.Popen[bytes]] = []
        super().__init__(tmp_path, "--http-port", "0", name="api-ladder", pace_ms=HOUSE_PACE_MS,
                         env={"EUCHRE_OPERATOR_TOKEN": OPERATOR_TOKEN})
        self.url = self.said("live page on ").rstrip("/")

    def start_bot(self, token: str) -> None:
        self.bots += random_bots(self.address, token)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        end(self.bots)
        return super().stop(sig)


@pytest.fixture()
def ladder(tmp_path: Path) -> Iterator[LiveLadder]:
    running = LiveLadder(tmp_path)
    try:
        yield running
    finally:
        running.stop(signal.SIGINT)
    assert "Traceback" not in running.stderr


def test_the_json_and_event_stream_follow_the_ladder_and_never_show_a_token(
        ladder: LiveLadder) -> None:
    token = ladder.register("visitor")
    first = events(f"{ladder.url}/events", lambda _: True)[0]
    assert first["id"] == "api-ladder"
    assert {"random", "heuristic", "visitor"} <= {r["name"] for r in first["standings"]}
    ladder.start_bot(token)
    # The stream sends again as games finish: wait there for the visitor's first games.
    updates = events(f"{ladder.url}/events", lambda view: any(
        r["name"] == "visitor" and r["games"] > 0 for r in view["standings"]))
    visitor = next(r for r in updates[-1]["standings"] if r["name"] == "visitor")
    assert visitor["owner"] == "ann" and visitor["rated"] and visitor["benched"] is None
    assert visitor["elo"] is not None or visitor["sweep"] in ("all_won", "all_lost")

    view = get_json(f"{ladder.url}/api/ladder")
    assert view["recent"], view
    with ResultsStore(ladder.store) as store:
        stored = {g.game_key: g for g in store.games("api-ladder")}
    responses = [(path, get(ladder.url + path)[2])
                 for path in ("/", "/api/ladder", "/favicon.ico", "/replay?game=nosuch")]
    responses.append(("/events", json.dumps(events(f"{ladder.url}/events",
                                                   lambda _: True))))
    for game in view["recent"]:
        assert tuple(game["scores"]) == stored[game["key"]].scores
        status, kind, page = get(ladder.url + game["replay"])
        assert status == 200 and kind.startswith("text/html")
        assert 'id="game-data"' in page and game["key"] in page
        responses.append((game["replay"], page))
    assert get(f"{ladder.url}/replay?game=nosuch")[0] == 404
    for address, body in responses:
        for secret in (token, token.split("_", 2)[2], OPERATOR_TOKEN, "sample_bots"):
            assert secret not in body, (address, secret)


def test_the_page_shows_the_standings_update_when_a_game_finishes(
        ladder: LiveLadder, browser: Browser, tmp_path: Path) -> None:
    timeout_ms = WAIT_S * 1000
    token = ladder.register("visitor")
    tab = Tab(browser)
    page = tab.page
    page.goto(ladder.url + "/")
    games = page.locator('#standings tr[data-bot="visitor"] td[data-field="games"]')
    games.wait_for(timeout=timeout_ms)
    assert games.inner_text() == "0"
    page.evaluate("window.notReloaded = true")
    ladder.start_bot(token)  # its first game ends: the row updates
    page.wait_for_function(
        """() => Number(document.querySelector(
             '#standings tr[data-bot="visitor"] td[data-field="games"]').textContent) > 0""",
        timeout=timeout_ms)
    assert page.evaluate("window.notReloaded") is True
    assert page.locator("#connection").inner_text() == "live"
    assert page.locator('#standings tr[data-bot="visitor"] td[data-field="owner"]'
                        ).inner_text() == "ann"
    assert page.locator("#standings tbody tr").count() == 3
    page.locator('#recent tbody tr td[data-field="seats"]', has_text="visitor").first.wait_for(
        timeout=timeout_ms)
    page.screenshot(path=str(tmp_path / "ladder-live.png"), full_page=True)
    page.close()
    assert tab.errors == []
