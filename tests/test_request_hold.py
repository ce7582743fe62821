"""A bot that does not read its decision request cannot stall its game past its own time:
the request's write is cut when the decision's time is up (at least a second), the
decision is a timeout and the stream ends. Before, the write could stay blocked for the
10 s write timeout; a bot that then read its request answered late, took a strike under
a strikes policy and did it again, stalling its game, and the three other seats in it,
for 10 s a strike at the cost of a few moves played for it.

Over real gRPC: the seats are clients here that shrink their receive window to one byte
(any gRPC client can), so the referee's write to them ends only when they read; the
holder takes bundles, so each write after its Welcome carries a decision request."""

from __future__ import annotations

import asyncio
from pathlib import Path

from window_seats import play_seat, token

from harness.referee.arena import Arena
from harness.referee.outcome import FaultKind, FaultPolicy, GameResult, Termination, TimeControl
from harness.referee.pool import Entrant
from harness.rules.config import RulesConfig

NAMES = ["holder", "second", "third", "fourth"]
# 1 s a decision and a 1 s bank (the seats that answer at once can bear a loaded
# machine's pause): the holder's request is cut after its 2 s; it reads 4 s late,
# far short of the 10 s write timeout.
TIME_CONTROL = "1+1"
HOLD_S = 4.0


async def play(tmp_path: Path) -> GameResult:
    over = {name: asyncio.Event() for name in NAMES}

    async def late(n: int) -> None:  # its first two decision requests: read late
        if n in (1, 2):
            await asyncio.sleep(HOLD_S)

    async with Arena(log_dir=tmp_path) as arena:
        for name in NAMES:
            arena.add(Entrant(name, tokens=(token(name),)), 1)
        clients = [asyncio.ensure_future(play_seat(
            arena.server.address, name, over[name], bundles=name == "holder",
            before_read=late if name == "holder" else lambda n: asyncio.sleep(0)))
            for name in NAMES]
        try:
            return await arena.play("g-1", RulesConfig(target=10), 5, NAMES,
                                    time_control=TimeControl.parse(TIME_CONTROL),
                                    policy=FaultPolicy.parse("strikes:3"))
        finally:
            for client in clients:
                client.cancel()
            await asyncio.gather(*clients, return_exceptions=True)


def test_a_bot_that_does_not_read_its_request_times_out_and_its_stream_ends(
        tmp_path: Path) -> None:
    result = asyncio.run(play(tmp_path))
    # The first held request is a timeout, and ends the stream: at its next turn the
    # holder is gone, and forfeits (strikes or not), instead of stalling 10 s a strike.
    assert result.termination is Termination.FORFEIT, result
    assert [(f.bot, f.kind) for f in result.faults] == [
        ("holder", FaultKind.TIMEOUT), ("holder", FaultKind.DISCONNECT)], result.faults
    assert "it did not read its request, so its stream was ended" in result.faults[0].detail
