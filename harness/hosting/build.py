"""Building a hosted bot version once, in a box, and where it then runs.

The version's files are copied to a new folder of the uploads' ``tmp/``; its manifest's
``build`` runs there in a box (no network, its time and memory capped; see
:func:`harness.sandbox.run_build`) with its output in ``build.log`` and what it makes in
``out/``, laid over a copy of the files in ``run/`` (hard links to ``out/``'s files:
the output takes the disk once). The folder is then moved to
``builds/<version>/`` whatever the result, so the log stays readable. A build that fails
(a non-zero exit, its time or memory cap, a native command it did not make) gives the
state ``build failed`` with the reason.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import UploadLimit
from harness.hosting.files import BUILD_FAILED, READY, BundleFiles, Hosted
from harness.referee.botlog import CappedLog
from harness.referee.process import BotCommand
from harness.sandbox import BoxLimits, run_build, spare_cpus
from harness.sandbox.scratch import merge_tree

__all__ = ["BUILD_LIMITS", "BuildPolicy", "bot_command", "build", "run_folder"]

BUILD_LIMITS = BoxLimits(memory_mib=2048, pids=256, cpus=1.0, tmp_mib=512, cpuset=spare_cpus())
"""A build's box: room for a compiler (2 GiB of memory, 256 processes, 512 MiB of
``/tmp``), one core's worth of CPU, off the referee's core (:func:`spare_cpus`), so that
the games in play keep the rest."""


@dataclass(frozen=True, slots=True)
class BuildPolicy:
    """How hosted bots are built and run: the build's wall-clock cap, and the box of the
    build and of each bot process (the sandbox's defaults: equal for every hosted bot)."""

    build_seconds: float = 600.0
    build_limits: BoxLimits = BUILD_LIMITS
    # Every hosted bot's box: the sandbox's defaults, off the referee's core.
    bot_limits: BoxLimits = field(default_factory=lambda: BoxLimits(cpuset=spare_cpus()))


async def build(files: BundleFiles, hosted: Hosted, policy: BuildPolicy) -> tuple[str, str]:
    """Build ``hosted`` in a box; its new state and the reason for a failure."""
    final = files.build_folder(hosted.name)
    folder = files.tmp / f"build-{secrets.token_hex(8)}"
    source = files.files(hosted)
    try:
        try:
            files.check_build_room(policy.build_limits.out_mib << 20)
        except UploadLimit as e:
            return BUILD_FAILED, str(e)
        folder.mkdir(parents=True)
        outcome = await run_build(source, hosted.manifest.build_argv(), policy.build_limits,
                                  CappedLog(folder / "build.log"), policy.build_seconds,
                                  output=folder / "out", env=hosted.manifest.env())
        state, detail = (READY, "") if outcome.ok else (BUILD_FAILED, outcome.detail)
        if state == READY:
            run = folder / "run"
            await asyncio.to_thread(_overlay, source, folder / "out", run)
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


def run_folder(files: BundleFiles, hosted: Hosted) -> Path:
    """Where ``hosted`` runs: its files with its build's output over them, or its
    unpacked files when it has no build."""
    if hosted.manifest.build:
        return files.build_folder(hosted.name) / "run"
    return files.files(hosted)


def bot_command(files: BundleFiles, hosted: Hosted, limits: BoxLimits) -> BotCommand:
    """How a ready version's processes start: its manifest's command, in its folder, in
    a box of ``limits``."""
    return BotCommand(hosted.manifest.argv(), cwd=str(run_folder(files, hosted)),
                      env=hosted.manifest.env(), sandbox=limits)


def _overlay(files: Path, output: Path, run: Path) -> None:
    """``run``: a copy of ``files`` with ``output`` (a build's, on the same disk) laid
    over it, as :func:`~harness.sandbox.scratch.merge_tree` lays trees: never through a
    link that either tree holds (a bundle's link to a name that the build's output then
    makes a link to a host path must not be written through), its files hard links to
    those of ``files`` and ``output`` (both kept: the bundle's files, and the bot's
    ``/out``), so that they take the disk once."""
    run.mkdir(mode=0o755)
    run.chmod(0o755)
    merge_tree(files, run, link=True)
    if output.is_dir() and not output.is_symlink():
        merge_tree(output, run, link=True)
