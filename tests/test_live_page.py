"""``serve --http-port``: the live page, against a real ``python -m harness serve`` that
runs real tournaments (sample bots over gRPC). Plain HTTP checks the JSON, the event
streams, the links and that no secret is ever served; Playwright driving the system's
Chromium checks that the pages follow a tournament without a reload."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from browser_support import CHROMIUM, CHROMIUM_ARGS
from configs import HEURISTIC, RANDOM, Bot, Raw, bot, toml_config
from playwright.sync_api import Browser, sync_playwright
from serve_support import Serve, config, delayed_random_bot, serve, stub, watch_until
from test_web_pages import Tab

from harness.protocol import operator as op
from harness.storage.results import ResultsStore

WAIT_S = 120.0


def live_url(server: Serve) -> str:
    return server.said("live page on ").rstrip("/")


def get(url: str) -> tuple[int, str, str]:
    """``(status, content type, body)``; error statuses are returned, not raised."""
    try:
        with urllib.request.urlopen(url, timeout=WAIT_S) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode()


def get_json(url: str) -> Any:
    status, kind, body = get(url)
    assert status == 200 and kind.startswith("application/json"), (status, kind, body)
    return json.loads(body)


def events(url: str, until: Callable[[Any], bool]) -> list[Any]:
    """The messages of the event stream at ``url`` up to the first that ``until`` accepts."""
    seen: list[Any] = []
    with urllib.request.urlopen(url, timeout=WAIT_S) as r:
        assert r.headers["Content-Type"].startswith("text/event-stream")
        for raw in r:
            line = raw.decode().rstrip("\n")
            if line.startswith("data: "):
                seen.append(json.loads(line[len("data: "):]))
                if until(seen[-1]):
                    return seen
    raise AssertionError(f"the stream ended before the awaited message; got {seen}")


def ended(t: dict[str, Any]) -> bool:
    return t["status"] in op.FINAL_STATUSES


def test_event_streams_and_json_follow_a_tournament_to_its_end(tmp_path: Path) -> None:
    with serve(tmp_path / "out", "--http-port", "0") as server, \
            grpc.insecure_channel(server.address) as channel:
        url = live_url(server)
        assert get_json(f"{url}/api/tournaments") == []
        ops = stub(channel)
        # The random bot dials late: the streams open before the first game ends.
        ops.StartTournament(op.StartTournamentRequest(config_toml=config(
            "live", games=2, random_command=delayed_random_bot(3.0))))
        index = events(f"{url}/events", lambda ts: any(t["id"] == "live" and ended(t)
                                                       for t in ts))
        assert len(index) >= 2
        updates = events(f"{url}/t/live/events", ended)
        final = updates[-1]
        assert final["status"] == "finished" and final["id"] == "live"
        assert final == get_json(f"{url}/api/t/live")
        assert final["games_done"] == final["games_total"] == 4
        assert {r["name"] for r in final["standings"]} == {"random", "heuristic"}
        assert sum(r["games"] for r in final["standings"]) == 8
        assert final["rate"] is None or final["rate"] > 0
        with ResultsStore(tmp_path / "out" / "live" / "results.sqlite") as store:
            stored = {g.game_key: g for g in store.games("live")}
        assert sorted(g["key"] for g in final["recent"]) == sorted(stored)
        for game in final["recent"]:
            assert tuple(game["scores"]) == stored[game["key"]].scores
            status, kind, page = get(url + game["replay"])
            assert status == 200 and kind.startswith("text/html")
            assert 'id="game-data"' in page and game["key"] in page
        assert final["report"] == "/t/live/report.html"
        status, _, report = get(url + final["report"])
        assert status == 200 and "Standings" in report
        [summary] = get_json(f"{url}/api/tournaments")
        assert summary["id"] == "live" and summary["status"] == "finished"
        assert summary["leader"] == final["standings"][0]["name"]
        assert get(f"{url}/t/nosuch")[0] == 404
        assert get(f"{url}/t/live/replay?game=nosuch")[0] == 404
        assert get(f"{url}/t/live/replays/..%2Fconfig.toml")[0] == 404


def test_a_cancelled_then_resumed_tournament_is_followed_again(tmp_path: Path) -> None:
    with serve(tmp_path / "out", "--http-port", "0") as server, \
            grpc.insecure_channel(server.address) as channel:
        url = live_url(server)
        ops = stub(channel)
        ops.StartTournament(op.StartTournamentRequest(config_toml=config(
            "again", games=1, random_command=delayed_random_bot(2.0))))
        ops.CancelTournament(op.CancelTournamentRequest(tournament_id="again"))
        assert get_json(f"{url}/api/t/again")["status"] == "cancelled"
        ops.ResumeTournament(op.ResumeTournamentRequest(tournament_id="again"))
        updates = events(f"{url}/t/again/events", ended)
    assert [u["status"] for u in updates if u["status"] == "cancelled"] == []
    assert updates[-1]["status"] == "finished" and updates[-1]["games_done"] == 2


def test_the_live_page_is_off_by_default_and_on_loopback_when_asked(tmp_path: Path) -> None:
    with serve(tmp_path / "a") as server:
        assert not any("live page" in line for line in server.lines)
    with serve(tmp_path / "b", "--http-port", "0") as server:
        assert live_url(server).startswith("http://127.0.0.1:")


def test_a_shutdown_ends_open_event_streams_cleanly(tmp_path: Path) -> None:
    with serve(tmp_path / "out", "--http-port", "0") as server:
        with urllib.request.urlopen(f"{live_url(server)}/events", timeout=WAIT_S) as stream:
            assert stream.readline() == b"retry: 2000\n"
            assert server.stop(signal.SIGTERM) == 0, server.stderr
            rest = stream.read()  # the stream ends with the server
        assert b"data: []" in rest
    assert "Traceback" not in server.stderr


FIRST_START_FAILS = ("import pathlib, runpy, sys; f = pathlib.Path(sys.argv[2]); "
                     "f.exists() or (f.touch(), print(sys.argv[1]), sys.exit(3)); "
                     "sys.argv = ['random_bot']; "
                     "runpy.run_module('sample_bots.random_bot', run_name='__main__')")


def _remote_config(bot_token: str) -> str:
    return toml_config("remote", games=1, tc="5+10", rules={"form": "two-handed", "target": 3},
                       bots=(bot("local", HEURISTIC),
                             Bot("far", extra=f"tokens = [{json.dumps(bot_token)}]")))


def _flaky_config(name: str, secret: str, flag: Path, limit: int) -> str:
    """A bot whose first start fails after printing ``secret`` (the end of its log);
    with ``limit`` 1 the run fails there, otherwise the bot starts again."""
    command = Raw(json.dumps(["{python}", "-c", FIRST_START_FAILS, secret, str(flag)]))
    return toml_config(name, games=1, tc="5+10", max_startup_failures=limit,
                       rules={"form": "two-handed", "target": 3},
                       bots=(bot("flaky", command), bot("random", RANDOM)))


def _every_response(url: str, ids: list[str]) -> Iterator[tuple[str, str]]:
    """``(address, body)`` of every page, stream message and link of the live page."""
    for path in ("/", "/api/tournaments", "/t/nosuch", "/favicon.ico"):
        yield path, get(url + path)[2]
    yield "/events", json.dumps(events(f"{url}/events", lambda _: True))
    for tid in ids:
        for path in (f"/t/{tid}", f"/api/t/{tid}", f"/t/{tid}/report.html"):
            yield path, get(url + path)[2]
        view = events(f"{url}/t/{tid}/events", lambda _: True)[0]
        yield f"/t/{tid}/events", json.dumps(view)
        for game in view["recent"]:
            yield game["replay"], get(url + game["replay"])[2]
        report = get(f"{url}/t/{tid}/report.html")[2]
        for href in re.findall(r'href="(replays/[^"]+)"', report):
            yield href, get(f"{url}/t/{tid}/{href}")[2]


def test_no_token_command_line_or_error_text_is_ever_served(tmp_path: Path) -> None:
    operator_token, bot_token = "op-secret-7d41", "bot-secret-93ac"
    flaky_secret, failing_secret = "cmd-secret-flaky-51", "cmd-secret-failing-62"
    metadata = (("authorization", f"Bearer {operator_token}"),)
    out = tmp_path / "out"
    with serve(out, "--http-port", "0", env={"EUCHRE_OPERATOR_TOKEN": operator_token}) \
            as server, grpc.insecure_channel(server.address) as channel:
        ops = stub(channel)
        for toml in (_remote_config(bot_token),
                     _flaky_config("flaky", flaky_secret, tmp_path / "flag1", 3),
                     _flaky_config("failing", failing_secret, tmp_path / "flag2", 1)):
            ops.StartTournament(op.StartTournamentRequest(config_toml=toml), metadata=metadata)
        remote = subprocess.Popen(
            [sys.executable, "-m", "sample_bots.random_bot"], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "EUCHRE_REFEREE_ADDRESS": server.address,
                 "EUCHRE_BOT_TOKEN": bot_token})
        try:
            finals = {tid: watch_until(ops, tid, metadata=metadata)
                      for tid in ("remote", "flaky", "failing")}
        finally:
            remote.kill()
            remote.wait(30)
        statuses = {tid: op.status_name(p.status) for tid, p in finals.items()}
        assert statuses == {"remote": "finished", "flaky": "finished", "failing": "failed"}
        # The secrets are there to leak: operators see the failing bot's last words (its
        # secret), and the flaky bot's stored forfeit quotes them from its log.
        assert failing_secret in finals["failing"].detail
        with ResultsStore(out / "flaky" / "results.sqlite") as store:
            details = [f.log_tail for g in store.games("flaky") for f in g.faults]
        assert any(flaky_secret in d for d in details), details
        responses = list(_every_response(live_url(server), ["remote", "flaky", "failing"]))
    assert len(responses) > 15
    for address, body in responses:
        for secret in (operator_token, bot_token, flaky_secret, failing_secret,
                       "sample_bots", "{python}"):
            assert secret not in body, (address, secret)


# ---------------------------------------------------------------------- in a browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if CHROMIUM is None:
        pytest.skip("no chromium executable (apt-get install chromium, or set CHROMIUM)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.mark.long
def test_the_pages_follow_a_tournament_in_a_browser_without_a_reload(
        tmp_path: Path, browser: Browser) -> None:
    tab = Tab(browser)
    page = tab.page
    timeout_ms = WAIT_S * 1000
    with serve(tmp_path / "out", "--http-port", "0") as server, \
            grpc.insecure_channel(server.address) as channel:
        url = live_url(server)
        page.goto(url + "/")
        page.wait_for_selector("#none:not([hidden])", timeout=timeout_ms)
        page.evaluate("window.notReloaded = true")
        # The random bot dials late, so no game can end before the pages are open.
        stub(channel).StartTournament(op.StartTournamentRequest(config_toml=config(
            "browser", games=2, random_command=delayed_random_bot(5.0))))
        row = page.locator('#tournaments tr[data-tournament="browser"]')
        row.wait_for(timeout=timeout_ms)
        assert page.evaluate("window.notReloaded") is True
        page.screenshot(path=str(tmp_path / "live-index.png"))
        row.locator("a").click()
        page.wait_for_selector("#status.running", timeout=timeout_ms)
        page.evaluate("window.notReloaded = true")
        page.wait_for_selector("#status.finished", timeout=timeout_ms)
        assert page.evaluate("window.notReloaded") is True
        assert page.locator("#games-done").inner_text() == "4"
        assert page.locator("#title").inner_text() == "browser"
        assert page.locator("#standings tbody tr").count() == 2
        assert page.locator("#recent tbody tr").count() == 4
        page.locator("#report-link").wait_for(timeout=timeout_ms)
        page.screenshot(path=str(tmp_path / "live.png"), full_page=True)
        newest = page.locator("#recent tbody tr").first
        score = newest.locator('td[data-field="score"]').inner_text()
        newest.locator("a", has_text="replay").click()
        page.wait_for_selector("#score", timeout=timeout_ms)
        page.keyboard.press("End")
        assert page.locator("#score").get_attribute("data-score") == score
        page.screenshot(path=str(tmp_path / "live-replay.png"))
        page.close()
    assert tab.errors == []


def test_the_live_standings_show_the_anchor_marked_and_a_sweep_above_it(
        tmp_path: Path, browser: Browser) -> None:
    """The anchor (the bot named random, which forfeits every game by playing illegally)
    lost every game: the page shows its fixed rating, marked, with no interval, and
    heuristic's bound at or above it."""
    tab = Tab(browser)
    page = tab.page
    timeout_ms = WAIT_S * 1000
    with serve(tmp_path / "out", "--http-port", "0") as server, \
            grpc.insecure_channel(server.address) as channel:
        stub(channel).StartTournament(op.StartTournamentRequest(
            config_toml=config("anchored", games=1, random_command='"{python} -m '
                               'sample_bots.faulty_bot --mode illegal"'),
            overrides={"anchor": "random"}))
        page.goto(live_url(server) + "/")
        page.locator('#tournaments tr[data-tournament="anchored"] a').click()
        page.wait_for_selector("#status.finished", timeout=timeout_ms)
        anchor = page.locator('#standings tr[data-bot="random"]')
        assert anchor.locator('td[data-field="elo"]').inner_text() == "+0 (anchor)"
        assert anchor.locator('td[data-field="ci95"]').inner_text() == "-"
        sweep = page.locator('#standings tr[data-bot="heuristic"] td[data-field="elo"]')
        text = sweep.inner_text()
        assert text.startswith("all games won: above "), text
        assert int(text.rsplit(" ", 1)[1]) >= 0
        page.close()
    assert tab.errors == []
