"""A bot that reads its stream slowly makes the game wait for it, so that time is its own:
past a few seconds a game it comes off the bot's bank, and once the bank is empty the
bot's time has run out (a timeout at its next decision). Before, a bot that held each
write of the game's events for up to the write timeout (10 s) stalled its game, and the
other seats in it, for as long as it liked, at no cost.

Over real gRPC: the slow reader is a client here that takes no bundles, shrinks its
receive window to one byte (any gRPC client can) and waits before each read; it answers
its own decisions at once. The other three seats are sample bots in their own
processes."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from window_seats import play_seat, token

from harness.referee.arena import Arena
from harness.referee.outcome import FaultKind, FaultPolicy, GameResult, Termination, TimeControl
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.rules.config import RulesConfig

REPO = Path(__file__).resolve().parent.parent


async def reader(address: str, pause: float) -> None:
    """Play one seat, waiting ``pause`` seconds before each read; answer at once."""
    async def late(_: int) -> None:
        await asyncio.sleep(pause)

    await play_seat(address, "slow", asyncio.Event(), before_read=late)


async def play(tmp_path: Path, pause: float,
               policy: FaultPolicy | None = None) -> GameResult:
    names = ["slow", "random-1", "random-2", "random-3"]
    async with Arena(log_dir=tmp_path) as arena:
        arena.add(Entrant("slow", tokens=(token("slow"),)), 1)
        for name in names[1:]:
            arena.add(Entrant(name, BotCommand(
                (sys.executable, "-m", "sample_bots.random_bot"), cwd=str(REPO),
                env={"EUCHRE_BOT_SEED": "5"})), 1)
        client = asyncio.ensure_future(reader(arena.server.address, pause))
        try:
            # A whole game to 10: one to 3 could end (a lone hand) before the slow
            # reader's free seconds and bank are spent.
            return await arena.play("g-1", RulesConfig(target=10), 11, names,
                                    time_control=TimeControl.parse("1+2"),
                                    policy=policy or FaultPolicy())
        finally:
            client.cancel()
            await asyncio.gather(client, return_exceptions=True)


@pytest.mark.waits
def test_a_bot_that_holds_the_games_writes_pays_with_its_bank_then_times_out(
        tmp_path: Path) -> None:
    # Each read comes 0.3 s late: past the game's free waits, that comes off a 2 s bank.
    result = asyncio.run(play(tmp_path, 0.3))
    assert result.termination is Termination.FORFEIT, result
    (fault,) = result.faults
    assert (fault.bot, fault.kind) == ("slow", FaultKind.TIMEOUT), fault
    assert "its time ran out while the game waited" in fault.detail, fault.detail
    assert "to read its messages" in fault.detail, fault.detail


def test_a_bot_that_reads_at_once_is_never_charged_for_the_writes(tmp_path: Path) -> None:
    result = asyncio.run(play(tmp_path, 0.0))
    assert result.termination is Termination.NORMAL, result
    assert result.faults == ()


@pytest.mark.waits
def test_under_strikes_a_slow_reader_still_loses_the_game_it_stalls(tmp_path: Path) -> None:
    # A strike plays for it and the game goes on; with its bank and free seconds spent,
    # its next blocked write (after at least a second) ends its stream: it forfeits.
    result = asyncio.run(play(tmp_path, 0.3, FaultPolicy.parse("strikes:3")))
    assert result.termination is Termination.FORFEIT, result
    assert {fault.bot for fault in result.faults} == {"slow"}, result.faults
    assert "to read its messages" in result.faults[0].detail, result.faults
    assert result.faults[0].kind is FaultKind.TIMEOUT, result.faults
