"""``faulty``: a bot that misbehaves on purpose, one way per run, to test the referee.

Pick the misbehaviour with ``--mode`` (or the environment variable ``EUCHRE_FAULT_MODE``):

============  ==========================================================================
mode          what the process does
============  ==========================================================================
crash         plays legally, then dies abruptly (``os._exit(3)``) at its Nth decision
hang          never answers a decision request (from its Nth decision on)
late          answers every decision (from the Nth on) after ``--delay`` seconds
illegal       answers with a well-formed action that is not among the legal actions
wrong-id      answers a legal action, but with ``request_id + 1000``
duplicate     answers a legal action twice (the same reply, sent two times)
flood         answers a legal action, then sends ``--copies`` more copies of the reply
              (default 20000), or with ``--flood-with hello`` that many 1 KiB Hellos
idle-flood    completes its handshake, then at once (seated in no game) sends
              ``--copies`` 1 KiB Hellos, closes its side and reads until the stream ends
garbage       answers with bytes that do not parse as a ConnectRequest
huge          answers with a correct reply padded to 1 MiB with an unknown field, far
              above the referee's 64 KiB message limit
giant         the same, padded to 5 MiB: above the 4 MiB limit of the gRPC transport
no-handshake  opens the stream and never sends Hello; waits to be dropped
huge-hello    says Hello padded to 100 KiB with an unknown field (over the 64 KiB limit)
garbage-hello opens the stream with bytes that do not parse instead of a Hello
bad-token     says Hello with a token nobody issued
steal-token   says Hello with another seat's token (``--other-token``)
two-streams   completes its handshake, then opens a second stream with the same token
              while the first is live; keeps playing (legally) on the first
exit-early    exits with status 1 before connecting
slow-read     dials with a receive window of a few bytes, plays legally at once, and
              after every message of a game waits ``--delay`` seconds before it reads
              the next: the referee's write of its next request blocks meanwhile (time
              it thinks in, for free, if the clock started only once the write is done)
============  ==========================================================================

``N`` is ``--after`` (default 10 for ``crash``, 1 for the others: misbehave at once).
Until it misbehaves, and in the modes that do not misbehave at decisions, the bot plays
a uniformly random legal action.

The address and token come from ``--address``/``--token`` or, as for every local bot,
from ``EUCHRE_REFEREE_ADDRESS``/``EUCHRE_BOT_TOKEN``. The bot reports what it sees
(refusals, faults, being dropped) on stderr, which the referee's pool keeps in the bot's
log file, and exits with a status that says how its run ended:

* 0: the referee ended the stream (EOF or Shutdown), or with ``idle-flood`` let it
  end normally after the flood;
* 1: ``exit-early``;
* 2: the referee refused the handshake (the reason is printed);
* 3: ``crash``;
* 4: the stream failed with an error status before a Welcome or Refusal (printed);
* 5: ``bad-token``, ``steal-token``, ``huge-hello`` or ``garbage-hello`` was welcomed
  (a referee bug; printed).

``garbage``, ``huge``, ``giant`` and ``flood`` keep their process alive after the stream
ends (until they are killed), so that the referee judges the messages themselves and
cannot mistake the fault for a crash.

The bot speaks the protocol with the raw generated messages. It opens ``Connect`` with a
byte-level request serializer, so that it can also send bytes that are not a valid
``ConnectRequest`` (``garbage``) or carry an oversized unknown field (``huge``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import time
from collections.abc import Sequence

import grpc

from harness.protocol import PROTOCOL_VERSION, pb, rpb

MODES = ("crash", "hang", "late", "illegal", "wrong-id", "duplicate", "flood", "garbage",
         "huge", "giant", "no-handshake", "huge-hello", "garbage-hello", "bad-token", "steal-token",
         "two-streams", "idle-flood", "exit-early", "slow-read")
# The modes that misbehave when asked to decide (the others misbehave around the handshake).
DECISION_MODES = ("crash", "hang", "late", "illegal", "wrong-id", "duplicate", "flood",
                  "garbage", "huge", "giant")
# The modes whose process stays alive after the stream ends.
LINGERING_MODES = ("garbage", "huge", "giant", "flood")
CONNECT_METHOD = "/euchre.v1.RefereeService/Connect"
HUGE_BYTES = 1 << 20  # 1 MiB: sixteen times the referee's 64 KiB limit
GIANT_BYTES = 5 << 20  # 5 MiB: above gRPC's 4 MiB transport limit
HUGE_HELLO_BYTES = 100 << 10  # 100 KiB
FLOOD_HELLO_NAME = "x" * 1024  # a Hello of about 1 KiB, as flood material
UNKNOWN_FIELD = 999  # a field number ConnectRequest does not define

# Exit statuses (see the module docstring).
EXIT_OK, EXIT_EARLY, EXIT_REFUSED, EXIT_CRASH, EXIT_DROPPED, EXIT_ACCEPTED = 0, 1, 2, 3, 4, 5

# Not a ConnectRequest: field 1 (hello) announces 2**35 bytes that never come.
GARBAGE = b"\x0a\xff\xff\xff\xff\x7f" + b"\xde\xad\xbe\xef"


def say(text: str) -> None:
    """Report on stderr (the referee's pool keeps it in the bot's log)."""
    print(f"faulty: {text}", file=sys.stderr, flush=True)


def _identity(data: bytes) -> bytes:
    return data


class Stream:
    """One ``Connect`` stream that sends raw bytes and reads ConnectResponse messages."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        connect = channel.stream_stream(CONNECT_METHOD, request_serializer=_identity,
                                        response_deserializer=rpb.ConnectResponse.FromString)
        self.call = connect()

    async def send(self, message: rpb.ConnectRequest) -> None:
        await self.call.write(message.SerializeToString())

    async def send_bytes(self, data: bytes) -> None:
        await self.call.write(data)

    async def recv(self) -> rpb.ConnectResponse | None:
        """The next message, or None when the referee ended the stream (status OK)."""
        msg = await self.call.read()
        if msg is grpc.aio.EOF:
            return None
        assert isinstance(msg, rpb.ConnectResponse)
        return msg

    async def hello(self, name: str, token: str, *,
                    pad: int = 0) -> rpb.ConnectResponse | None:
        """Send the handshake (padded with ``pad`` bytes of an unknown field) and return
        the referee's first answer."""
        hello = rpb.ConnectRequest(hello=rpb.Hello(
            protocol_version=PROTOCOL_VERSION, bot_name=name, bot_version="faulty-1",
            token=token))
        await self.send_bytes(padded(hello, pad) if pad else hello.SerializeToString())
        return await self.recv()


