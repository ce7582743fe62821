"""Seat slots, tokens and live bot streams.

A :class:`Slot` is one seat instance an entrant may fill: it has a token, and at most one
live :class:`Session` (one ``Connect`` stream) at a time. Local bots get a one-time
token per process; remote bots use tokens the operator issued. A second stream with a
token whose slot is live is refused (``TOKEN_IN_USE``); once a stream ends, the slot may
be connected again (reconnect).

A session's decisions are request/reply: :meth:`Session.decide` sends a
``DecisionRequest`` and waits for the ``DecisionReply`` with the same id. A reply with an
id the referee never issued, or a second reply to a request, is a protocol violation
(charged at the decision it interrupts, or at the seat's next one); the first reply to
a request that already timed out is late and ignored. Any other message after the
handshake is a violation too. A flood of messages that answer no open request (replies
or not, with or without a decision open), a message over the size limit or bytes that
do not parse end the stream as a protocol violation: the game in progress charges it,
its Fault and GameOver still go out, and the stream then ends with a non-OK status that
says why.
"""

from __future__ import annotations

import asyncio
import enum
import hashlib
import itertools
import re
import secrets
from collections.abc import Callable, Iterator
from typing import Any

import grpc

from harness.errors import BotTerminatedError, BotTimeoutError, ProtocolViolation
from harness.protocol import (
    MAX_MESSAGE_BYTES,
    DecisionReply,
    DecodeError,
    messages,
)
from harness.protocol.messages import Outgoing


class SlotState(enum.Enum):
    WAITING = "waiting"  # nobody connected yet
    IDLE = "idle"
    PLAYING = "playing"
    DISCONNECTED = "disconnected"


class Slot:
    """One seat instance of an entrant. It announces each change of ``live`` and
    ``ready`` (a stream claims it, is welcomed, closes, lets go) through ``on_change``:
    the registry that made it tells whoever watches its slots."""

    def __init__(self, name: str, instance: int, token: str, *, remote: bool,
                 requires: tuple[int, int] | None = None,
                 on_change: Callable[[Slot], None] | None = None) -> None:
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
        self._on_change = on_change

    @property
    def state(self) -> SlotState:
        if self.session is None or self.session.closed.is_set():
            return SlotState.DISCONNECTED if self.ever_connected else SlotState.WAITING
        return SlotState.PLAYING if self.game_id else SlotState.IDLE

    @property
    def live(self) -> bool:
        return self.session is not None and not self.session.closed.is_set()

    @property
    def ready(self) -> bool:
        """Live and welcomed: a game may write to the stream (a claimed stream whose
        Welcome is still being sent is live, not ready)."""
        return self.live and self._connected.is_set()

    def changed(self) -> None:
        """Tell the watchers that ``live`` or ``ready`` may have changed (a session
        calls it when it closes)."""
        if self._on_change is not None:
            self._on_change(self)

    def claim(self, session: Session) -> None:
        """Take the seat for ``session`` (it is live from now on), before its Welcome is
        sent: the handshake checks and claims with no await in between."""
        self.session = session
        self.ever_connected = True
        self.changed()

    def attach(self, session: Session) -> None:
        """``session`` (which claimed the seat) had its Welcome: games may use it."""
        self.session = session
        self.ever_connected = True
        self._connected.set()
        self.changed()

    def detach(self, session: Session) -> None:
        """``session``'s stream has ended: the seat waits for the next one."""
        if self.session is session:
            self._connected.clear()
            self.changed()

    async def wait_connected(self, timeout: float) -> Session:
        await asyncio.wait_for(self._connected.wait(), timeout)
        assert self.session is not None
        return self.session


HASHED_PREFIX = "sha256:"
"""A token given in a configuration as ``sha256:HEX`` (its SHA-256 as 64 hex digits):
the referee admits the bot that presents the token itself, and the file need not hold
the token in clear."""

_HASHED = re.compile(r"sha256:[0-9a-fA-F]{64}")


