"""The gRPC port is not a way to stall the referee: a real ``ladder`` process with its
open-file limit at 1,024 plays on while 1,100 connections are dialed to its gRPC port
and then say nothing (no TLS, no HTTP/2 preface: a client that dials and waits), and
while one connection opens 1,200 streams that never send a Hello.

Before the fix each such connection held one of the ladder's files until gRPC's
two-minute handshake limit: the ladder reached its limit of 1,024 open files (so that it
could start no bot, open no log and accept no one), and gRPC wrote "File descriptor
limit reached" to stderr every second for as long as the attack went on. Now each
listening port takes at most :func:`~harness.referee.server.connection_cap` connections
(the rest are closed as they are accepted) and a connection that has not finished its
handshake within :data:`~harness.referee.server.TRANSPORT_HANDSHAKE_MS` is closed.

Streams that wait for their Hello were held until the handshake timeout (10 s), as many
as a client cared to open on one connection. Now at most
:data:`~harness.referee.server.MAX_OPENING` wait at once; for one more, the oldest
waiting stream of the caller with the most is ended at once with ``RESOURCE_EXHAUSTED``
(bots retry it as a dropped connection; tests/test_hello_waiting_room.py shows that a
bot still gets in).

The games are compared as in ``tests/test_http_slow_clients.py``: per second of the
ladder's own CPU time, and with no stretch of 5 s without a game stored. The ladder's
bots are paced (:data:`~attack_support.PACE_MS`), so that it plays fewer games meanwhile
for the same measure."""

from __future__ import annotations

import asyncio
import os
import resource
import signal
import socket
from collections import Counter
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from attack_support import (
    FILE_LIMIT,
    PACE_MS,
    STDERR_GROWTH,
    Window,
    games_stored,
    gap_allowed,
    window,
)
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hostile_bot import closed_by_server
from serve_support import Ladder
from waiting import WAIT_S, wait_for

from harness.protocol import RefereeServiceStub
from harness.referee.server import FILES_KEPT, HANDSHAKE_TIMEOUT, MAX_OPENING

IDLE_CLIENTS = 1100
SILENT_STREAMS = 1200  # over twice the cap: without it, all are held at once
SILENT_GAMES = 100
"""The games the window of the silent streams holds at least. Opening, refusing and timing
out the streams costs the ladder a fixed amount of CPU, which grows on a loaded machine:
beside a second copy of the suite 2,000 streams cost it about as much as 50 games, and
stored 40 games meanwhile. (With the bots paced, :data:`~attack_support.PACE_MS`, a
window of 6 s holds about 45 games on an idle machine; this one goes on to 100.)"""
SILENT_WINDOW_MAX_S = 120.0
"""How long the window of the silent streams may go on to hold :data:`SILENT_GAMES`. With
two more copies of the suite on the same two cores (load average up to 36), the ladder
stored 32 games in the usual 60 s, and the streams' fixed cost, about 40 games' worth
of its CPU, took its rate per CPU second below half: the games were not stalled, too
few of them had been played. The window ends as soon as it holds its games, so only such
a load lengthens it."""


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


class Attacked:
    """The module's ladder, and its games per CPU second before any attack."""

    def __init__(self, ladder: Ladder, before: Window) -> None:
        self.ladder = ladder
        self.before = before


@pytest.fixture(scope="module")
def limited_ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Attacked]:
    """One ladder for the module's attacks (each starts and ends within its test), its
    open-file limit at 1,024, its games measured once before them."""
    ladder = Ladder(tmp_path_factory.mktemp("grpc-limits"),
                    file_limit=(FILE_LIMIT, FILE_LIMIT), pace_ms=PACE_MS)
    try:
        wait_for(lambda: games_stored(ladder.store) >= 10, "the games to flow")
        yield Attacked(ladder, window(ladder.store, ladder.proc.pid))
    finally:
        ladder.stop(signal.SIGINT)


