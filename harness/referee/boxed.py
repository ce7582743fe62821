"""A local bot run in a box: :class:`BoxedBotProcess` is a
:class:`~harness.referee.process.BotProcess` whose process runs under
:class:`~harness.sandbox.box.Box`, dialling the referee's Unix socket.

Its files are its working directory (``cwd``), read-only at /bot; it gets only the
environment the box allows plus its ``env`` table and the ``EUCHRE_*`` variables. When
it is stopped it is asked to end (SIGTERM) and, after the grace period, every process of
its box is killed; so is anything it left behind when it exits. The box's CPU time is
its clock under ``clock = "cpu"``, and an out-of-memory kill is the detail of its crash.
Once it has said Hello, its box gets the CPU only in its turns (:meth:`Box.rest
<harness.sandbox.box.Box.rest>`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

from harness.referee.process import BotCommand, BotProcess
from harness.sandbox.box import BOX_ADDRESS, Box


class BoxedBotProcess(BotProcess):
    """One instance of a local bot in a box. ``socket_dir`` is the referee's
    (:meth:`~harness.referee.server.RefereeServer.box_socket_dir`)."""

    def __init__(self, name: str, instance: int, command: BotCommand, token: str,
                 log_dir: Path, socket_dir: Path) -> None:
        if command.sandbox is None:
            raise ValueError(f"{name}: not a boxed bot")
        super().__init__(name, instance, command, BOX_ADDRESS, token, log_dir)
        self.socket_dir = socket_dir
        self.box: Box | None = None

    async def _spawn(self, argv: list[str], env: dict[str, str]) -> asyncio.subprocess.Process:
        assert self.command.sandbox is not None
        if self.box is not None:  # a restart: the old box goes first
            await self.box.kill()
        files = Path(self.command.cwd or os.getcwd())
        self.box = Box(f"{self.name}-{self.instance}", files, self.command.sandbox,
                       self.socket_dir)
        return await self.box.start(argv, env)

    def crash_detail(self) -> str:
        box = self.box
        if box is None:
            return ""
        if box.oom_killed():
            return box.limits.memory_text()
        if box.pids_refused():
            return f"process limit {box.limits.pids} reached"
        return ""

    def cpu_ns(self) -> int | None:
        return self.box.cpu_ns() if self.box is not None else None

    def rest(self) -> None:
        if self.box is not None:
            self.box.rest()

    def turn(self, on: bool) -> None:
        if self.box is not None:
            self.box.turn(on)

    async def stop(self, grace: float = 1.0) -> None:
        box = self.box
        if box is not None:
            if self.alive:
                box.terminate()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wait(), grace)
            await box.kill()
        await super().stop(grace)
