"""The gRPC referee server: bots dial ``euchre.v1.RefereeService/Connect``; operators use
``euchre.v1.OperatorService``, ``grpc.health.v1`` and server reflection.

The server binds to loopback by default, limits message sizes, sends keepalive pings,
and shuts down gracefully: health turns NOT_SERVING, new handshakes are refused with
``SHUTTING_DOWN``, and running games get a grace period before they are interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import itertools
import logging
import os
import resource
import shutil
import socket
import tempfile
import time
import unicodedata
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from harness import __version__
from harness.errors import BotTerminatedError, HarnessError
from harness.protocol import (
    MAX_MESSAGE_BYTES,
    PROTOCOL_VERSION,
    REFEREE_SERVICE_NAME,
    REFUSAL_REASON_BAD_TOKEN,
    REFUSAL_REASON_MALFORMED,
    REFUSAL_REASON_SHUTTING_DOWN,
    REFUSAL_REASON_TOKEN_IN_USE,
    REFUSAL_REASON_UNSUPPORTED_DECK,
    REFUSAL_REASON_UNSUPPORTED_FORM,
    REFUSAL_REASON_UNSUPPORTED_VERSION,
    TRANSPORT_MAX_BYTES,
    ConnectRequest,
    DecodeError,
    Hello,
    RefereeServiceServicer,
    add_referee_service,
    messages,
    operator,
)
from harness.protocol.tls import ServerTLS
from harness.referee.operator import OperatorServicer, TournamentCalls
from harness.referee.peer import is_loopback, parse_peer
from harness.referee.session import Session, Slot, SlotRegistry
from harness.sandbox import SOCKET_NAME

log = logging.getLogger("euchre.referee")

HANDSHAKE_TIMEOUT = 10.0
MAX_OPENING = 512
"""Streams that may wait for their Hello at once, on one listening server (streams of
every connection together). A client may open streams without end on one connection;
each one held until the handshake timeout costs the referee memory. When one more
arrives, the oldest waiting stream of the caller (address) with the most waiting is
ended (``RESOURCE_EXHAUSTED``, which bots retry like a dropped connection) to make
room: an honest bot's Hello follows its stream at once, so a caller that holds silent
streams only ever pushes out its own, never locks a bot out (refusing newcomers
instead would let anyone fill the room and keep every bot from connecting)."""
CONNECTION_IDLE_MS = 30_000
"""A connection with no call in progress for this many milliseconds is closed (gRPC's
``max_connection_idle_ms``; a bot's stream is a call for as long as it plays): idle
connections cannot hold a port's share of connections (:func:`connection_cap`) for
long, and a client that needs one again simply dials."""
TRANSPORT_HANDSHAKE_MS = 10_000
"""A connection must finish its transport's handshake (TLS, if any, and HTTP/2's
preface and settings) within this many milliseconds, or it is closed (gRPC's default is
two minutes: long enough for idle connections to pile up)."""
FILES_KEPT = 512
"""Open files that the gRPC connections leave to everything else: the live page's
connections and the reserve it keeps for bots' pipes, logs and the store."""
MIN_CONNECTIONS = 64


SOCKET_FOLDER_PREFIX = "euchre-referee-"
"""The name of each referee's folder for the boxes' socket starts so, in the temporary
directory."""
STALE_AFTER_S = 60.0
"""A socket folder this old whose socket nothing listens on was left by a referee that
was killed before it could remove it."""


def remove_stale_socket_folders(parent: Path, *, older_than: float = STALE_AFTER_S
                                ) -> list[Path]:
    """Remove from ``parent`` the boxes' socket folders that referees left when they were
    killed (a referee that stops removes its own): folders of this user's, made over
    ``older_than`` seconds ago, whose socket is gone or refuses connections. A folder
    whose socket accepts a connection belongs to a running referee and is kept. Returns
    the folders removed."""
    removed = []
    now = time.time()
    with contextlib.suppress(OSError), os.scandir(parent) as entries:
        for entry in entries:
            if not entry.name.startswith(SOCKET_FOLDER_PREFIX):
                continue
            with contextlib.suppress(OSError):
                info = entry.stat(follow_symlinks=False)
                if (not entry.is_dir(follow_symlinks=False) or info.st_uid != os.getuid()
                        or now - info.st_mtime < older_than):
                    continue
                if _socket_answers(Path(entry.path) / SOCKET_NAME):
                    continue
                shutil.rmtree(entry.path)
                removed.append(Path(entry.path))
    return removed


