"""SubmitBot and GetBuildLog of ``euchre.v1.LadderService``: a hosted bot's code
uploaded over gRPC, and its build's log.

Who may call: the operator (as for every LadderService call), or a bot's own token in the
same ``authorization: Bearer TOKEN`` metadata, for its own bot only (any version of it).
A token is compared as :meth:`harness.ladder.registry.Registry.authenticate` does (hash,
constant time) and never logged.

A submission is a header, then the bundle's bytes in chunks. The size the header
declares is checked against the ladder's cap before anything is received, and the bytes
are counted as they come; the whole bundle is then hashed, unpacked, its manifest read
(:class:`harness.ladder.uploads.Receiving`), and only then is the new version registered,
its files recorded in the same transaction. Any refusal leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import grpc

from harness.errors import ConfigError, UploadLimit
from harness.hosting.calls import Context, OneAtATime, abort, upload_format
from harness.hosting.files import Stored, receive_bundle
from harness.ladder.registry import RegisteredBot, Token
from harness.ladder.state import RunningLadder
from harness.protocol import ladder as lp

if TYPE_CHECKING:
    from harness.referee.server import RefereeServer

__all__ = ["Submissions"]

log = logging.getLogger("euchre.ladder")

DAY = timedelta(days=1)
HEADER_TIMEOUT_S = 30.0
"""How long a SubmitBot call (its token already checked) may take to send its header."""


def _bearer(context: Context) -> str:
    metadata = dict(context.invocation_metadata() or ())
    given = str(metadata.get("authorization", ""))
    return given[len("Bearer "):] if given.startswith("Bearer ") else ""


class Submissions:
    """The upload calls of one running ladder."""

    def __init__(self, runtime: RunningLadder, server: RefereeServer) -> None:
        self.runtime = runtime
        self.server = server
        self._uploads = OneAtATime()

    async def _caller(self, context: Context) -> RegisteredBot | None:
        """Who calls, from the call's token alone (before anything is read): the bot
        whose token it is, or None for the operator; aborts for anyone else."""
        entrant = self.runtime.registry.authenticate(_bearer(context))
        if entrant is None:
            await self.server.require_operator(context)
        return entrant

    async def _authorize(self, context: Context, name: str) -> RegisteredBot | None:
        """:meth:`_caller`, let through for ``name``'s bot only (:meth:`_own`)."""
        caller = await self._caller(context)
        await self._own(context, caller, name)
        return caller

    async def _own(self, context: Context, entrant: RegisteredBot | None, name: str) -> None:
        """Abort unless ``entrant`` (a bot's token; None: the operator) may act for
        ``name``'s bot: a bot's token acts for its own bot only."""
        base = name.split("@", 1)[0]
        if entrant is not None and entrant.base != base:
            await abort(context, grpc.StatusCode.PERMISSION_DENIED,
                        f"a bot's token submits and reads only its own bot "
                        f"({entrant.base}); use the operator token for {base!r}")

    async def submit(self, requests: AsyncIterator[lp.SubmitBotRequest],
                     context: Context) -> tuple[RegisteredBot, Token, str, str]:
        """Receive, check and store one submission; returns the new version, its token,
        the bundle's sha256 and the version's build state. A registry's ConfigError
        propagates (the caller turns it into a status)."""
        # The token is checked before a byte is read: a call without one is refused at
        # once, never held open waiting for its header.
        caller = await self._caller(context)
        try:
            first = await asyncio.wait_for(anext(aiter(requests), None), HEADER_TIMEOUT_S)
        except TimeoutError:
            await abort(context, grpc.StatusCode.DEADLINE_EXCEEDED,
                        f"no header within {HEADER_TIMEOUT_S:g} s")
        if first is None or first.WhichOneof("part") != "header":
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT,
                        "the first message of SubmitBot must be its header")
        header = first.header
        await self._own(context, caller, header.name)
        fmt = await upload_format(context, header)
        # Whatever happens, nothing of the bundle is left in ``tmp/`` once the block
        # ends (before any answer is sent).
        async with self._uploads.receiving(context, header.name.split("@", 1)[0]):
            if caller is not None:
                self._check_daily_limit(caller.base)
            stored = await receive_bundle(self.runtime.uploads, fmt, header.size,
                                          header.sha256, requests)
            entrant, token = self._register(header, stored)
        log.info("%s submitted (sha256 %s, %s)", entrant.name, stored.sha256,
                 stored.manifest.runtime)
        state = self.runtime.hosting.submitted(entrant.name)
        self.runtime.wake()
        return entrant, token, stored.sha256, state

    def _check_daily_limit(self, base: str) -> None:
        """UploadLimit when ``base`` already has ``submissions_per_day`` versions
        registered in the last 24 hours (by anyone): a bot's own token may then submit
        again once the oldest of them is a day old. The operator is never refused."""
        limit = self.runtime.settings.submissions_per_day
        recent = self.runtime.registry.registered_since(base, datetime.now(UTC) - DAY)
        if len(recent) >= limit:
            after = (recent[-limit] + DAY).isoformat(timespec="seconds")
            raise UploadLimit(f"{base} has {len(recent)} versions registered in the last 24 "
                              f"hours, this ladder's limit for a bot's token ([ladder] "
                              f"submissions_per_day = {limit}); the next is accepted from "
                              f"{after}")

    def _register(self, header: lp.SubmitHeader, stored: Stored) -> tuple[RegisteredBot, Token]:
        """The new version, recorded as hosted with ``stored`` in the same transaction."""
        registry = self.runtime.registry
        record = self.runtime.uploads.recorder(stored)
        base = header.name.split("@", 1)[0]
        try:
            registry.get(base)
        except ConfigError:
            if base != header.name:
                raise
            settings = self.runtime.settings
            if not header.owner:
                raise ConfigError("owner", f"{base!r} is a new bot: its first submission "
                                           f"names its owner") from None
            return registry.register(
                base, header.owner, description=header.description,
                concurrency=settings.concurrency_for(header.concurrency), also=record)
        return registry.new_version(base, also=record)

    async def build_log(self, request: lp.GetBuildLogRequest,
                        context: Context) -> lp.GetBuildLogResponse:
        await self._authorize(context, request.name)
        hosted = self.runtime.uploads.get(request.name)
        if hosted is None:
            await abort(context, grpc.StatusCode.NOT_FOUND,
                        f"no hosted bot named {request.name!r} (submitted bots only)")
        text = await asyncio.to_thread(self.runtime.uploads.read_log, request.name)
        return lp.GetBuildLogResponse(build_state=hosted.state, detail=hosted.detail,
                                      log=text)
