"""A seat that does not read its GameOver holds back neither the other seats' GameOver
nor the game's result for longer than its own time left: every seat is sent its GameOver
at the same time, and a write no one reads is cut after the seat's free waits and bank
(at least 1 s, at most the 10 s write timeout). Before, the GameOvers went out one seat
after another, each write waiting up to 10 s, so one bot that stopped reading at the
game's end kept the seats after it, and the storing of the result, waiting that long.

Over real gRPC: each seat is a client here that takes no bundles and shrinks its receive
window to one byte (any gRPC client can), so the referee's write to it ends only when it
reads. The game goes to 1 point, so the first hand's end is the game's end."""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import Path

import pytest
from window_seats import play_seat, token

from harness.protocol import rpb
from harness.referee.arena import Arena
from harness.referee.match import READ_ALLOWANCE, WRITE_GRACE
from harness.referee.outcome import GameResult, Termination, TimeControl
from harness.referee.pool import Entrant
from harness.referee.session import MIN_WRITE_CUT, WRITE_TIMEOUT
from harness.rules.config import RulesConfig

NAMES = ["holder", "watcher", "third", "fourth"]  # the holder sits first, so is sent first
# A bank of 2 s: a GameOver no one reads is cut after at most 2 s free + 2 s bank. The
# holder that waits for the watcher gets a bank of 30 s, so that its write is cut only
# after the write timeout (10 s), however slow a loaded machine makes the watcher.
TIME_CONTROL = "1+2"
PATIENT = "1+30"
CUT = re.compile(r"session \S+ \(holder\) ended: the bot did not read its stream for "
                 r"(?P<seconds>[0-9.]+)s")


async def play(tmp_path: Path, *, holder_waits_for_watcher: bool
               ) -> tuple[GameResult, dict[str, asyncio.Event]]:
    """One game to 1 point. The holder stops reading at the hand's end: until the
    watcher has its GameOver, or for good."""
    over = {name: asyncio.Event() for name in NAMES}
    hold = over["watcher"] if holder_waits_for_watcher else asyncio.Event()
    tc = PATIENT if holder_waits_for_watcher else TIME_CONTROL
    async with Arena(log_dir=tmp_path) as arena:
        async def held(message: rpb.ConnectResponse) -> None:
            if message.WhichOneof("payload") == "game_event" and message.game_event.HasField(
                    "hand_end"):
                await hold.wait()

        for name in NAMES:
            arena.add(Entrant(name, tokens=(token(name),)), 1)
        clients = [asyncio.ensure_future(play_seat(
            arena.server.address, name, over[name],
            after_read=held if name == "holder" else None)) for name in NAMES]
        try:
            result = await arena.play("g-1", RulesConfig(target=1), 3, NAMES,
                                      time_control=TimeControl.parse(tc))
            # The seats that read get their GameOver, whatever the holder does; a holder
            # that reads once the watcher has it gets its own (it may still be reading
            # it when the game's last write has ended).
            readers = NAMES if holder_waits_for_watcher else NAMES[1:]
            await asyncio.wait_for(asyncio.gather(*(over[name].wait()
                                                    for name in readers)), 60)
            return result, over
        finally:
            for client in clients:
                client.cancel()
            await asyncio.gather(*clients, return_exceptions=True)


def played(tmp_path: Path, caplog: pytest.LogCaptureFixture, *,
           holder_waits_for_watcher: bool) -> tuple[dict[str, asyncio.Event], str]:
    """Play the game; it ends normally, with no fault (the result was decided before
    the GameOver, so not reading it is none). Returns who got a GameOver and the log."""
    caplog.set_level(logging.INFO, logger="euchre.referee")
    result, over = asyncio.run(play(tmp_path,
                                    holder_waits_for_watcher=holder_waits_for_watcher))
    assert result.termination is Termination.NORMAL, result
    assert result.faults == ()
    return over, caplog.text


def test_the_seats_get_their_game_over_at_once_whoever_does_not_read_it(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # The holder reads on only once the watcher, sent its GameOver after the holder's
    # in seat order, has it: with the GameOvers sent one seat after another, the holder
    # would wait for the watcher, the watcher for the holder, until the holder's write
    # was cut.
    over, log = played(tmp_path, caplog, holder_waits_for_watcher=True)
    assert over["holder"].is_set(), "the holder never got its GameOver"
    assert not CUT.search(log), log


def test_a_game_over_no_one_reads_holds_the_result_only_for_the_seats_time_left(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    over, log = played(tmp_path, caplog, holder_waits_for_watcher=False)
    assert not over["holder"].is_set()
    # The holder's write was cut once its free waits and bank (at most) were spent, not
    # after the write timeout.
    cut = CUT.search(log)
    assert cut is not None, log
    seconds = float(cut["seconds"])
    bank = TimeControl.parse(TIME_CONTROL).bank
    assert MIN_WRITE_CUT <= seconds <= READ_ALLOWANCE + bank + WRITE_GRACE, seconds
    assert seconds < WRITE_TIMEOUT, seconds
