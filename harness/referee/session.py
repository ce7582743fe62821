"""Seat slots, tokens and live bot streams.

A :class:`Slot` is one seat instance an entrant may fill: it has a token, and at most one
live :class:`Session` (one ``Connect`` stream) at a time. Local bots get a one-time
token per process; remote bots use tokens the operator issued. A second stream with a
token whose slot is live is refused (``TOKEN_IN_USE``); once a stream ends, the slot may
be connected again (reconnect).

A session's decisions are request/reply: :meth:`Session.decide` sends a
``DecisionRequest`` and waits for the ``DecisionReply`` with the same id. A reply with an
id the referee never issued is a protocol violation; a reply to an earlier request that
already timed out is late and ignored.
"""

from __future__ import annotations

import asyncio
import enum
import itertools
import secrets
from collections.abc import Callable, Iterator
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from harness._generated.euchre.v1 import referee_pb2 as rpb
from harness.errors import BotTerminatedError, BotTimeoutError, ProtocolViolation


class SlotState(enum.Enum):
    WAITING = "waiting"  # nobody connected yet
    IDLE = "idle"
    PLAYING = "playing"
    DISCONNECTED = "disconnected"


class Slot:
    """One seat instance of an entrant."""

    def __init__(self, name: str, instance: int, token: str, *, remote: bool,
                 requires: tuple[int, int] | None = None) -> None:
        self.name = name
        # (pb Form, pb Deck) this seat is for: a bot whose capabilities exclude it is
        # refused at the handshake.
        self.requires = requires
        self.instance = instance
        self.token = token
        self.remote = remote
        self.session: Session | None = None
        self.game_id = ""
        self.games_played = 0
        self.faults = 0
        self.ever_connected = False
        self._connected = asyncio.Event()

    @property
    def state(self) -> SlotState:
        if self.session is None or self.session.closed.is_set():
            return SlotState.DISCONNECTED if self.ever_connected else SlotState.WAITING
        return SlotState.PLAYING if self.game_id else SlotState.IDLE

    @property
    def live(self) -> bool:
        return self.session is not None and not self.session.closed.is_set()

    def attach(self, session: Session) -> None:
        self.session = session
        self.ever_connected = True
        self._connected.set()

    def detach(self, session: Session) -> None:
        if self.session is session:
            self._connected.clear()

    async def wait_connected(self, timeout: float) -> Session:
        await asyncio.wait_for(self._connected.wait(), timeout)
        assert self.session is not None
        return self.session


class Registry:
    """Tokens to slots, for the handshake; lists slots for the operator service."""

    def __init__(self) -> None:
        self._slots: dict[str, Slot] = {}
        # Asked for a token this registry did not issue (a standing ladder looks its
        # bots' tokens up by hash): the slot the stream should take, or None.
        self.resolver: Callable[[str], Slot | None] | None = None

    def add(self, name: str, instance: int, token: str | None = None, *,
            remote: bool = False, requires: tuple[int, int] | None = None) -> Slot:
        token = token or "t" + secrets.token_hex(16)  # never starts with '-'
        if token in self._slots:
            raise ValueError(f"{name}: token already issued to another seat")
        slot = Slot(name, instance, token, remote=remote, requires=requires)
        self._slots[token] = slot
        return slot

    def remove(self, slot: Slot) -> None:
        self._slots.pop(slot.token, None)

    def lookup(self, token: str) -> Slot | None:
        slot = self._slots.get(token)
        if slot is None and self.resolver is not None:
            slot = self.resolver(token)
        return slot

    def __iter__(self) -> Iterator[Slot]:
        return iter(list(self._slots.values()))


_session_ids = itertools.count(1)
WRITE_TIMEOUT = 10.0  # seconds a write may block before the bot counts as gone