@pytest.mark.long
def test_idle_connections_to_the_grpc_port_neither_fill_the_file_table_nor_stall_the_games(
        limited_ladder: Attacked) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < IDLE_CLIENTS + 256:
        pytest.skip(f"the open-file limit ({hard}) is too low for {IDLE_CLIENTS} clients")
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    ladder, before = limited_ladder.ladder, limited_ladder.before
    pid = ladder.proc.pid
    logged = ladder.log.stat().st_size
    idle: list[socket.socket] = []
    most_files = 0
    try:
        for _ in range(IDLE_CLIENTS):
            idle.append(socket.create_connection(("127.0.0.1", ladder.port), timeout=WAIT_S))
            idle[-1].setblocking(False)
            if len(idle) % 100 == 0:
                most_files = max(most_files, open_files(pid))
        during = window(ladder.store, pid)
        most_files = max(most_files, open_files(pid))
        # Over the cap: closed at once; the others, once the handshake limit is up.
        wait_for(lambda: all(closed_by_server(s) for s in idle),
                 "the ladder to close every idle connection")
    finally:
        for sock in idle:
            sock.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert most_files <= FILE_LIMIT - FILES_KEPT, most_files
    assert during.per_cpu_s >= before.per_cpu_s / 2, (before, during)
    assert during.longest_gap_s < gap_allowed(before), (before, during)
    # The port serves again: a health check over a new connection is answered.
    with grpc.insecure_channel(ladder.address) as channel:
        health: Any = health_pb2_grpc.HealthStub(channel)  # the stubs type no methods
        answer = health.Check(health_pb2.HealthCheckRequest(), timeout=WAIT_S)
    assert answer.status == health_pb2.HealthCheckResponse.SERVING
    log = ladder.log.read_text()
    assert ladder.log.stat().st_size - logged < STDERR_GROWTH
    assert "File descriptor limit reached" not in log


async def silent_streams(address: str, count: int, ladder: Ladder
                         ) -> tuple[float, list[tuple[str, float]], Window]:
    """Open ``count`` Connect streams on one connection and send nothing on them; returns
    when they were opened and how each ended (its status code's name, and when the
    client learnt it), in seconds of the event loop's clock, and the ladder's games
    meanwhile."""
    loop = asyncio.get_running_loop()

    async def end(call: Any) -> tuple[str, float]:
        code = await call.code()
        return code.name, loop.time()

    async with grpc.aio.insecure_channel(address) as channel:
        stub = RefereeServiceStub(channel)
        opened = loop.time()
        calls = [stub.Connect() for _ in range(count)]
        ends = asyncio.gather(*(end(call) for call in calls))
        await asyncio.gather(*(call.wait_for_connection() for call in calls),
                             return_exceptions=True)
        during = await loop.run_in_executor(None, window, ladder.store, ladder.proc.pid,
                                            SILENT_GAMES, SILENT_WINDOW_MAX_S)
        return opened, await asyncio.wait_for(ends, WAIT_S), during


def most_surely_held_at_once(opened: float, ends: list[tuple[str, float]]) -> int:
    """How many of the streams that the referee held until its handshake timeout it
    surely held at one time: a lower bound of the most it held at once, which no delay
    of the machine can raise. Such a stream waited :data:`HANDSHAKE_TIMEOUT` seconds in
    the referee's waiting room, from a time no sooner than the client ``opened`` it to a
    time no later than its end reached the client: so it was there all through the
    stretch from ``HANDSHAKE_TIMEOUT`` before its end reached the client to
    ``HANDSHAKE_TIMEOUT`` after it was opened. Every such stretch ends at that one time,
    so all the streams whose stretch is not empty (whose end came less than twice the
    timeout after they were opened) were there at once, just before it. Without the cap,
    the referee held all of them at once."""
    return sum(1 for code, when in ends
               if code == "DEADLINE_EXCEEDED" and when < opened + 2 * HANDSHAKE_TIMEOUT)


@pytest.mark.long
def test_streams_that_never_say_hello_are_refused_past_a_cap_and_do_not_stall_the_games(
        limited_ladder: Attacked) -> None:
    ladder, before = limited_ladder.ladder, limited_ladder.before
    opened, timed, during = asyncio.run(silent_streams(ladder.address, SILENT_STREAMS,
                                                       ladder))
    ends = Counter(code for code, _ in timed)
    assert sum(ends.values()) == SILENT_STREAMS
    assert set(ends) <= {"DEADLINE_EXCEEDED", "RESOURCE_EXHAUSTED", "CANCELLED"}, ends
    held = most_surely_held_at_once(opened, timed)
    assert held <= MAX_OPENING, (held, ends)  # of those held until the timeout
    assert ends["RESOURCE_EXHAUSTED"] > 0, ends  # the rest were refused at once
    assert during.per_cpu_s >= before.per_cpu_s / 2, (before, during)
    assert during.longest_gap_s < gap_allowed(before), (before, during)
    # The games go on after the attack.
    played = games_stored(ladder.store)
    wait_for(lambda: games_stored(ladder.store) >= played + 10, "more games")
