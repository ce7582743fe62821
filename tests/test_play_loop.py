"""The play loop the tournament runner and the ladder share (harness/competition/loop.py):
what it does when a unit ends, fails, or the competition stops or is cancelled. The
tournament and ladder tests play real games on it; these check each rule on its own."""

from __future__ import annotations

import asyncio
import logging

import pytest

from harness.competition.loop import PlayLoop
from harness.errors import StoreError

WAIT_S = 30.0  # a deadline for what should happen at once, on a loaded machine


async def _forever(started: asyncio.Event, cancelled: list[str], name: str) -> None:
    started.set()
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        cancelled.append(name)
        raise


def test_a_finite_competition_ends_when_fill_starts_nothing_and_nothing_runs() -> None:
    async def main() -> list[int]:
        plays: PlayLoop[None] = PlayLoop(fail_fast=True)
        queue = list(range(7))
        played: list[int] = []
        most = 0

        async def play(n: int) -> None:
            nonlocal most
            most = max(most, len(plays.running))
            await asyncio.sleep(0)
            played.append(n)

        def fill() -> None:
            while queue and len(plays.running) < 3:
                n = queue.pop(0)
                plays.start(f"game {n}", play(n), None)

        await asyncio.wait_for(plays.run(fill, asyncio.Event()), WAIT_S)
        assert most == 3  # never more at once than fill allowed
        return played

    assert sorted(asyncio.run(main())) == list(range(7))


def test_a_failing_unit_cancels_the_others_and_its_error_is_raised_when_fail_fast() -> None:
    async def main() -> list[str]:
        plays: PlayLoop[None] = PlayLoop(fail_fast=True)
        cancelled: list[str] = []
        started = asyncio.Event()

        async def fails() -> None:
            await started.wait()
            raise StoreError("disk full")

        def fill() -> None:
            if not plays.running and not cancelled:
                plays.start("slow", _forever(started, cancelled, "slow"), None)
                plays.start("failing", fails(), None)

        with pytest.raises(StoreError, match="disk full"):
            try:
                await asyncio.wait_for(plays.run(fill, asyncio.Event()), WAIT_S)
            finally:
                await plays.drain()
        assert plays.failed and not plays.running
        return cancelled

    assert asyncio.run(main()) == ["slow"]


def test_a_failing_unit_is_logged_and_the_others_go_on_without_fail_fast(
        caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> tuple[list[str], bool]:
        plays: PlayLoop[bool] = PlayLoop(fail_fast=False)
        stop = asyncio.Event()
        done: list[str] = []
        started = 0

        async def fails() -> None:
            raise StoreError("one set")

        async def finishes() -> None:
            await asyncio.sleep(0.01)
            done.append("other")
            stop.set()

        def fill() -> None:
            nonlocal started
            if started == 0:
                plays.start("deal set ladder/1", fails(), False)
                plays.start("deal set ladder/2", finishes(), True)
                assert plays.count(True) == 1 and plays.count(False) == 1
            started += 1

        await asyncio.wait_for(plays.run(fill, stop, poll_seconds=0.05), WAIT_S)
        await plays.drain(WAIT_S)
        return done, plays.failed

    with caplog.at_level(logging.ERROR, logger="euchre.competition"):
        done, failed = asyncio.run(main())
    assert done == ["other"] and not failed
    assert "deal set ladder/1 failed" in caplog.text and "one set" in caplog.text


def test_drain_waits_for_running_units_then_cancels_what_is_left() -> None:
    async def main() -> tuple[list[str], list[str]]:
        plays: PlayLoop[None] = PlayLoop(fail_fast=False)
        stop = asyncio.Event()
        finished: list[str] = []
        cancelled: list[str] = []
        started = asyncio.Event()

        async def quick() -> None:
            await asyncio.sleep(0.01)
            finished.append("quick")

        def fill() -> None:
            if not started.is_set() and not plays.running:
                plays.start("stuck", _forever(started, cancelled, "stuck"), None)
                plays.start("quick", quick(), None)

        runner = asyncio.ensure_future(plays.run(fill, stop, poll_seconds=1.0))
        await asyncio.wait_for(started.wait(), WAIT_S)
        stop.set()
        await asyncio.wait_for(runner, WAIT_S)
        await asyncio.wait_for(plays.drain(0.5), WAIT_S)
        assert not plays.running
        return finished, cancelled

    assert asyncio.run(main()) == (["quick"], ["stuck"])


def test_cancelling_the_competition_cancels_every_unit() -> None:
    async def main() -> list[str]:
        plays: PlayLoop[None] = PlayLoop(fail_fast=True)
        cancelled: list[str] = []
        started = asyncio.Event()

        def fill() -> None:
            if not plays.running and not started.is_set():
                plays.start("a", _forever(started, cancelled, "a"), None)

        runner = asyncio.ensure_future(plays.run(fill, asyncio.Event()))
        await asyncio.wait_for(started.wait(), WAIT_S)
        runner.cancel()
        with pytest.raises(asyncio.CancelledError):
            await runner
        await asyncio.wait_for(plays.drain(), WAIT_S)
        return cancelled

    assert asyncio.run(main()) == ["a"]


def test_wake_asks_fill_again_before_the_poll_period() -> None:
    async def main() -> int:
        plays: PlayLoop[None] = PlayLoop(fail_fast=False)
        stop = asyncio.Event()
        calls = 0

        def fill() -> None:
            nonlocal calls
            calls += 1
            if calls == 3:
                stop.set()

        async def waker() -> None:
            while not stop.is_set():
                plays.wake()
                await asyncio.sleep(0.01)

        poke = asyncio.ensure_future(waker())
        # a poll period far beyond the test's deadline: only wake() can call fill again
        await asyncio.wait_for(plays.run(fill, stop, poll_seconds=3600.0), WAIT_S)
        poke.cancel()
        return calls

    assert asyncio.run(main()) == 3
