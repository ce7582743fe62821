"""The handshake over real gRPC, from a client in the test process: what a bot says about
itself is kept, logged and listed without control characters, and two Hellos at once with
one token get one Welcome and one TOKEN_IN_USE refusal."""

from __future__ import annotations

import asyncio
import logging
import unicodedata
from pathlib import Path

import grpc
import pytest
from test_faults import RANDOM, arena, list_bots, run
from waiting import wait_until

from harness.protocol import ConnectRequest, ConnectResponse, RefereeServiceStub, messages, rpb
from harness.referee.pool import Entrant

TOKEN = "remote-token-0"
# A forged log line, terminal escapes (erase line, window title, colour), a bidi
# override, a zero-width joiner and Unicode line and paragraph separators.
FORGED_NAME = ("evil\n2026-12-01 11:20:00,000 euchre.referee: fake line\x1b[2K\u202e"
               "\x1b]0;pwned\x07\u200d\u2028\u2029\r")
FORGED_VERSION = "1\r\x1b[31mRED\x1b[0m\u2028\t"


def unshown(text: str) -> list[str]:
    return [c for c in text if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")]


class Stream:
    """One Connect call of a hand-written client."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.call = RefereeServiceStub(channel).Connect()

    async def hello(self, request: ConnectRequest) -> ConnectResponse:
        await self.call.write(request)
        first = await self.call.read()
        assert isinstance(first, ConnectResponse), first
        return first


def test_control_characters_in_the_bots_name_and_version_are_never_kept(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="euchre.referee")

    async def go() -> None:
        async with arena(tmp_path, ("random", RANDOM, 1)) as a:
            a.add(Entrant("remote", tokens=(TOKEN,)), 1)
            async with grpc.aio.insecure_channel(a.server.address) as channel:
                stream = Stream(channel)
                first = await stream.hello(messages.hello(FORGED_NAME + "x" * 200,
                                                          FORGED_VERSION, TOKEN))
                assert first.WhichOneof("payload") == "welcome", first
                session = a.pool.instances("remote")[0].slot.session
                assert session is not None
                assert session.bot_name.startswith("evil2026-12-01 11:20:00,000 "
                                                   "euchre.referee: fake line[2K]0;pwned")
                assert len(session.bot_name) == 100  # still cut to 100 characters
                assert session.bot_version == "1[31mRED[0m"
                (info,) = [b for b in await list_bots(a) if b.name == "remote"]
                assert info.version == "1[31mRED[0m"
                stream.call.cancel()
        logged = [r.getMessage() for r in caplog.records if r.name == "euchre.referee"]
        (welcomed,) = [m for m in logged if "remote (evil" in m]
        assert "fake line" in welcomed and not unshown(welcomed), repr(welcomed)
        assert "1[31mRED[0m" in welcomed
    run(go())


def test_a_name_of_only_control_characters_is_refused_as_empty(tmp_path: Path) -> None:
    async def go() -> None:
        async with arena(tmp_path, ("random", RANDOM, 1)) as a:
            a.add(Entrant("remote", tokens=(TOKEN,)), 1)
            async with grpc.aio.insecure_channel(a.server.address) as channel:
                first = await Stream(channel).hello(messages.hello("\x1b\u202e\n", "1", TOKEN))
            assert first.refusal.reason == rpb.REFUSAL_REASON_MALFORMED, first
            assert "bot_name is empty" in first.refusal.detail
            assert not a.pool.instances("remote")[0].slot.ever_connected
    run(go())


def test_two_simultaneous_hellos_with_one_token_get_one_welcome(tmp_path: Path) -> None:
    """The seat is claimed in the same step as the check that it is free: of two Hellos
    racing with one token, exactly one is welcomed and the other is refused
    TOKEN_IN_USE, every time; the welcomed stream is the seat's session."""
    async def go() -> None:
        async with arena(tmp_path, ("random", RANDOM, 1)) as a:
            a.add(Entrant("remote", tokens=(TOKEN,)), 1)
            slot = a.pool.instances("remote")[0].slot
            channels = [grpc.aio.insecure_channel(a.server.address) for _ in range(2)]
            try:
                for attempt in range(25):
                    streams = [Stream(c) for c in channels]
                    hello = messages.hello("racer", "1", TOKEN)
                    answers = await asyncio.gather(*(s.hello(hello) for s in streams))
                    kinds = sorted(str(m.WhichOneof("payload")) for m in answers)
                    assert kinds == ["refusal", "welcome"], (attempt, answers)
                    (refusal,) = [m.refusal for m in answers if m.HasField("refusal")]
                    assert refusal.reason == rpb.REFUSAL_REASON_TOKEN_IN_USE, refusal
                    (welcome,) = [m.welcome for m in answers if m.HasField("welcome")]
                    assert slot.live and slot.session is not None
                    assert slot.session.id == welcome.session_id
                    for s in streams:
                        s.call.cancel()
                    await wait_until(lambda: not slot.live, timeout=30, what="the stream to end")
            finally:
                for c in channels:
                    await c.close()
    run(go())


class OneWriteAtATime:
    """A servicer context that, like grpc's, refuses a write while another is in flight
    (GRPC_CALL_ERROR_TOO_MANY_OPERATIONS); its first write (the Welcome) is held until
    ``release`` is set, as a loaded machine can hold it."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.in_flight = False
        self.written: list[str] = []

    def peer(self) -> str:
        return "ipv4:127.0.0.1:50000"

    async def write(self, message: ConnectResponse) -> None:
        if self.in_flight:
            raise RuntimeError("a write while another is in flight")
        self.in_flight = True
        try:
            if not self.written:
                await self.release.wait()
            self.written.append(str(message.WhichOneof("payload")))
        finally:
            self.in_flight = False


def test_a_game_never_writes_to_a_stream_before_its_welcome_is_sent(tmp_path: Path) -> None:
    """A seat is claimed before its Welcome goes out; a game that takes the seat then must
    wait for the Welcome, never write beside it (that ended the stream and charged the
    bot a disconnect)."""
    from harness.referee.server import RefereeServicer

    async def go() -> list[str]:
        async with arena(tmp_path, ("random", RANDOM, 1)) as a:
            a.add(Entrant("remote", tokens=(TOKEN,)), 1)
            inst = a.pool.instances("remote")[0]
            context = OneWriteAtATime()
            handshake = asyncio.ensure_future(RefereeServicer(a.server)._handshake(
                messages.hello("slow-welcome", "1", TOKEN), context))  # type: ignore[arg-type]
            await wait_until(lambda: inst.slot.live, timeout=30.0, what="the seat to be claimed")

            async def game() -> None:
                await a.pool.ready(inst)
                assert inst.slot.session is not None
                await inst.slot.session.send(messages.shutdown("a game's first message"))

            playing = asyncio.ensure_future(game())
            for _ in range(20):  # let the game run as far as it can
                await asyncio.sleep(0)
            context.release.set()
            session = await handshake
            await playing
            assert session is not None and not session.closed.is_set(), session
            return list(context.written)  # (the arena says goodbye as it closes)

    assert asyncio.run(go()) == ["welcome", "shutdown"]


class QuietAfterHello:
    """A servicer context whose first read is the bot's Hello and whose next one waits
    for a message that never comes (a bot that has said nothing more yet)."""

    def __init__(self, hello: ConnectRequest) -> None:
        self.hello: ConnectRequest | None = hello
        self.written: list[str] = []

    def peer(self) -> str:
        return "ipv4:127.0.0.1:50001"

    async def read(self) -> ConnectRequest:
        if self.hello is not None:
            hello, self.hello = self.hello, None
            return hello
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def write(self, message: ConnectResponse) -> None:
        self.written.append(str(message.WhichOneof("payload")))


def test_a_stream_whose_handler_is_cancelled_leaves_its_seat_free(tmp_path: Path) -> None:
    """gRPC cancels a stream's handler when the bot cancels its call (or the server
    stops), and that can come before the stream's reader learns that the stream ended.
    The seat must not stay live with no stream: a seat left so was listed for sets and
    matched, and a bot could never dial in again (TOKEN_IN_USE)."""
    from harness.referee.server import RefereeServicer

    async def go() -> None:
        async with arena(tmp_path, ("random", RANDOM, 1)) as a:
            a.add(Entrant("remote", tokens=(TOKEN,)), 1)
            slot = a.pool.instances("remote")[0].slot
            context = QuietAfterHello(messages.hello("cancelled", "1", TOKEN))
            handler = asyncio.ensure_future(RefereeServicer(a.server).Connect(
                None, context))  # type: ignore[arg-type]
            await wait_until(lambda: slot.ready, timeout=30.0, what="the Welcome")
            session = slot.session
            assert session is not None and context.written == ["welcome"]
            handler.cancel()
            with pytest.raises(asyncio.CancelledError):
                await handler
            assert not slot.live and not slot.ready
            assert session.closed.is_set() and "cancelled" in session.close_reason

    run(go())


def test_a_call_cancelled_before_its_reader_sees_the_end_frees_its_seat_over_grpc(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same order over real gRPC: the stream's reader is held so that it never sees
    the end of the stream; the bot cancels its call, gRPC cancels the handler, and the
    seat is free at once, for the same token to dial in again."""
    from harness.referee.session import Session

    async def held_reader(self: Session) -> None:
        await asyncio.Event().wait()  # never sees the stream end

    monkeypatch.setattr(Session, "read_loop", held_reader)

    async def go() -> None:
        async with arena(tmp_path, ("random", RANDOM, 1)) as a:
            a.add(Entrant("remote", tokens=(TOKEN,)), 1)
            slot = a.pool.instances("remote")[0].slot
            async with grpc.aio.insecure_channel(a.server.address) as channel:
                first = Stream(channel)
                assert (await first.hello(messages.hello("cancel", "1", TOKEN))
                        ).HasField("welcome")
                assert slot.live
                first.call.cancel()
                await wait_until(lambda: not slot.live, timeout=30, what="the seat to be free")
                again = Stream(channel)
                assert (await again.hello(messages.hello("again", "1", TOKEN))
                        ).HasField("welcome")
                again.call.cancel()
    run(go())