# --------------------------------------------------------------------------- actions


def illegal_action(legal: Sequence[pb.Action]) -> pb.Action:
    """A well-formed action that is not in ``legal`` (protobuf messages compare by value).
    Taking the upcard, going alone and so on are illegal in most phases; a play of every
    card of the pack is tried last."""
    candidates = [pb.Action(kind=k) for k in (
        pb.ACTION_KIND_TAKE_UPCARD, pb.ACTION_KIND_LEAVE_UPCARD, pb.ACTION_KIND_GO_ALONE,
        pb.ACTION_KIND_NOT_ALONE, pb.ACTION_KIND_PASS, pb.ACTION_KIND_ORDER_UP)]
    candidates += [pb.Action(kind=pb.ACTION_KIND_PLAY, card=pb.Card(rank=r, suit=s))
                   for s in (pb.SUIT_CLUBS, pb.SUIT_DIAMONDS, pb.SUIT_HEARTS, pb.SUIT_SPADES)
                   for r in (pb.RANK_NINE, pb.RANK_TEN, pb.RANK_JACK, pb.RANK_QUEEN,
                             pb.RANK_KING, pb.RANK_ACE)]
    for action in candidates:
        if action not in legal:
            return action
    raise AssertionError("every candidate action is legal")  # cannot happen


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def padded(message: rpb.ConnectRequest, size: int) -> bytes:
    """``message`` followed by a length-delimited unknown field of ``size`` bytes: a
    parser keeps or skips it, so without a size limit this is still a valid message."""
    key = _varint(UNKNOWN_FIELD << 3 | 2)
    return message.SerializeToString() + key + _varint(size) + b"\0" * size