def _socket_answers(path: Path) -> bool:
    """Whether something listens on the Unix socket ``path`` (False: no such socket, or
    connections are refused)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(str(path))
        except (FileNotFoundError, ConnectionRefusedError):
            return False
        except OSError:
            return True  # busy or not ours to judge: keep it
        return True


def connection_cap() -> int:
    """How many connections one listening port of the referee accepts at once: a third
    of what the open-file limit leaves beside :data:`FILES_KEPT` (the referee listens on
    up to three: its port, the loopback port beside a TLS one, the boxes' socket), at
    least :data:`MIN_CONNECTIONS`. gRPC closes a connection over the cap as it accepts
    it, so that no one can fill the process's file table by dialing and waiting."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY:
        soft = 1 << 20
    return max(MIN_CONNECTIONS, (soft - FILES_KEPT) // 3)


# The transport's limit on what the server sends: far above any message to a bot (each
# is checked against the 64 KiB message limit on its own), so that the operator's
# answers the referee builds (standings of many bots, long game lists) fit.
SEND_MAX_BYTES = 16 * 1024 * 1024
SELF_REPORT_CHARS = 100  # Hello.bot_name and bot_version are cut to this many characters
# Unicode categories never kept from a bot's self-report: control and format characters
# (escape sequences, bidi overrides...) and line and paragraph separators.
_UNSHOWN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})


def self_reported(text: str) -> str:
    """A bot's own name or version as the referee keeps, logs and shows it: without
    control, format or line/paragraph separator characters, cut to
    :data:`SELF_REPORT_CHARS`."""
    kept = (c for c in text if unicodedata.category(c) not in _UNSHOWN_CATEGORIES)
    return "".join(kept)[:SELF_REPORT_CHARS]


class WaitingRoom:
    """The streams waiting for their Hello (the read of their first message), by
    caller; at most ``capacity``, making room as :data:`MAX_OPENING` says."""

    def __init__(self, capacity: int = MAX_OPENING) -> None:
        self.capacity = capacity
        self._by_caller: dict[str, dict[int, asyncio.Future[Any]]] = {}
        self._ids = itertools.count()
        self.evicted: set[int] = set()

    def __len__(self) -> int:
        return sum(len(waiting) for waiting in self._by_caller.values())

    def enter(self, caller: str, read: asyncio.Future[Any]) -> int:
        """Admit ``read`` (a stream's first read) for ``caller``, ending the oldest of the
        caller with the most waiting if the room is full; returns its number."""
        if len(self) >= self.capacity:
            fullest = max(self._by_caller.values(), key=len)
            oldest = next(iter(fullest))
            self.evicted.add(oldest)
            fullest.pop(oldest).cancel()
        number = next(self._ids)
        self._by_caller.setdefault(caller, {})[number] = read
        return number

    def leave(self, caller: str, number: int) -> bool:
        """Take stream ``number`` out (once or more); whether it was ended to make room
        (said once)."""
        waiting = self._by_caller.get(caller, {})
        waiting.pop(number, None)
        if not waiting:
            self._by_caller.pop(caller, None)
        if number in self.evicted:
            self.evicted.discard(number)
            return True
        return False


def _caller(context: grpc.aio.ServicerContext[Any, Any]) -> str:
    """Who opened a stream, as far as the waiting room tells callers apart: the address
    (every connection from one IPv4 address, or one IPv6 /64, is one caller), or the peer
    string as it is."""
    peer = context.peer() or ""
    return parse_peer(peer).caller or peer


