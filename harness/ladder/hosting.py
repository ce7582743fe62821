"""Hosted bots on a running ladder: build each submitted version once, in a box, then
seat it like a house bot whose command runs in a box.

A version whose bot.toml has a ``build`` command starts as ``building``. Builds run one
at a time, each as :func:`harness.hosting.build.build` says; a failed one marks the
version ``build failed`` with the reason: it is never seated, so it never plays and
never forfeits. A ladder killed mid-build starts that build again when it comes back.

A ``ready`` version joins the referee's pool as a local entrant: its command (the
manifest's, its interpreter resolved by :meth:`harness.hosting.bundle.Manifest.argv`)
runs in a box, in the version's folder (its build folder, or its unpacked files when it
has no build), with as many seat instances as its concurrency. Its processes start when
a game needs them, like a house bot's. When a newer version is submitted, the older
one's idle processes are stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from harness.errors import HarnessError, SandboxUnavailable
from harness.hosting.build import BUILD_LIMITS, BuildPolicy, bot_command, build, run_folder
from harness.ladder.registry import Registry
from harness.ladder.uploads import BUILD_FAILED, BUILDING, READY, Hosted, Uploads
from harness.referee.pool import Entrant
from harness.sandbox import check_available

if TYPE_CHECKING:
    from harness.referee.arena import Arena
    from harness.rules.config import RulesConfig

__all__ = ["BUILD_LIMITS", "BuildPolicy", "Hosting"]

log = logging.getLogger("euchre.ladder")


class Hosting:
    """The hosted bots of one running ladder."""

    def __init__(self, uploads: Uploads, registry: Registry, rules: RulesConfig,
                 policy: BuildPolicy | None = None, *,
                 on_ready: Callable[[], None] = lambda: None) -> None:
        self.uploads = uploads
        self.on_ready = on_ready
        self.registry = registry
        self.rules = rules
        self.policy = policy or BuildPolicy()
        self.arena: Arena | None = None
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._builder: asyncio.Task[None] | None = None
        self._seated: set[str] = set()
        self._stopping: set[asyncio.Task[None]] = set()
        self.unavailable = ""  # why there is no sandbox here ("" when there is one)

    async def start(self, arena: Arena) -> None:
        """Seat the ready versions and queue the builds a stopped ladder left."""
        self.arena = arena
        try:
            check_available()
        except SandboxUnavailable as e:
            self.unavailable = str(e)
            log.warning("hosted bots will not play: %s", e)
        self._builder = asyncio.ensure_future(self._build_loop())
        for hosted in self.uploads.all():
            if hosted.state == BUILDING:
                self._queue.put_nowait(hosted.name)
            elif hosted.state == READY:
                self._seat(hosted)

    async def close(self) -> None:
        if self._builder is not None:
            self._builder.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._builder
            self._builder = None
        self.arena = None

    def submitted(self, name: str) -> str:
        """A version was just submitted: queue its build or seat it; stop the idle
        processes of the versions it replaces. Returns its build state."""
        hosted = self.uploads.get(name)
        if hosted is None:
            return ""
        for older in self.registry.lineage(name)[:-1]:
            self._stop_idle(older.name)
        if hosted.state == BUILDING:
            self._queue.put_nowait(name)
        elif self.arena is not None:
            self._seat(hosted)
        return hosted.state

    # ------------------------------------------------------------------ builds

    async def _build_loop(self) -> None:
        while True:
            name = await self._queue.get()
            hosted = self.uploads.get(name)
            if hosted is None or hosted.state != BUILDING:
                continue
            try:
                state, detail = await self._build(hosted)
            except (OSError, HarnessError) as e:
                state, detail = BUILD_FAILED, f"the build could not run: {e}"
            self.uploads.set_state(name, state, detail)
            log.info("%s: %s%s", name, state, f" ({detail})" if detail else "")
            if state == READY and self.arena is not None:
                self._seat(self.uploads.get(name) or hosted)
                self.on_ready()

    async def _build(self, hosted: Hosted) -> tuple[str, str]:
        """Build ``hosted`` in a box; its new state and the reason for a failure."""
        if self.unavailable:
            return BUILDING, f"waiting for a sandbox: {self.unavailable}"
        return await build(self.uploads, hosted, self.policy)

    # ------------------------------------------------------------------ seats

    def folder(self, hosted: Hosted) -> Path:
        """Where ``hosted`` runs (see :func:`harness.hosting.build.run_folder`)."""
        return run_folder(self.uploads, hosted)

    def _seat(self, hosted: Hosted) -> None:
        arena = self.arena
        if arena is None or hosted.name in arena.pool.entrants or self.unavailable:
            return
        try:
            entrant = self.registry.get(hosted.name)
        except HarnessError:
            return
        command = bot_command(self.uploads, hosted, self.policy.bot_limits)
        arena.add(Entrant(hosted.name, command), entrant.concurrency, self.rules)
        self._seated.add(hosted.name)

    def _stop_idle(self, name: str) -> None:
        arena = self.arena
        if arena is None or name not in self._seated:
            return
        for inst in arena.pool.instances(name):
            if not inst.busy and inst.process is not None:
                task = asyncio.ensure_future(inst.process.stop())
                self._stopping.add(task)
                task.add_done_callback(self._stopping.discard)