def token_digest(token: str) -> str:
    """The SHA-256 of a token as hex; a configuration's ``sha256:HEX`` form is already one
    (see :data:`HASHED_PREFIX`)."""
    if _HASHED.fullmatch(token):
        return token[len(HASHED_PREFIX):].lower()
    return hashlib.sha256(token.encode()).hexdigest()


def hashed_token(token: str) -> str:
    """``token`` in the ``sha256:HEX`` form a configuration may hold instead."""
    return HASHED_PREFIX + token_digest(token)


class SlotRegistry:
    """Tokens to slots, for the handshake; lists slots for the operator service. Tokens
    are filed by their SHA-256 (:func:`token_digest`), so a slot can be given as a token
    or as its ``sha256:HEX`` form; a token presented in a handshake is always hashed
    first (the hashed form itself admits no one)."""

    def __init__(self) -> None:
        self._slots: dict[str, Slot] = {}
        # Asked for a token this registry did not issue (a standing ladder looks its
        # bots' tokens up by hash): the slot the stream should take, or None.
        self.resolver: Callable[[str], Slot | None] | None = None
        self._watchers: list[Callable[[Slot], None]] = []

    def watch(self, callback: Callable[[Slot], None]) -> None:
        """Call ``callback(slot)`` each time a slot's ``live`` or ``ready`` may change:
        a stream claims it, its Welcome is sent, the stream closes or lets go of it."""
        self._watchers.append(callback)

    def _changed(self, slot: Slot) -> None:
        for callback in self._watchers:
            callback(slot)

    def add(self, name: str, instance: int, token: str | None = None, *,
            remote: bool = False, requires: tuple[int, int] | None = None) -> Slot:
        token = token or "t" + secrets.token_hex(16)  # never starts with '-'
        key = token_digest(token)
        if key in self._slots:
            raise ValueError(f"{name}: token already issued to another seat")
        slot = Slot(name, instance, token, remote=remote, requires=requires,
                    on_change=self._changed)
        self._slots[key] = slot
        return slot

    def remove(self, slot: Slot) -> None:
        self._slots.pop(token_digest(slot.token), None)

    def lookup(self, token: str) -> Slot | None:
        """The slot a token presented by a bot opens (``None``: unknown)."""
        slot = self._slots.get(hashlib.sha256(token.encode()).hexdigest())
        if slot is None and self.resolver is not None:
            slot = self.resolver(token)
        return slot

    def __iter__(self) -> Iterator[Slot]:
        return iter(list(self._slots.values()))


_session_ids = itertools.count(1)
WRITE_TIMEOUT = 10.0  # seconds a write may block before the bot counts as gone
# A write blocked for the time its bot has left (in a game) is cut no sooner than this.
MIN_WRITE_CUT = 1.0
# Messages that answer no open request (late, repeated or unknown replies, and any other
# message after the handshake) tolerated between two decision requests, or since the
# last one, before the stream ends as a flood. (A slow bot sends at most one late reply
# per request.)
FLOOD_LIMIT = 16
# Late-reply notices queued for the bot at once (its next messages carry them).
MAX_NOTICES = 3
# Request ids whose fate (answered, expired, late, charged) is remembered.
REMEMBERED_REQUESTS = 64


class _Fate(enum.Enum):
    ANSWERED = "answered"  # its reply came in time
    EXPIRED = "expired"  # settled without a reply (timeout, violation, stream end)
    LATE = "late"  # expired, then its reply came
    CHARGED = "charged"  # a second reply came, and was charged as a violation


class EndStatus:
    """Why the referee ends a stream with an error status (a protocol violation)."""

    def __init__(self, code: grpc.StatusCode, detail: str) -> None:
        self.code = code
        self.detail = detail


class _WriteCut(BotTerminatedError):
    """A write that stayed blocked past its time (the bot did not read its stream) was
    abandoned, and the stream ended."""