class RefereeServicer(RefereeServiceServicer):
    def __init__(self, server: RefereeServer) -> None:
        self.server = server
        self.waiting = WaitingRoom()  # streams waiting for their Hello

    async def Connect(  # type: ignore[override]
            self, request_iterator: AsyncIterator[ConnectRequest],
            context: grpc.aio.ServicerContext[Any, Any]) -> None:
        """The bot's stream: handshake, then read replies until it ends. Messages to the
        bot are written by the game runner through :class:`Session`. A stream the
        referee ends for a protocol violation ends with an error status saying why."""
        caller = _caller(context)
        read = asyncio.ensure_future(context.read())
        number = self.waiting.enter(caller, read)
        try:
            first = await asyncio.wait_for(read, self.server.handshake_timeout)
        except TimeoutError:
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED,
                                "no Hello within the handshake timeout")
            return
        except DecodeError as e:
            await _refuse(context, REFUSAL_REASON_MALFORMED,
                          f"the first message does not parse ({e})",
                          grpc.StatusCode.INVALID_ARGUMENT)
            return
        except asyncio.CancelledError:
            if not self.waiting.leave(caller, number):
                raise  # the handler itself was cancelled, not its read to make room
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                f"{MAX_OPENING} streams were waiting for their Hello, "
                                f"more of them from this address than from any other: "
                                f"this one, its oldest, was ended; try again")
            return
        finally:
            self.waiting.leave(caller, number)  # (again: harmless)
        if first is grpc.aio.EOF:
            return
        session = await self._handshake(first, context)
        if session is None:
            return
        reader = asyncio.ensure_future(session.read_loop())
        try:
            await session.closed.wait()
        finally:
            reader.cancel()
            # A handler cancelled before its reader saw the stream end (gRPC cancels it
            # when the bot cancels its call, or the server stops) closes the session
            # here: a session left open would keep its seat live with no stream.
            session.close("the stream was cancelled")
            session.slot.detach(session)
            log.info("session %s (%s) ended: %s", session.id, session.slot.name,
                     session.close_reason)
        if session.end_status is not None:
            await context.abort(session.end_status.code, session.end_status.detail)

    async def _handshake(self, msg: ConnectRequest,
                         context: grpc.aio.ServicerContext[Any, Any]) -> Session | None:
        async def refuse(reason: int, detail: str, code: grpc.StatusCode) -> None:
            await _refuse(context, reason, detail, code)

        if msg.WhichOneof("payload") != "hello":
            await refuse(REFUSAL_REASON_MALFORMED, "the first message must be Hello",
                         grpc.StatusCode.INVALID_ARGUMENT)
            return None
        size = msg.ByteSize()
        if size > self.server.max_message_bytes:
            await refuse(REFUSAL_REASON_MALFORMED,
                         f"a {size}-byte Hello (the limit is "
                         f"{self.server.max_message_bytes} bytes)",
                         grpc.StatusCode.RESOURCE_EXHAUSTED)
            return None
        hello = msg.hello
        if self.server.shutting_down:
            await refuse(REFUSAL_REASON_SHUTTING_DOWN, "the referee is shutting down",
                         grpc.StatusCode.UNAVAILABLE)
            return None
        if hello.protocol_version != PROTOCOL_VERSION:
            await refuse(REFUSAL_REASON_UNSUPPORTED_VERSION,
                         f"protocol version {hello.protocol_version} is not supported; "
                         f"this referee speaks version {PROTOCOL_VERSION}",
                         grpc.StatusCode.FAILED_PRECONDITION)
            return None
        bot_name, bot_version = self_reported(hello.bot_name), self_reported(hello.bot_version)
        if not bot_name.strip():
            await refuse(REFUSAL_REASON_MALFORMED, "Hello.bot_name is empty (or only "
                         "control characters)", grpc.StatusCode.INVALID_ARGUMENT)
            return None
        slot = self.server.registry.lookup(hello.token)
        if slot is None:
            await refuse(REFUSAL_REASON_BAD_TOKEN, "unknown token",
                         grpc.StatusCode.UNAUTHENTICATED)
            return None
        # From the check that the seat is free to the claim: no await, so that two
        # Hellos with one token cannot both pass the check.
        refusal = _seat_refusal(slot, hello)
        if refusal is not None:
            await refuse(*refusal)
            return None
        session = Session(context, slot, bot_name, bot_version,
                          context.peer(), bundles=hello.capabilities.bundles,
                          max_message_bytes=self.server.max_message_bytes)
        slot.claim(session)  # live from now on
        try:  # through the session's write lock: nothing else is written before it
            await session.send(messages.welcome(session.id, __version__))
        except BotTerminatedError:  # the RPC is gone; send closed the session
            return None
        except BaseException as e:  # cancelled while sending
            session.close(f"the Welcome could not be sent: {e!r}")
            raise
        else:
            slot.attach(session)  # ready
        log.info("session %s: %s (%s %s) from %s", session.id, slot.name, session.bot_name,
                 session.bot_version, session.peer)
        return session


def _seat_refusal(slot: Slot, hello: Hello) -> tuple[int, str, grpc.StatusCode] | None:
    """Why ``slot`` cannot take this bot (reason, detail, status), or None."""
    if slot.live:
        return (REFUSAL_REASON_TOKEN_IN_USE, "this token's seat already has a live stream",
                grpc.StatusCode.ALREADY_EXISTS)
    if slot.requires is None:
        return None
    form, deck = slot.requires
    caps = hello.capabilities
    if caps.forms and form not in caps.forms:
        return (REFUSAL_REASON_UNSUPPORTED_FORM, f"this referee plays "
                f"{messages.form_name(form)}, which the bot does not support",
                grpc.StatusCode.FAILED_PRECONDITION)
    if caps.decks and deck not in caps.decks:
        return (REFUSAL_REASON_UNSUPPORTED_DECK, f"this referee plays "
                f"{messages.deck_name(deck)}, which the bot does not support",
                grpc.StatusCode.FAILED_PRECONDITION)
    return None


