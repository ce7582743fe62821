"""The live pages are not a way to stall the games: real ``ladder --http-port`` and
``serve --http-port`` processes with their open-file limit at 1,024 play on while 1,100
slow clients (tests/slow_clients.py: request heads sent one byte every 5 s and never
finished, dialed again when closed) attack the page, from one address (the ladder's
test: the cap per address holds them, and another address still gets the page) or from
100 (serve's: the cap of all connections holds them).

The games played during the attack are compared with those played before it, over
windows of :data:`WINDOW_S`: per second of the playing process's own CPU time, the
rate during the attack stays at least half of the rate before it (what the attack costs
the process), and no stretch longer than :func:`gap_allowed` passes with no game stored (a
stall that costs no CPU, such as a process out of files). Games per wall-clock second
are not compared: the suite's other workers load the same two cores and move that rate
by more than half between two windows, while the rate per CPU second stays within about
a fifth of itself with or without four spinning processes beside the test. The bots
sleep :data:`~attack_support.PACE_MS` before each decision, so that each window costs
the machine fewer games for the same measure.

No game has a fault, the page answers or refuses within 5 s, slow connections are cut,
and stderr grows by under 1 MB, although 100 malformed requests, each of which makes
aiohttp log an error with a traceback, come first (it is written once, then counted).
``serve`` starts with a soft limit of 256 and raises it to the hard limit itself."""

from __future__ import annotations

import http.client
import json
import math
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest
from attack_support import (
    FILE_LIMIT,
    PACE_MS,
    STDERR_GROWTH,
    games_stored,
    gap_allowed,
    soft_file_limit,
    window,
)
from serve_support import REPO, Ladder, config, serve, stub
from waiting import WAIT_S, wait_for

from harness.protocol import operator as op
from harness.storage.results import ResultsStore
from harness.tournament.runner import store_path
from harness.web.httpguard import HEADER_TIMEOUT_S, MAX_CONNECTIONS, MAX_PER_CLIENT

SLOW_CLIENTS = 1100
PAGE_TIMEOUT_S = 5.0


def page(port: int, path: str, source: str) -> int | str:
    """The status of ``GET path`` from the loopback address ``source``, or ``"closed"``
    if the server closed the connection without a full answer. A timeout fails."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=PAGE_TIMEOUT_S,
                                            source_address=(source, 0))
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        return response.status
    except TimeoutError:
        raise AssertionError(f"{path} from {source} did not answer within "
                             f"{PAGE_TIMEOUT_S:.0f} s") from None
    except (ConnectionError, http.client.RemoteDisconnected, http.client.BadStatusLine):
        return "closed"
    finally:
        connection.close()


def malformed_requests(port: int, count: int) -> None:
    """Send ``count`` requests with a broken header (each makes aiohttp log an error
    with a traceback), from 127.0.0.2, and read each answer to the close."""
    for _ in range(count):
        with socket.create_connection(("127.0.0.1", port), timeout=PAGE_TIMEOUT_S,
                                      source_address=("127.0.0.2", 0)) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n")
            answer = b""
            while chunk := sock.recv(4096):
                answer += chunk
            assert b" 400 Bad Request" in answer.split(b"\r\n", 1)[0], answer


@contextmanager
def slow_clients(port: int, folder: Path,
                 addresses: int) -> Iterator[Callable[[], dict[str, int]]]:
    """The attackers, in a process of their own, from ``addresses`` loopback addresses;
    yields a function that reads their counts."""
    status = folder / "slow-clients.json"
    proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "slow_clients.py"),
                             "127.0.0.1", str(port), str(SLOW_CLIENTS), str(status),
                             str(addresses)])

    def counts() -> dict[str, int]:
        return dict(json.loads(status.read_text())) if status.exists() else {}

    try:
        wait_for(lambda: counts().get("dialed", 0) >= SLOW_CLIENTS or proc.poll() is not None,
                 "every slow client to dial")
        if proc.returncode == 3:
            pytest.skip(f"the open-file limit is too low for {SLOW_CLIENTS} clients")
        assert proc.poll() is None, "the slow clients stopped"
        yield counts
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def attack(port: int, api: str, store: Path, pid: int, log: Path, folder: Path, *,
           addresses: int = 1) -> None:
    """Attack the page on ``port`` from ``addresses`` addresses while process ``pid``,
    writing ``log``, stores games in ``store``, and check that the games, the page and
    the log hold up."""
    wait_for(lambda: games_stored(store) >= 10, "the games to flow")
    before = window(store, pid)
    logged = log.stat().st_size
    malformed_requests(port, 100)
    with slow_clients(port, folder, addresses) as counts:
        during = window(store, pid)
        same_address = page(port, api, "127.0.0.1")
        other_address = page(port, api, "127.0.0.2")
        seen = counts()
    growth = log.stat().st_size - logged
    assert during.per_cpu_s >= before.per_cpu_s / 2, (before, during)
    assert during.longest_gap_s < gap_allowed(before), (before, during)
    assert same_address in (200, 503, "closed")
    if addresses == 1:
        assert other_address == 200
    else:
        assert other_address in (200, 503, "closed")
    # Refused at once (a 503), or cut by the header limit (closed without an answer).
    # The server holds at most ``held`` at once, each for HEADER_TIMEOUT_S; when a loaded
    # machine stretches the dialing over several such periods, the slots freed by the
    # limit take new clients, so that many more may be held in all.
    held = MAX_PER_CLIENT if addresses == 1 else MAX_CONNECTIONS
    periods = 1 + math.ceil(seen["dialing_s"] / HEADER_TIMEOUT_S)
    assert seen["answered"] >= SLOW_CLIENTS - held * periods, seen
    assert seen["closed"] > seen["answered"], seen
    assert growth < STDERR_GROWTH, growth
    for error in ("refused an HTTP connection", "Error handling request"):
        full = [line for line in log.read_text().splitlines()
                if error in line and "more like this" not in line]
        assert len(full) == 1, full  # once; the rest are counted, one line a minute
    with ResultsStore(store) as results:
        faults = [(g.game_key, g.faults) for g in results.games() if g.faults]
    assert faults == []


@pytest.fixture()
def limited_ladder(tmp_path: Path) -> Iterator[Ladder]:
    ladder = Ladder(tmp_path, "--http-port", "0", file_limit=(FILE_LIMIT, FILE_LIMIT),
                    pace_ms=PACE_MS)
    try:
        yield ladder
    finally:
        ladder.stop(signal.SIGINT)


@pytest.mark.long
def test_slow_http_clients_do_not_stall_a_ladder(limited_ladder: Ladder,
                                                 tmp_path: Path) -> None:
    url = limited_ladder.said("live page on ")
    port = int(url.rstrip("/").rsplit(":", 1)[1])
    attack(port, "/api/ladder", limited_ladder.store, limited_ladder.proc.pid,
           limited_ladder.log, tmp_path)


@pytest.mark.long
def test_slow_http_clients_do_not_stall_serve(tmp_path: Path) -> None:
    output = tmp_path / "out"
    with serve(output, "--http-port", "0", file_limit=(256, FILE_LIMIT)) as server, \
            grpc.insecure_channel(server.address) as channel:
        url = server.said("live page on ")
        assert soft_file_limit(server.proc.pid) == FILE_LIMIT
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        stub(channel).StartTournament(op.StartTournamentRequest(
            config_toml=config("slow", games=5000, concurrency=2, pace_ms=PACE_MS)), timeout=WAIT_S)
        attack(port, "/api/tournaments", store_path(output / "slow"), server.proc.pid,
               server.log, tmp_path,
               addresses=100)
