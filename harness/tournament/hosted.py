"""Hosted bots on ``serve``: bundles the operator uploads
(``OperatorService.SubmitHostedBot``, ``euchre-harness ctl submit``), built once in a box,
that a tournament's ``[[bot]]`` names with ``hosted = "NAME@N"`` and plays in a box.

Each submission of NAME is the next version, ``NAME@1``, ``NAME@2``, ... Its bundle is
checked and kept as :mod:`harness.hosting.files` says, under ``<output>/.uploads/``
(a folder no tournament id can name), and its record, one JSON file per version, in
``.uploads/versions/``, written in one step after the bundle is in place. A version with
a ``build`` is ``building`` until its build (one at a time,
:func:`harness.hosting.build.build`) makes it ``ready`` or ``build failed``; a build
that a stopped referee left is run again when the version is next asked for. A
tournament that names a version that is not ready is refused when it starts.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import re
from collections.abc import AsyncIterator
from pathlib import Path

import grpc

from harness.errors import ConfigError, HarnessError
from harness.hosting.build import BuildPolicy, build, run_folder
from harness.hosting.bundle import Manifest
from harness.hosting.calls import Context, OneAtATime, abort, upload_format
from harness.hosting.files import (
    BUILD_FAILED,
    BUILDING,
    DEFAULT_DISK_RESERVE,
    DEFAULT_MAX_BYTES,
    READY,
    BundleFiles,
    Hosted,
    Stored,
    receive_bundle,
)
from harness.protocol import operator as op
from harness.sandbox import check_available
from harness.tournament.config import TournamentConfig

__all__ = ["UPLOADS_FOLDER", "ServeHosting"]

log = logging.getLogger("euchre.tournament")

UPLOADS_FOLDER = ".uploads"
_BASE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_VERSION = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]{0,63})@([1-9][0-9]{0,8})")


class ServeHosting:
    """The hosted bots of one ``serve`` (its output folder)."""

    def __init__(self, output_root: Path, policy: BuildPolicy | None = None, *,
                 max_bytes: int = DEFAULT_MAX_BYTES,
                 disk_reserve: int = DEFAULT_DISK_RESERVE) -> None:
        self.files = BundleFiles(output_root / UPLOADS_FOLDER, max_bytes=max_bytes,
                                 disk_reserve=disk_reserve)
        self.versions = self.files.folder / "versions"
        self.policy = policy or BuildPolicy()
        self._uploads = OneAtATime()
        self._builds: dict[str, asyncio.Task[None]] = {}
        self._build_lock: asyncio.Lock | None = None
        self.files.sweep_except(h.sha256 for h in self.all())

    # ------------------------------------------------------------------ records

    def _record(self, name: str) -> Path:
        return self.versions / f"{name}.json"

    def get(self, name: str) -> Hosted | None:
        """The version ``name`` (``NAME@N``), or None."""
        if not _VERSION.fullmatch(name):
            return None
        try:
            data = json.loads(self._record(name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        manifest = Manifest(data["runtime"], tuple(data["command"]), tuple(data["build"]))
        return Hosted(name=name, sha256=data["sha256"], root=data["root"], manifest=manifest,
                      state=data["state"], detail=data["detail"])

    def all(self) -> list[Hosted]:
        if not self.versions.is_dir():
            return []
        found = (self.get(p.stem) for p in sorted(self.versions.glob("*.json")))
        return [h for h in found if h is not None]

    def _write(self, hosted: Hosted) -> None:
        """Record ``hosted`` in one step (a killed referee leaves the old record or the
        new one)."""
        self.versions.mkdir(parents=True, exist_ok=True)
        data = {"sha256": hosted.sha256, "root": hosted.root,
                "runtime": hosted.manifest.runtime, "command": hosted.manifest.command,
                "build": hosted.manifest.build, "state": hosted.state,
                "detail": hosted.detail}
        part = self.versions / f".{hosted.name}.part"
        with part.open("w", encoding="utf-8") as f:
            json.dump(data, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(part, self._record(hosted.name))

    def _next_version(self, base: str) -> str:
        taken = [int(m.group(2)) for p in self.versions.glob(f"{base}@*.json")
                 if (m := _VERSION.fullmatch(p.stem)) and m.group(1) == base] \
            if self.versions.is_dir() else []
        return f"{base}@{max(taken, default=0) + 1}"

    # ------------------------------------------------------------------ builds

    def _kick(self) -> None:
        """Start the builds of versions still ``building`` (after a submission, or left
        by a stopped referee)."""
        for hosted in self.all():
            if hosted.state == BUILDING and hosted.name not in self._builds:
                self._builds[hosted.name] = asyncio.ensure_future(self._build(hosted))

    async def _build(self, hosted: Hosted) -> None:
        if self._build_lock is None:
            self._build_lock = asyncio.Lock()
        async with self._build_lock:
            try:
                state, detail = await build(self.files, hosted, self.policy)
            except (OSError, HarnessError) as e:
                state, detail = BUILD_FAILED, f"the build could not run: {e}"
        self._write(dataclasses.replace(hosted, state=state, detail=detail))
        log.info("%s: %s%s", hosted.name, state, f" ({detail})" if detail else "")

    # ------------------------------------------------------------------ tournaments

    def resolve(self, config: TournamentConfig) -> TournamentConfig:
        """``config`` with each ``hosted`` bot turned into a boxed
        local bot running its version's command; ConfigError when a version is unknown,
        still building or failed its build."""
        self._kick()
        bots = []
        for i, bot in enumerate(config.bots):
            if bot.hosted is None:
                bots.append(bot)
                continue
            hosted = self.get(bot.hosted)
            key = f"bot[{i}].hosted"
            if hosted is None:
                raise ConfigError(key, f"{bot.name}: this referee has no hosted bot "
                                       f"{bot.hosted!r} (submit one with euchre-harness "
                                       f"ctl submit; versions are NAME@N)")
            if hosted.state == BUILD_FAILED:
                raise ConfigError(key, f"{bot.name}: {bot.hosted} did not build: "
                                       f"{hosted.detail}; see euchre-harness ctl build-log "
                                       f"{bot.hosted}, and submit a fixed version")
            if hosted.state != READY:
                raise ConfigError(key, f"{bot.name}: {bot.hosted} is still building; start "
                                       f"the tournament once ctl build-log shows it ready")
            # Off the referee's CPU unless the tournament pins it itself, as on a ladder
            # (BuildPolicy.bot_limits): a box that keeps its quota busy on every core
            # slows the games beside it several times over.
            cpuset = bot.box_cpuset if bot.box_cpuset is not None else \
                self.policy.bot_limits.cpuset
            bots.append(dataclasses.replace(
                bot, hosted=None, command=hosted.manifest.argv(),
                cwd=str(run_folder(self.files, hosted)),
                env={**hosted.manifest.env(), **bot.env}, sandbox=True, box_cpuset=cpuset))
        return dataclasses.replace(config, bots=tuple(bots))

    # ------------------------------------------------------------------ the calls

    async def submit(self, requests: AsyncIterator[op.SubmitHostedBotRequest],
                     context: Context) -> op.SubmitHostedBotResponse:
        first = await anext(aiter(requests), None)
        if first is None or first.WhichOneof("part") != "header":
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT,
                        "the first message of SubmitHostedBot must be its header")
        header = first.header
        base = header.name
        if not _BASE.fullmatch(base):
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT,
                        f"a hosted bot's name is 1-64 letters, digits, '.', '_' or '-' "
                        f"(no @N: each submission is the next version); got {base!r}")
        fmt = await upload_format(context, header)
        try:
            check_available()
        except HarnessError as e:
            await abort(context, grpc.StatusCode.FAILED_PRECONDITION,
                        f"this referee cannot host bots: {e}")
        async with self._uploads.receiving(context, base):
            stored = await receive_bundle(self.files, fmt, header.size, header.sha256,
                                          requests)
            name = self._register(base, stored)
        log.info("%s submitted (sha256 %s, %s)", name, stored.sha256,
                 stored.manifest.runtime)
        self._kick()
        state = BUILDING if stored.manifest.build else READY
        return op.SubmitHostedBotResponse(name=name, build_state=state, sha256=stored.sha256)

    def _register(self, base: str, stored: Stored) -> str:
        name = self._next_version(base)
        self._write(Hosted(name=name, sha256=stored.sha256, root=stored.root,
                           manifest=stored.manifest,
                           state=BUILDING if stored.manifest.build else READY, detail=""))
        return name

    async def build_log(self, request: op.GetHostedBuildLogRequest,
                        context: Context) -> op.GetHostedBuildLogResponse:
        self._kick()
        hosted = self.get(request.name)
        if hosted is None:
            await abort(context, grpc.StatusCode.NOT_FOUND,
                        f"no hosted bot named {request.name!r} on this referee (versions "
                        f"are NAME@N)")
        text = await asyncio.to_thread(self.files.read_log, request.name)
        return op.GetHostedBuildLogResponse(build_state=hosted.state, detail=hosted.detail,
                                            log=text)