class Session:
    """One live ``Connect`` stream."""

    def __init__(self, context: grpc.aio.ServicerContext[Any, Any], slot: Slot,
                 bot_name: str, bot_version: str, peer: str, *, bundles: bool = False,
                 max_message_bytes: int = MAX_MESSAGE_BYTES) -> None:
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
        self._pending: asyncio.Future[DecisionReply] | None = None
        self._last_issued = 0
        self._outbox: list[Outgoing] = []
        self._next_request_id = 0
        self._fates: dict[int, _Fate] = {}
        self._strays = 0  # replies since the last request that answered no open request
        self._notices = 0  # late-reply notices in the outbox
        self.violated = False  # the stream ends because of a protocol violation
        # Set when the referee ends the stream for a protocol violation: the stream stays
        # open for writing until the bot's game is over, then ends with this status.
        self.end_status: EndStatus | None = None
        # The clocks of the write in progress and of the open decision's reply share one
        # timer, re-armed only when it fires early or must fire sooner (see _watch): a
        # timer armed and cancelled for every write and every reply cost about a tenth
        # of the referee's own work per decision.
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0
        self._write_by: float | None = None  # the write in progress must end by then
        self._write_task: asyncio.Task[Any] | None = None
        self._write_cut = False  # the timer cancelled the writing task
        self._reply_by: float | None = None  # the open decision's reply is due by then
        self._reply_timeout = 0.0

    def new_request_id(self) -> int:
        """Request ids increase along the stream, across games."""
        self._next_request_id += 1
        return self._next_request_id

    def post(self, message: Outgoing) -> None:
        """Queue a message; it goes out with the next :meth:`flush` (a bundling bot gets
        the queue in one Bundle with its next decision request or game over)."""
        self._outbox.append(message)

    async def flush(self, last: Outgoing | None = None, *,
                    timeout: float = WRITE_TIMEOUT) -> None:
        """Send everything queued (plus ``last``): one Bundle to a bot that takes them,
        else one message at a time. A bot that does not read its stream (so that writes
        block) for ``timeout`` seconds is disconnected."""
        if not self._outbox and last is None:
            return
        # What asyncio.timeout does, on the session's shared timer: when the write is not
        # done by its deadline, the timer cancels this task and the write is abandoned.
        task = asyncio.current_task()
        assert task is not None
        cancelling = task.cancelling()
        deadline = asyncio.get_running_loop().time() + timeout
        self._write_by, self._write_task = deadline, task
        self._write_cut = False
        self._watch(deadline)
        queued = self._outbox
        if last is not None:
            queued.append(last)
        self._outbox = []
        self._notices = 0
        try:
            if self.bundles and len(queued) > 1:
                await self.send(messages.bundle_bytes(queued))
            else:
                for message in queued:
                    await self.send(message)
        except asyncio.CancelledError:
            if self._write_cut:
                self._write_cut = False
                if task.uncancel() <= cancelling:  # not cancelled by anyone else too
                    self.close(f"the bot did not read its stream for {timeout:g}s")
                    raise _WriteCut(f"{self.slot.name}: stream closed "
                                    f"({self.close_reason})") from None
            raise
        finally:
            self._write_by = self._write_task = None
            if self._write_cut:  # cut as the write ended: the cancel is not this caller's
                self._write_cut = False
                task.uncancel()
        if self.end_status is not None and any(
                messages.decode(m).WhichOneof("payload") == "game_over" for m in queued):
            self.close(self.end_status.detail)  # the bot has its GameOver: end the stream

    def _watch(self, deadline: float) -> None:
        """Make sure the session's timer fires no later than ``deadline``."""
        if self._timer is None or deadline < self._timer_at:
            if self._timer is not None:
                self._timer.cancel()
            self._timer_at = deadline
            self._timer = asyncio.get_running_loop().call_at(deadline, self._on_timer)

    def _on_timer(self) -> None:
        """The shared timer fired: end the write or the decision whose time is up, and
        re-arm for the one still running."""
        self._timer = None
        now = asyncio.get_running_loop().time()
        write_by, reply_by = self._write_by, self._reply_by
        if write_by is not None:
            if write_by <= now and not self._write_cut and self._write_task is not None:
                self._write_cut = True
                self._write_task.cancel()
            elif write_by > now:
                self._watch(write_by)
        if reply_by is not None:
            if reply_by <= now:
                self._reply_by = None
                fut = self._pending
                if fut is not None and not fut.done():
                    fut.set_exception(BotTimeoutError(
                        f"{self.slot.name}: no reply within {self._reply_timeout:.3f}s"))
            else:
                self._watch(reply_by)

    async def send(self, message: Outgoing) -> None:
        """Write one message to the bot. One over the message limit is not sent (the
        server's transport allows more, for the operator's answers): the stream ends."""
        if self.closed.is_set():
            raise BotTerminatedError(f"{self.slot.name}: stream closed ({self.close_reason})")
        size = messages.size(message)
        if size > self.max_message_bytes:
            self.close(f"a {size}-byte message for the bot is over the "
                       f"{self.max_message_bytes}-byte limit")
            raise BotTerminatedError(f"{self.slot.name}: stream closed ({self.close_reason})")
        try:
            async with self._write_lock:
                await self.context.write(message)
        except Exception as e:  # the RPC is gone: grpc raises various errors here
            self.close(f"write failed: {e!r}")
            raise BotTerminatedError(f"{self.slot.name}: stream closed ({e!r})") from e

    async def decide(self, request_id: int, request: Outgoing,
                     timeout: float) -> DecisionReply:
        """Send a decision request (``request``: the ConnectResponse that carries the
        DecisionRequest numbered ``request_id``) and wait for its reply. Raises
        BotTimeoutError, BotTerminatedError or ProtocolViolation."""
        if self.violation is not None:
            v, self.violation = self.violation, None
            raise ProtocolViolation(v)
        if self.end_status is not None:
            raise BotTerminatedError(f"{self.slot.name}: stream closed "
                                     f"({self.end_status.detail})")
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[DecisionReply] = loop.create_future()
        self._pending, self._pending_id = fut, request_id
        self._strays = 0
        self._last_issued = max(self._last_issued, request_id)
        # The decision's clock starts as the request's write begins: a write blocks only
        # while the bot does not read its stream (HTTP/2 flow control), and a bot that
        # holds its reading back to think first must not think off the clock.
        deadline = loop.time() + timeout
        try:
            # A write still blocked when the decision's time is up (at least
            # MIN_WRITE_CUT) is cut, and the stream ends with a timeout: a bot must not
            # stall its game, past its own time, by not reading its request.
            try:
                await self.flush(request, timeout=max(timeout, MIN_WRITE_CUT))
            except _WriteCut:
                raise BotTimeoutError(
                    f"{self.slot.name}: no reply within {timeout:.3f}s (it did not read "
                    f"its request, so its stream was ended)") from None
            if not fut.done():  # due ``timeout`` after the write began (now, if past)
                self._reply_by = deadline
                self._reply_timeout = timeout
                self._watch(deadline)
            return await fut  # resolved by on_reply, the timer (_on_timer) or close
        except BaseException:
            if fut.done() and not fut.cancelled():
                fut.exception()  # settled by close() while the write failed: seen here
            raise
        finally:
            self._reply_by = None
            self._pending = None
            self._pending_id = 0
            self._settle(request_id, _Fate.EXPIRED)

    def _settle(self, request_id: int, fate: _Fate) -> None:
        """Remember what became of a request (the first fate sticks, except that a later
        reply moves EXPIRED on to LATE and a repeated one to CHARGED)."""
        fates = self._fates
        fates.setdefault(request_id, fate)
        if len(fates) > REMEMBERED_REQUESTS:
            del fates[next(iter(fates))]  # the oldest (ids are issued in order)

    def fate_of(self, request_id: int) -> str | None:
        """What became of an issued request, as far as it is remembered: ``"answered"``,
        ``"expired"``, ``"late"`` or ``"charged"`` (None: not settled, or forgotten)."""
        fate = self._fates.get(request_id)
        return None if fate is None else fate.value

    def on_reply(self, reply: DecisionReply) -> None:
        rid = reply.request_id
        fut = self._pending
        if fut is not None and not fut.done() and rid == self._pending_id:
            fut.set_result(reply)
            self._settle(rid, _Fate.ANSWERED)
            return
        if self._flooded():
            return
        if not 0 < rid <= self._last_issued:
            self._violate(f"reply to request {rid}, but the open request is "
                          f"{self._pending_id}" if fut is not None
                          else f"reply to request {rid} when no decision was asked")
            return
        # An issued request whose decision is settled (or is being settled right now).
        fate = self._fates.get(rid, _Fate.EXPIRED)
        if fate is _Fate.EXPIRED:
            self._fates[rid] = _Fate.LATE
            self._late(rid)
        elif fate is not _Fate.CHARGED:  # ANSWERED or LATE: it already had its reply
            self._fates[rid] = _Fate.CHARGED
            self._violate(f"a second reply to request {rid}")
        # else: a repeated reply already charged once; the flood limit bounds them

    def _flooded(self) -> bool:
        """Count one message that does not answer the open request (a stray reply, or
        any other message after the handshake); past :data:`FLOOD_LIMIT` since the last
        decision request, end the stream as a flood (True)."""
        self._strays += 1
        if self._strays <= FLOOD_LIMIT:
            return False
        self.end_for_violation(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            f"protocol violation: a flood of messages that answer no open request "
            f"({self._strays} since the last decision request)")
        return True

    def _late(self, request_id: int) -> None:
        """A late reply to a request that timed out: it costs nothing more. During a game
        the bot is told so with its next messages (a few notices at most); between games
        it is dropped."""
        if not self.slot.game_id or self._notices >= MAX_NOTICES:
            return
        self._notices += 1
        self.post(messages.fault("late_reply", f"reply to request {request_id} arrived "
                                               f"after its decision was closed (its time "
                                               f"ran out, or a fault ended it); ignored",
                                 request_id=request_id))

    async def read_loop(self) -> None:
        """Read the bot's messages until the stream ends, or until a violation ends it."""
        try:
            while self.end_status is None:
                msg = await self.context.read()
                if msg is grpc.aio.EOF:
                    self.close("the bot closed its stream")
                    return
                size = msg.ByteSize()
                if size > self.max_message_bytes:
                    self.end_for_violation(
                        grpc.StatusCode.RESOURCE_EXHAUSTED,
                        f"protocol violation: a {size}-byte message (the limit is "
                        f"{self.max_message_bytes})")
                    return
                which = msg.WhichOneof("payload")
                if which == "decision_reply":
                    self.on_reply(msg.decision_reply)
                elif not self._flooded():
                    self._violate(f"unexpected {which or 'empty'} message after the handshake")
        except asyncio.CancelledError:
            raise
        except DecodeError as e:
            self.end_for_violation(grpc.StatusCode.INVALID_ARGUMENT,
                                   f"protocol violation: a message that does not parse ({e})")
        except Exception as e:
            self.close(f"stream error: {e!r}")

    def end_for_violation(self, code: grpc.StatusCode, detail: str) -> None:
        """Stop reading and end the stream for a protocol violation. The decision in
        progress fails at once; the stream stays open for writing until the bot's game
        sends its GameOver (at most :data:`WRITE_TIMEOUT` seconds), so that the bot
        learns its Fault and the result, then ends with ``code`` and ``detail``."""
        if self.end_status is not None or self.closed.is_set():
            return
        self.violated = True
        self.end_status = EndStatus(code, detail)
        fut = self._pending
        if fut is not None and not fut.done():
            fut.set_exception(BotTerminatedError(f"{self.slot.name}: stream closed "
                                                 f"({detail})"))
        if not self.slot.game_id:
            self.close(detail)  # no game to finish: end now
        else:
            asyncio.get_running_loop().call_later(WRITE_TIMEOUT, self.close, detail)

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
            self.slot.changed()  # no longer live, from now on
            if self._timer is not None and self._write_by is None:
                self._timer.cancel()  # nothing left to time (a cut write still is)
                self._timer = None
            fut = self._pending
            if fut is not None and not fut.done():
                fut.set_exception(BotTerminatedError(f"{self.slot.name}: stream closed "
                                                     f"({reason})"))