async def _refuse(context: grpc.aio.ServicerContext[Any, Any], reason: int, detail: str,
                  code: grpc.StatusCode) -> None:
    """Send a Refusal, then end the stream with ``code``."""
    await context.write(messages.refusal(reason, detail))  # type: ignore[arg-type]
    await context.abort(code, detail)


class RefereeServer:
    """Owns the grpc.aio server, the token registry and the health service."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *,
                 handshake_timeout: float = HANDSHAKE_TIMEOUT,
                 max_message_bytes: int = MAX_MESSAGE_BYTES,
                 operator_token: str | None = None, tls: ServerTLS | None = None) -> None:
        self.host = host
        self.requested_port = port
        self.port = 0
        # With TLS, the port above speaks only TLS, and the bots the referee starts
        # itself dial a second, plaintext port on loopback (local_port).
        self.tls = tls
        self.local_port = 0
        self.handshake_timeout = handshake_timeout
        self.servicer: RefereeServicer | None = None  # the bot service of the port
        self.max_message_bytes = max_message_bytes
        self.registry = SlotRegistry()
        self.shutting_down = False
        # A standing referee (a ladder) that is expected to start again: its Shutdown
        # tells bots so, and they reconnect instead of exiting.
        self.restarts = False
        # Operator calls: with a token, only callers presenting it ("authorization:
        # Bearer TOKEN" metadata); without one, only callers on this machine.
        self.operator_token = operator_token
        self.tournaments: TournamentCalls | None = None
        self._server: grpc.aio.Server | None = None
        self._health = health.aio.HealthServicer()
        self._on_shutdown: list[Callable[[], Any]] = []
        self._services: list[tuple[str, Callable[[grpc.aio.Server], None]]] = []
        # Boxed bots dial a Unix socket in a private directory, served by a second
        # server that offers the bot service only (see box_socket_dir).
        self._box_server: grpc.aio.Server | None = None
        self._box_dir: Path | None = None
        self._box_lock = asyncio.Lock()

    @property
    def address(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def local_address(self) -> str:
        """Where the bots this referee starts on this machine dial: the referee's own
        address, or with TLS a plaintext port on loopback."""
        return f"127.0.0.1:{self.local_port}" if self.tls is not None else self.address

    def operator_allowed(self, context: grpc.aio.ServicerContext[Any, Any]) -> bool:
        """The caller presents the operator token (compared in constant time), or, when
        the referee has none, calls from this machine."""
        if self.operator_token:
            metadata = dict(context.invocation_metadata() or ())
            given = str(metadata.get("authorization", ""))
            return hmac.compare_digest(given.encode(), f"Bearer {self.operator_token}".encode())
        return is_loopback(context.peer())

    async def require_operator(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        """Abort the call with PERMISSION_DENIED unless :meth:`operator_allowed`: the one
        check of every operator call (tournaments and ladders alike)."""
        if not self.operator_allowed(context):
            await context.abort(grpc.StatusCode.PERMISSION_DENIED,
                                "operator calls need the operator token (metadata "
                                "'authorization: Bearer TOKEN'), or a caller on this machine "
                                "when the referee has none")

    def add_service(self, name: str, adder: Callable[[grpc.aio.Server], None]) -> None:
        """Serve one more service (call before :meth:`start`): ``adder`` adds its
        servicer to the grpc server; ``name`` (its full name) joins reflection and
        health."""
        self._services.append((name, adder))

    def _options(self) -> Sequence[tuple[str, Any]]:
        return [
            ("grpc.max_receive_message_length", max(self.max_message_bytes,
                                                     TRANSPORT_MAX_BYTES)),
            ("grpc.max_send_message_length", max(self.max_message_bytes, SEND_MAX_BYTES)),
            ("grpc.keepalive_time_ms", 20_000),
            ("grpc.keepalive_timeout_ms", 10_000),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
            ("grpc.so_reuseport", 0),
            ("grpc.max_allowed_incoming_connections", connection_cap()),
            ("grpc.server_handshake_timeout_ms", TRANSPORT_HANDSHAKE_MS),
            ("grpc.max_connection_idle_ms", CONNECTION_IDLE_MS),
        ]

    async def start(self) -> None:
        server = grpc.aio.server(options=self._options())
        self.servicer = RefereeServicer(self)
        add_referee_service(self.servicer, server)
        operator.add_to_server(OperatorServicer(self), server)
        health_pb2_grpc.add_HealthServicer_to_server(self._health, server)
        for _, adder in self._services:
            adder(server)
        names = (
            REFEREE_SERVICE_NAME,
            operator.SERVICE_NAME,
            health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
            reflection.SERVICE_NAME,
            *(name for name, _ in self._services),
        )
        reflection.enable_server_reflection(names, server)
        where = f"{self.address_host()}:{self.requested_port}"
        try:
            if self.tls is None:
                self.port = server.add_insecure_port(where)
            else:
                self.port = server.add_secure_port(where, self.tls.credentials())
                self.local_port = server.add_insecure_port("127.0.0.1:0")
        except RuntimeError:
            self.port = 0
        if self.port == 0 or (self.tls is not None and self.local_port == 0):
            raise HarnessError(f"cannot listen on {self.host}:{self.requested_port} (port in "
                               f"use, or not an address of this machine)")
        await server.start()
        self._server = server
        for name in ("", *names[:2]):
            await self._health.set(name, health_pb2.HealthCheckResponse.SERVING)
        log.info("referee listening on %s%s", self.address,
                 " (TLS)" if self.tls is not None else "")

    async def box_socket_dir(self) -> Path:
        """The directory of the Unix socket that boxed bots dial (made and served on the
        first call). It is private to this referee: a fresh directory that only root
        may list, holding ``referee.sock``; the socket is served by a second gRPC server
        that offers the bot service only (no operator calls, health or reflection), so
        a boxed bot reaches nothing else of the referee. Mounted read-only into each
        box. Folders that killed referees left behind are removed first
        (:func:`remove_stale_socket_folders`)."""
        async with self._box_lock:
            if self._box_dir is not None:
                return self._box_dir
            parent = Path(tempfile.gettempdir())
            for stale in await asyncio.to_thread(remove_stale_socket_folders, parent):
                log.info("removed %s, left by a referee that was killed", stale)
            folder = Path(tempfile.mkdtemp(prefix=SOCKET_FOLDER_PREFIX, dir=parent))
            os.chmod(folder, 0o711)  # boxes (user nobody) may enter, not list
            server = grpc.aio.server(options=self._options())
            add_referee_service(RefereeServicer(self), server)
            if server.add_insecure_port(f"unix:{folder / SOCKET_NAME}") == 0:
                shutil.rmtree(folder, ignore_errors=True)
                raise HarnessError(f"cannot listen on a Unix socket in {folder}")
            await server.start()
            os.chmod(folder / SOCKET_NAME, 0o666)
            self._box_server, self._box_dir = server, folder
            log.info("boxed bots dial %s", folder / SOCKET_NAME)
            return folder

    async def _stop_box_socket(self, grace: float) -> None:
        server, folder = self._box_server, self._box_dir
        self._box_server = self._box_dir = None
        if server is not None:
            await server.stop(grace)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    def address_host(self) -> str:
        return f"[{self.host}]" if ":" in self.host else self.host

    def on_shutdown(self, callback: Callable[[], Any]) -> None:
        self._on_shutdown.append(callback)

    def remove_shutdown_callback(self, callback: Callable[[], Any]) -> None:
        if callback in self._on_shutdown:
            self._on_shutdown.remove(callback)

    async def stop(self, grace: float = 5.0) -> None:
        """Graceful shutdown: NOT_SERVING, refuse new bots, let callbacks (running games)
        finish or interrupt, tell connected bots, close."""
        if self._server is None:
            return
        self.shutting_down = True
        await self._health.enter_graceful_shutdown()
        # At once, so that every arena's grace period runs in parallel with the others.
        results = [cb() for cb in list(self._on_shutdown)]
        for error in await asyncio.gather(*(r for r in results if asyncio.iscoroutine(r)),
                                          return_exceptions=True):
            if isinstance(error, BaseException):
                log.error("shutdown step failed: %r", error)
        # Every connected bot is told at once, each write given a second: a bot that does
        # not read its stream must not hold up the others' Shutdown, nor the stop, by a
        # second each.
        notice = messages.shutdown("the referee is shutting down", restarting=self.restarts)

        async def tell(session: Session) -> None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(session.send(notice), 1.0)
            session.close("referee shutdown")

        await asyncio.gather(*(tell(slot.session) for slot in self.registry
                               if slot.session is not None
                               and not slot.session.closed.is_set()))
        await asyncio.gather(self._server.stop(grace), self._stop_box_socket(grace))
        self._server = None

    async def wait(self) -> None:
        if self._server is not None:
            await self._server.wait_for_termination()