class Session:
    """One live ``Connect`` stream."""

    def __init__(self, context: grpc.aio.ServicerContext[Any, Any], slot: Slot,
                 bot_name: str, bot_version: str, peer: str, *, bundles: bool = False,
                 max_message_bytes: int = 64 * 1024) -> None:
        self.id = f"s{next(_session_ids)}-{secrets.token_hex(4)}"
        self.bundles = bundles  # the bot takes Bundle messages (Capabilities.bundles)
        self.max_message_bytes = max_message_bytes
        self.context = context
        self.slot = slot
        self.bot_name = bot_name
        self.bot_version = bot_version
        self.peer = peer
        self.closed = asyncio.Event()
        self.close_reason = ""
        self.violation: str | None = None  # set by the reader: charged at the next decision
        self._write_lock = asyncio.Lock()
        self._pending_id = 0
        self._pending: asyncio.Future[rpb.DecisionReply] | None = None
        self._last_issued = 0
        self._outbox: list[rpb.ConnectResponse] = []
        self._next_request_id = 0
        self.violated = False  # the stream ended because of a protocol violation

    def new_request_id(self) -> int:
        """Request ids increase along the stream, across games."""
        self._next_request_id += 1
        return self._next_request_id

    def post(self, message: rpb.ConnectResponse) -> None:
        """Queue a message; it goes out with the next :meth:`flush` (a bundling bot gets
        the queue in one Bundle with its next decision request or game over)."""
        self._outbox.append(message)

    async def flush(self, last: rpb.ConnectResponse | None = None, *,
                    timeout: float = WRITE_TIMEOUT) -> None:
        """Send everything queued (plus ``last``): one Bundle to a bot that takes them,
        else one message at a time. A bot that does not read its stream (so that writes
        block) for ``timeout`` seconds is disconnected."""
        try:
            await asyncio.wait_for(self._flush(last), timeout)
        except TimeoutError:
            self.close(f"the bot did not read its stream for {timeout:g}s")
            raise BotTerminatedError(f"{self.slot.name}: stream closed "
                                     f"({self.close_reason})") from None

    async def _flush(self, last: rpb.ConnectResponse | None) -> None:
        queued = self._outbox
        if last is not None:
            queued.append(last)
        if not queued:
            return
        self._outbox = []
        if self.bundles and len(queued) > 1:
            await self.send(rpb.ConnectResponse(bundle=rpb.Bundle(messages=queued)))
        else:
            for message in queued:
                await self.send(message)

    async def send(self, message: rpb.ConnectResponse) -> None:
        if self.closed.is_set():
            raise BotTerminatedError(f"{self.slot.name}: stream closed ({self.close_reason})")
        try:
            async with self._write_lock:
                await self.context.write(message)
        except Exception as e:  # the RPC is gone: grpc raises various errors here
            self.close(f"write failed: {e!r}")
            raise BotTerminatedError(f"{self.slot.name}: stream closed ({e!r})") from e

    async def decide(self, request: rpb.DecisionRequest, timeout: float) -> rpb.DecisionReply:
        """Send a decision request and wait for its reply. Raises BotTimeoutError,
        BotTerminatedError or ProtocolViolation."""
        if self.violation is not None:
            v, self.violation = self.violation, None
            raise ProtocolViolation(v)
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[rpb.DecisionReply] = loop.create_future()
        self._pending, self._pending_id = fut, request.request_id
        self._last_issued = max(self._last_issued, request.request_id)
        timer = None
        try:
            await self.flush(rpb.ConnectResponse(decision_request=request),
                             timeout=max(timeout, 1.0))
            timer = loop.call_later(timeout, self._expire, fut, timeout)
            return await fut  # resolved by on_reply, _expire or close
        finally:
            if timer is not None:
                timer.cancel()
            self._pending = None
            self._pending_id = 0

    def _expire(self, fut: asyncio.Future[rpb.DecisionReply], timeout: float) -> None:
        if not fut.done():
            fut.set_exception(BotTimeoutError(f"{self.slot.name}: no reply within "
                                              f"{timeout:.3f}s"))

    def on_reply(self, reply: rpb.DecisionReply) -> None:
        fut = self._pending
        if fut is not None and not fut.done() and reply.request_id == self._pending_id:
            fut.set_result(reply)
            return
        if 0 < reply.request_id <= self._last_issued:
            # A late reply to a request that timed out: it costs nothing more. During a
            # game the bot is told so with its next messages; between games it is dropped.
            if not self.slot.game_id:
                return
            self.post(rpb.ConnectResponse(fault=rpb.Fault(
                kind=rpb.FAULT_KIND_LATE_REPLY, request_id=reply.request_id,
                detail=f"reply to request {reply.request_id} arrived after its time ran out; "
                       f"ignored")))
            return
        detail = (f"reply to request {reply.request_id}, but the open request is "
                  f"{self._pending_id}" if fut is not None
                  else f"reply to request {reply.request_id} when no decision was asked")
        if fut is not None and not fut.done():
            fut.set_exception(ProtocolViolation(detail))
        else:
            self.violation = detail

    async def read_loop(self) -> None:
        """Read the bot's messages until the stream ends."""
        try:
            while True:
                msg = await self.context.read()
                if msg is grpc.aio.EOF:
                    self.close("the bot closed its stream")
                    return
                size = msg.ByteSize()
                if size > self.max_message_bytes:
                    self.violated = True
                    self.close(f"protocol violation: a {size}-byte message (the limit is "
                               f"{self.max_message_bytes})")
                    return
                which = msg.WhichOneof("payload")
                if which == "decision_reply":
                    self.on_reply(msg.decision_reply)
                else:
                    self._violate(f"unexpected {which or 'empty'} message after the handshake")
        except asyncio.CancelledError:
            raise
        except DecodeError as e:
            self.violated = True
            self.close(f"protocol violation: a message that does not parse ({e})")
        except Exception as e:
            self.close(f"stream error: {e!r}")

    def _violate(self, detail: str) -> None:
        fut = self._pending
        if fut is not None and not fut.done():
            fut.set_exception(ProtocolViolation(detail))
        else:
            self.violation = detail

    def close(self, reason: str) -> None:
        if not self.closed.is_set():
            self.close_reason = reason
            self.closed.set()
            fut = self._pending
            if fut is not None and not fut.done():
                fut.set_exception(BotTerminatedError(f"{self.slot.name}: stream closed "
                                                     f"({reason})"))