def flood_hello() -> bytes:
    """A ConnectRequest with a Hello of about 1 KiB: not a reply, so never an answer."""
    return rpb.ConnectRequest(hello=rpb.Hello(
        protocol_version=PROTOCOL_VERSION, bot_name=FLOOD_HELLO_NAME,
        bot_version="faulty-1")).SerializeToString()


# --------------------------------------------------------------------------- playing


class FaultyBot:
    def __init__(self, args: argparse.Namespace) -> None:
        self.mode: str = args.mode
        self.after: int = args.after if args.after is not None else (
            10 if self.mode == "crash" else 1)
        self.delay: float = args.delay
        self.address: str = args.address
        self.token: str = args.token
        self.other_token: str = args.other_token
        self.name: str = args.name or f"faulty-{self.mode}"
        self.copies: int = args.copies
        self.flood_with: str = args.flood_with
        self.rng = random.Random(args.seed)
        self.decisions = 0

    async def run(self) -> int:
        if self.mode == "exit-early":
            say("exit-early: exiting before connecting")
            return EXIT_EARLY
        # slow-read: HTTP/2 flow control held to a few bytes, so that a message the bot
        # has not read yet blocks the referee's next write.
        options = ([("grpc.http2.lookahead_bytes", 1), ("grpc.http2.bdp_probe", 0)]
                   if self.mode == "slow-read" else [])
        async with grpc.aio.insecure_channel(self.address, options=options) as channel:
            try:
                if self.mode == "no-handshake":
                    status = await self._no_handshake(channel)
                else:
                    status = await self._session(channel)
            except grpc.aio.AioRpcError as e:
                say(f"dropped by the referee: {e.code().name}: {e.details()}")
                status = EXIT_DROPPED
            if self.mode in LINGERING_MODES:
                await self._linger()
            return status

    async def _no_handshake(self, channel: grpc.aio.Channel) -> int:
        """Open the stream and say nothing; the referee should drop it after its handshake
        timeout. Reports how long the stream lasted."""
        stream = Stream(channel)
        t0 = time.monotonic()
        try:
            msg = await stream.recv()
        except grpc.aio.AioRpcError as e:
            say(f"dropped by the referee after {time.monotonic() - t0:.2f}s: "
                f"{e.code().name}: {e.details()}")
            return EXIT_DROPPED
        say(f"the referee answered a silent stream: {msg}")
        return EXIT_DROPPED

    async def _session(self, channel: grpc.aio.Channel) -> int:
        token = {"bad-token": "no-such-token-" + "x" * 16,
                 "steal-token": self.other_token}.get(self.mode, self.token)
        stream = Stream(channel)
        if self.mode == "garbage-hello":
            await stream.send_bytes(GARBAGE)
            first = await stream.recv()
        else:
            first = await stream.hello(self.name, token, pad=HUGE_HELLO_BYTES
                                       if self.mode == "huge-hello" else 0)
        if first is None:
            say("the referee closed the stream without answering the Hello")
            return EXIT_DROPPED
        which = first.WhichOneof("payload")
        if which == "refusal":
            say(f"refused: {rpb.RefusalReason.Name(first.refusal.reason)}: "
                f"{first.refusal.detail}")
            return EXIT_REFUSED
        if which != "welcome":
            say(f"expected welcome or refusal, got {which}")
            return EXIT_DROPPED
        say(f"welcome: session {first.welcome.session_id}")
        if self.mode in ("bad-token", "steal-token", "huge-hello", "garbage-hello"):
            say("ACCEPTED with a token that should have been refused")
            return EXIT_ACCEPTED
        if self.mode == "idle-flood":
            return await self._idle_flood(stream)
        if self.mode == "two-streams":
            # A second stream with the same token while this one is live; the outcome is
            # settled (and reported) before this bot answers anything on the first one.
            await self._second_stream(channel, token)
        return await self._play(stream)

    async def _second_stream(self, channel: grpc.aio.Channel, token: str) -> None:
        second = Stream(channel)
        try:
            msg = await second.hello(self.name, token)
        except grpc.aio.AioRpcError as e:
            say(f"second stream failed without a refusal: {e.code().name}: {e.details()}")
            return
        if msg is not None and msg.WhichOneof("payload") == "refusal":
            say(f"second stream refused: {rpb.RefusalReason.Name(msg.refusal.reason)}: "
                f"{msg.refusal.detail}")
        else:
            say(f"second stream ACCEPTED: {msg}")
        second.call.cancel()

    async def _flood(self, stream: Stream, data: bytes, what: str) -> None:
        """Send ``data`` ``--copies`` times, stopping early when the referee ends the
        stream; reports how many went out."""
        say(f"flooding: {self.copies} copies of {what}")
        sent = 0
        try:
            while sent < self.copies:
                await stream.send_bytes(data)
                sent += 1
        except Exception as e:  # the referee ended the stream mid-flood
            say(f"flood stopped after {sent} copies: {type(e).__name__}")
        else:
            say(f"flood finished: {sent} copies sent")

    async def _idle_flood(self, stream: Stream) -> int:
        """Flood Hellos while seated in no game, then wait for the stream to end."""
        await self._flood(stream, flood_hello(), "a Hello while idle")
        try:
            await stream.call.done_writing()
        except Exception as e:  # the stream is already over
            say(f"could not close its side: {type(e).__name__}")
        while await stream.recv() is not None:
            pass
        say("the referee closed the stream")
        return EXIT_OK

    async def _play(self, stream: Stream) -> int:
        while True:
            msg = await stream.recv()
            if msg is None:
                say("the referee closed the stream")
                return EXIT_OK
            if await self._handle(stream, msg):
                return EXIT_OK
            if self.mode == "slow-read" and msg.WhichOneof("payload") in (
                    "decision_request", "game_event", "game_start"):
                await asyncio.sleep(self.delay)  # "thinking", with the stream unread

    async def _handle(self, stream: Stream, msg: rpb.ConnectResponse) -> bool:
        """Handle one message from the referee; True when the referee says it is
        shutting down. (This bot does not ask for Bundles, but handles one anyway.)"""
        which = msg.WhichOneof("payload")
        if which == "decision_request":
            await self._decide(stream, msg.decision_request)
        elif which == "fault":
            f = msg.fault
            played = (f" played={f.played_action}".replace("\n", " ")
                      if f.HasField("played_action") else "")
            say(f"fault: {rpb.FaultKind.Name(f.kind)} strikes={f.strikes} "
                f"request={f.request_id}{played}: {f.detail}")
        elif which == "game_over":
            g = msg.game_over
            say(f"game over: {g.game_id} "
                f"{rpb.GameTermination.Name(g.termination)} place={g.your_place}")
        elif which == "shutdown":
            say(f"shutdown: {msg.shutdown.reason}")
            return True
        elif which == "bundle":
            for inner in msg.bundle.messages:
                if await self._handle(stream, inner):
                    return True
        return False

    async def _decide(self, stream: Stream, req: rpb.DecisionRequest) -> None:
        self.decisions += 1
        legal = req.legal_actions
        reply = rpb.ConnectRequest(decision_reply=rpb.DecisionReply(
            request_id=req.request_id, action=self.rng.choice(legal)))
        mode = self.mode
        if self.decisions < self.after or mode not in DECISION_MODES:
            await stream.send(reply)  # not (yet) misbehaving: a random legal action
        elif mode == "crash":
            say(f"crashing at decision {self.decisions}")
            os._exit(EXIT_CRASH)  # no cleanup, no goodbye: as abrupt as a segfault
        elif mode == "hang":
            pass  # never answer; keep reading so the stream stays open
        elif mode == "late":
            await asyncio.sleep(self.delay)
            await stream.send(reply)
            say(f"answered request {req.request_id} {self.delay:g}s late")
        elif mode == "illegal":
            reply.decision_reply.action.CopyFrom(illegal_action(legal))
            await stream.send(reply)
        elif mode == "wrong-id":
            reply.decision_reply.request_id = req.request_id + 1000
            await stream.send(reply)
        elif mode == "duplicate":
            await stream.send(reply)
            await stream.send(reply)
            say(f"answered request {req.request_id} twice")
        elif mode == "flood":
            await stream.send(reply)
            if self.flood_with == "hello":
                await self._flood(stream, flood_hello(), "a Hello")
            else:
                await self._flood(stream, reply.SerializeToString(),
                                  f"the reply to request {req.request_id}")
        elif mode == "garbage":
            say(f"sending garbage at decision {self.decisions}")
            await stream.send_bytes(GARBAGE)
        elif mode == "huge":
            say(f"sending {HUGE_BYTES} bytes at decision {self.decisions}")
            await stream.send_bytes(padded(reply, HUGE_BYTES))
        elif mode == "giant":
            say(f"sending {GIANT_BYTES} bytes at decision {self.decisions}")
            await stream.send_bytes(padded(reply, GIANT_BYTES))
        else:
            raise AssertionError(mode)

    async def _linger(self) -> None:
        """Stay alive (until killed) so that the process is not taken for a crash."""
        while True:
            await asyncio.sleep(3600)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description="A Euchre bot that misbehaves on purpose.")
    ap.add_argument("--mode", choices=MODES, default=os.environ.get("EUCHRE_FAULT_MODE"),
                    help="the misbehaviour (default: $EUCHRE_FAULT_MODE)")
    ap.add_argument("--after", type=int, default=None,
                    help="misbehave from this decision on (default 10 for crash, else 1)")
    ap.add_argument("--delay", type=float, default=2.0,
                    help="late: seconds to wait before each answer (default 2.0)")
    ap.add_argument("--other-token", default="",
                    help="steal-token: the token to present instead of ours (write "
                         "--other-token=TOKEN: a token may start with '-')")
    ap.add_argument("--address", default=os.environ.get("EUCHRE_REFEREE_ADDRESS"))
    ap.add_argument("--token", default=os.environ.get("EUCHRE_BOT_TOKEN", ""))
    ap.add_argument("--name", default=os.environ.get("EUCHRE_BOT_NAME"))
    ap.add_argument("--copies", type=int, default=20_000,
                    help="flood, idle-flood: copies sent (default 20000)")
    ap.add_argument("--flood-with", choices=("reply", "hello"), default="reply",
                    help="flood: copies of the reply (default) or Hello messages")
    ap.add_argument("--seed", type=int, default=None, help="seed of the random legal play")
    args = ap.parse_args(argv)
    if args.mode not in MODES:
        ap.error(f"--mode (or EUCHRE_FAULT_MODE) must be one of {', '.join(MODES)}")
    if args.mode != "exit-early" and not args.address:
        ap.error("no referee address: pass --address or set EUCHRE_REFEREE_ADDRESS")
    if args.after is not None and args.after < 1:
        ap.error("--after must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    sys.exit(asyncio.run(FaultyBot(args).run()))


if __name__ == "__main__":
    main()
