"""A bot that stops reading its stream: the referee's write to it blocks, and after the
write timeout the session closes as a disconnect, without disturbing the game's task
(the session's own timer cancels the write, as ``asyncio.timeout`` would, with no task
per write).

The blocked write is a stand-in context whose ``write`` never completes: over a real
stream that takes tens of kilobytes of unread messages (HTTP/2 flow control), which no
game sends one bot."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import grpc
import pytest

from harness.errors import BotTerminatedError, BotTimeoutError
from harness.protocol import DecisionReply, DecisionRequest, messages
from harness.referee.session import MIN_WRITE_CUT, Session, SlotRegistry


class StuckContext:
    """A ServicerContext whose writes never complete (a peer that does not read)."""

    def __init__(self) -> None:
        self.started = 0
        self.cancelled = 0

    async def write(self, message: Any) -> None:
        self.started += 1
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise


def test_a_write_that_blocks_closes_the_session_after_the_timeout() -> None:
    async def main() -> None:
        context = StuckContext()
        slot = SlotRegistry().add("deaf", 0)
        session = Session(cast(grpc.aio.ServicerContext[Any, Any], context), slot,
                          "deaf", "1", "test", bundles=True)
        session.post(messages.shutdown("one"))
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(BotTerminatedError, match="did not read its stream"):
            await session.flush(messages.shutdown("two"), timeout=0.2)
        assert loop.time() - started >= 0.2
        assert session.closed.is_set()
        assert "did not read its stream for 0.2s" in session.close_reason
        assert (context.started, context.cancelled) == (1, 1)  # the write was abandoned
        # The caller's task was not left cancelled by the timeout: it carries on.
        task = asyncio.current_task()
        assert task is not None and task.cancelling() == 0
        await asyncio.sleep(0)
        # A closed session refuses further writes at once.
        with pytest.raises(BotTerminatedError, match="stream closed"):
            await session.flush(messages.shutdown("three"), timeout=5.0)
        assert context.started == 1

    asyncio.run(main())


def test_a_write_that_completes_in_time_is_not_cut() -> None:
    class SlowContext:
        def __init__(self) -> None:
            self.written: list[Any] = []

        async def write(self, message: Any) -> None:
            await asyncio.sleep(0.05)
            self.written.append(message)

    async def main() -> None:
        context = SlowContext()
        session = Session(cast(grpc.aio.ServicerContext[Any, Any], context),
                          SlotRegistry().add("slow", 0), "slow", "1", "test", bundles=True)
        session.post(messages.shutdown("one"))
        await session.flush(messages.shutdown("two"), timeout=5.0)
        assert not session.closed.is_set()
        [bundle] = [messages.decode(m) for m in context.written]  # both in one Bundle
        assert [m.shutdown.reason for m in bundle.bundle.messages] == ["one", "two"]

    asyncio.run(main())


class ReplyingContext:
    """A ServicerContext whose writes complete at once; each decision request it carries
    is answered after the next of ``delays`` seconds (None: never)."""

    def __init__(self, delays: list[float | None]) -> None:
        self.delays = delays
        self.session: Session | None = None

    async def write(self, data: messages.Outgoing) -> None:
        request = messages.decision_request_in(data)
        if request is None:
            return
        delay = self.delays.pop(0)
        reply = DecisionReply(request_id=request.request_id,
                                  action=DecisionReply().action)
        if delay is not None and self.session is not None:
            asyncio.get_running_loop().call_later(delay, self.session.on_reply, reply)


def test_each_decision_keeps_its_own_deadline_on_the_shared_timer() -> None:
    """The write's and the reply's clocks share one timer per session, armed for the
    earliest deadline and re-armed when it fires early: a decision is cut at its own
    deadline, whether the timer was armed for a later one or an earlier one."""
    async def main() -> None:
        context = ReplyingContext([0.0, None, 0.0, 1.5])
        session = Session(cast(grpc.aio.ServicerContext[Any, Any], context),
                          SlotRegistry().add("timed", 0), "timed", "1", "test", bundles=True)
        context.session = session
        loop = asyncio.get_running_loop()

        async def decide(timeout: float) -> float:
            request_id = session.new_request_id()
            request = messages.decision_request(DecisionRequest(request_id=request_id))
            started = loop.time()
            reply = await session.decide(request_id, request, timeout)
            assert reply.request_id == request_id
            return loop.time() - started

        await decide(5.0)  # answered at once; the timer stays armed for 5 s from now
        started = loop.time()
        with pytest.raises(BotTimeoutError, match=r"no reply within 0\.200s"):
            await decide(0.2)  # the timer must fire sooner than it was armed for
        assert 0.2 <= loop.time() - started < 4.0
        await decide(0.3)  # answered at once; the timer is armed for its write (10 s)
        # Answered after 1.5 s of its 2 s: the timer fires during it, and only re-arms.
        assert await decide(2.0) >= 1.5
        assert not session.closed.is_set()

    asyncio.run(main())


def test_a_decision_request_whose_write_is_slow_is_charged_to_its_clock() -> None:
    """A decision's clock runs from the moment its request's write begins: a write that
    blocks (a bot that holds back its reading: tests/test_wire_faults.py and
    tests/test_request_hold.py play it over real gRPC) is the bot's time. A write that
    outlasts the decision's time ends the decision as a timeout, never as a disconnect;
    one still blocked once the decision's time (at least MIN_WRITE_CUT) is up is
    abandoned, and the stream ends with it. A write that leaves time is answered."""
    class SlowWriteContext(ReplyingContext):
        def __init__(self, delays: list[float | None], write_s: float) -> None:
            super().__init__(delays)
            self.write_s = write_s

        async def write(self, data: messages.Outgoing) -> None:
            await asyncio.sleep(self.write_s)  # the bot does not read meanwhile
            await super().write(data)

    def session(write_s: float) -> Session:
        context = SlowWriteContext([0.0], write_s)
        session = Session(cast(grpc.aio.ServicerContext[Any, Any], context),
                          SlotRegistry().add("reader", 0), "reader", "1", "test",
                          bundles=True)
        context.session = session
        return session

    async def decide(session: Session, timeout: float) -> DecisionReply:
        request_id = session.new_request_id()
        request = messages.decision_request(DecisionRequest(request_id=request_id))
        return await session.decide(request_id, request, timeout)

    async def main() -> None:
        # Written after the decision's time, but well before the cut: a timeout.
        slow = session(0.15)
        with pytest.raises(BotTimeoutError, match=r"no reply within 0\.100s$"):
            await decide(slow, 0.1)
        assert not slow.closed.is_set()
        # Never written: cut once the decision's time, at least MIN_WRITE_CUT, is up.
        stuck = session(60.0)
        started = asyncio.get_running_loop().time()
        with pytest.raises(BotTimeoutError, match=r"no reply within 0\.300s \(it did not "
                                                  r"read its request"):
            await decide(stuck, 0.3)
        assert asyncio.get_running_loop().time() - started >= MIN_WRITE_CUT
        assert stuck.closed.is_set()
        assert "did not read its stream" in stuck.close_reason
        reply = await decide(session(0.05), 5.0)
        assert reply.request_id == 1

    asyncio.run(main())
