"""The thread that writes off the event loop: calls run in the order given, one at a
time and off the loop; a call whose awaiting task is cancelled still runs; closing waits
for every call given."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from harness.storage.serial import SerialThread


def test_calls_run_in_order_off_the_loop_and_survive_cancellation() -> None:
    done: list[int] = []
    threads: set[int] = set()
    release = threading.Event()

    def write(n: int) -> int:
        if n == 0:
            assert release.wait(30)
        threads.add(threading.get_ident())
        done.append(n)
        return n * 10

    async def scenario() -> tuple[list[int], int]:
        serial = SerialThread("test")
        loop_thread = threading.get_ident()
        first = asyncio.ensure_future(serial.run(write, 0))  # holds the thread up
        await asyncio.sleep(0)
        cancelled = asyncio.ensure_future(serial.run(write, 1))
        await asyncio.sleep(0)  # the task starts: its call is given
        serial.submit(write, 2)
        await asyncio.sleep(0)
        cancelled.cancel()  # its call was given: it still runs, in its turn
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        ticks = 0
        while not release.is_set():  # the loop is free while the thread waits
            ticks += 1
            if ticks == 5:
                release.set()
            await asyncio.sleep(0.001)
        results = [await first, await serial.run(write, 3)]
        await serial.aclose()
        assert serial.closed and loop_thread not in threads
        return results, ticks

    results, ticks = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert done == [0, 1, 2, 3]
    assert results == [0, 30] and ticks >= 5
    assert len(threads) == 1


def test_close_waits_for_every_call_given() -> None:
    stored: list[str] = []

    def slow(tag: str) -> None:
        time.sleep(0.05)
        stored.append(tag)

    async def scenario() -> None:
        serial = SerialThread("test")
        for tag in "abc":
            serial.submit(slow, tag)
        await serial.aclose()

    asyncio.run(scenario())
    assert stored == ["a", "b", "c"]


def test_an_error_reaches_the_caller_that_waits() -> None:
    def broken() -> None:
        raise ValueError("disk full")

    async def scenario() -> None:
        serial = SerialThread("test")
        with pytest.raises(ValueError, match="disk full"):
            await serial.run(broken)
        await serial.aclose()

    asyncio.run(scenario())
