"""Hosted bots on a running ladder: build each submitted version once, in a box, then
seat it like a house bot whose command runs in a box.

A version whose bot.toml has a ``build`` command starts as ``building``. Builds run one
at a time: the version's files are copied to a new folder of ``uploads/tmp/``, the build
runs there in a box (no network, its time and memory capped; see
:func:`harness.sandbox.run_build`) with its output in ``build.log``, and the folder is
then moved to ``uploads/builds/<version>/`` whatever the result, so the log stays
readable (``ctl build-log``). A build that fails (a non-zero exit, its time or memory
cap, a native command it did not make) marks the version ``build failed`` with the
reason: it is never seated, so it never plays and never forfeits. A ladder killed
mid-build starts that build again when it comes back.

A ``ready`` version joins the referee's pool as a local entrant: its command (the
manifest's, its interpreter resolved by :meth:`harness.ladder.bundle.Manifest.argv`)
runs in a box, in the version's folder (its build folder, or its unpacked files when it
has no build), with as many seat instances as its concurrency. Its processes start when
a game needs them, like a house bot's. When a newer version is submitted, the older
one's idle processes are stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from harness.errors import HarnessError, SandboxUnavailable
from harness.ladder.registry import Registry
from harness.ladder.uploads import BUILD_FAILED, BUILDING, READY, Hosted, Uploads
from harness.referee.botlog import CappedLog
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.sandbox import BoxLimits, check_available, run_build

if TYPE_CHECKING:
    from harness.referee.arena import Arena
    from harness.rules.config import RulesConfig

__all__ = ["BUILD_LIMITS", "BuildPolicy", "Hosting"]

log = logging.getLogger("euchre.ladder")


BUILD_LIMITS = BoxLimits(memory_mib=2048, pids=256, cpus=1.0, tmp_mib=512)
"""A build's box: room for a compiler (2 GiB of memory, 256 processes, 512 MiB of
``/tmp``), one core's worth of CPU, so that the games in play keep the rest."""


@dataclass(frozen=True, slots=True)
class BuildPolicy:
    """How hosted bots are built and run: the build's wall-clock cap, and the box of the
    build and of each bot process (the sandbox's defaults: equal for every hosted bot)."""

    build_seconds: float = 600.0
    build_limits: BoxLimits = BUILD_LIMITS
    bot_limits: BoxLimits = field(default_factory=BoxLimits)


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
        final = self.uploads.build_folder(hosted.name)
        folder = self.uploads.tmp / f"build-{secrets.token_hex(8)}"
        files = self.uploads.files(hosted)
        try:
            folder.mkdir(parents=True)
            outcome = await run_build(files, hosted.manifest.build_argv(),
                                      self.policy.build_limits,
                                      CappedLog(folder / "build.log"),
                                      self.policy.build_seconds,
                                      output=folder / "out", env=hosted.manifest.env())
            state, detail = (READY, "") if outcome.ok else (BUILD_FAILED, outcome.detail)
            if state == READY:
                run = folder / "run"
                await asyncio.to_thread(_overlay, files, folder / "out", run)
                if hosted.manifest.runtime == "native":
                    exe = run / hosted.manifest.command[0]
                    if not exe.is_file() or not os.access(exe, os.X_OK):
                        state, detail = BUILD_FAILED, (f"the build made no executable "
                                                       f"{hosted.manifest.command[0]!r}")
            if final.exists():
                await asyncio.to_thread(shutil.rmtree, final)
            final.parent.mkdir(parents=True, exist_ok=True)
            os.replace(folder, final)
            return state, detail
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    # ------------------------------------------------------------------ seats

    def folder(self, hosted: Hosted) -> Path:
        """Where ``hosted`` runs: its files with its build's output over them, or its
        unpacked files when it has no build."""
        if hosted.manifest.build:
            return self.uploads.build_folder(hosted.name) / "run"
        return self.uploads.files(hosted)

    def _seat(self, hosted: Hosted) -> None:
        arena = self.arena
        if arena is None or hosted.name in arena.pool.entrants or self.unavailable:
            return
        try:
            entrant = self.registry.get(hosted.name)
        except HarnessError:
            return
        command = BotCommand(hosted.manifest.argv(), cwd=str(self.folder(hosted)),
                             env=hosted.manifest.env(), sandbox=self.policy.bot_limits)
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


def _overlay(files: Path, output: Path, run: Path) -> None:
    """``run``: a copy of ``files`` with ``output`` (a build's) copied over it."""
    shutil.copytree(files, run, symlinks=True)
    if output.is_dir():
        shutil.copytree(output, run, symlinks=True, dirs_exist_ok=True)
    run.chmod(0o755)
