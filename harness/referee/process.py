"""Local bot processes: start one per seat instance, capture its output, kill and reap it.

A local bot is started from its command line with three environment variables:

* ``EUCHRE_REFEREE_ADDRESS``: where to dial, ``host:port``;
* ``EUCHRE_BOT_TOKEN``: the one-time token to present in ``Hello.token``;
* ``EUCHRE_BOT_NAME``: the entrant name it plays under.

``EUCHRE_TLS_CA`` is set empty: a local bot dials plaintext on loopback, even when the
referee serves TLS to remote bots.

The same values replace ``{address}``, ``{token}`` and ``{name}`` in the command's
arguments, for bots that prefer flags. Each process runs in its own process group (so
partners cannot share memory and a bot's children die with it); its stdout and stderr go
through a pipe to ``<log_dir>/<name>-<instance>.log``, capped at ``BotCommand.log_limit``
bytes (10 MiB by default) keeping the start and the end (:mod:`harness.referee.botlog`).
Optional limits: CPU seconds and address-space megabytes (through ``prlimit``). On
Linux, a bot is killed by the kernel if the referee dies (``setpriv --pdeathsig``), so
none outlives it even when the referee is SIGKILLed.

A command with ``sandbox`` limits runs in a box instead
(:class:`harness.referee.boxed.BoxedBotProcess`): only the ``EUCHRE_*`` variables and its
``env`` reach it, and the box's limits replace ``cpu_seconds`` and ``memory_mb``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import shlex
import shutil
import signal
import sys
from collections.abc import Mapping
from pathlib import Path

from harness import child_env
from harness.errors import BotStartupError, HarnessError
from harness.referee.botlog import DEFAULT_LOG_LIMIT, START_MARK, CappedLog
from harness.sandbox.box import BoxLimits

_READ_CHUNK = 65536


@dataclasses.dataclass(frozen=True, slots=True)
class BotCommand:
    """How to run one local bot."""

    command: tuple[str, ...]
    cwd: str | None = None
    env: Mapping[str, str] = dataclasses.field(default_factory=dict)
    cpu_seconds: int | None = None
    memory_mb: int | None = None
    log_limit: int = DEFAULT_LOG_LIMIT  # bytes kept of its output (start and end)
    sandbox: BoxLimits | None = None  # run it in a box (harness.sandbox) with these limits


class BotProcess:
    """One running instance of a local bot."""

    def __init__(self, name: str, instance: int, command: BotCommand, address: str,
                 token: str, log_dir: Path) -> None:
        self.name = name
        self.instance = instance
        self.command = command
        self.address = address
        self.token = token
        self.log_path = log_dir / f"{_safe(name)}-{instance}.log"
        self._proc: asyncio.subprocess.Process | None = None
        self._log: CappedLog | None = None
        self._pump: asyncio.Task[None] | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.returncode is None

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode if self._proc else None

    async def start(self) -> None:
        subst = {"address": self.address, "token": self.token, "name": self.name}
        argv = [_substitute(a, subst) for a in self.command.command]
        env = {**self.command.env,
               "EUCHRE_REFEREE_ADDRESS": self.address, "EUCHRE_BOT_TOKEN": self.token,
               "EUCHRE_BOT_NAME": self.name, "EUCHRE_TLS_CA": "", "PYTHONUNBUFFERED": "1"}
        try:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log = CappedLog(self.log_path, self.command.log_limit)
        except OSError as e:
            why = f"cannot write its log {self.log_path}: {e.strerror or e}"
            raise BotStartupError(f"{self.name}: {why}", reason=why) from e
        # The log shows the command with {token} unexpanded: a secret is never logged.
        shown = [_substitute(a, {**subst, "token": "{token}"}) for a in self.command.command]
        self._log.write(f"{START_MARK}{shlex.join(shown)}\n".encode())
        try:
            self._proc = await self._spawn(argv, env)
        except (OSError, HarnessError) as e:
            self._log.write(f"--- cannot start: {e}\n".encode())
            self._close_log()
            why = f"cannot start {shown[0]!r}: {e}"
            raise BotStartupError(f"{self.name}: {why}", reason=why) from e
        assert self._proc.stdout is not None
        self._pump = asyncio.ensure_future(_copy(self._proc.stdout, self._log))

    async def _spawn(self, argv: list[str], env: dict[str, str]) -> asyncio.subprocess.Process:
        """Start the process (output on its stdout pipe): here with the referee's
        environment (less its secrets: :func:`harness.child_env`) plus ``env``; a boxed
        bot overrides this."""
        return await asyncio.create_subprocess_exec(
            *_wrapped(argv, self.command.cpu_seconds, self.command.memory_mb),
            cwd=self.command.cwd, env={**child_env(), **env}, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )

    def crash_detail(self) -> str:
        """Why the process ended, when a limit ended it ("" when nothing is known)."""
        return ""

    def cpu_ns(self) -> int | None:
        """CPU time used so far, in nanoseconds, where it is measured (a boxed bot)."""
        return None

    def rest(self) -> None:
        """The bot said Hello: a boxed bot gets the CPU only in its turns from now on."""

    def turn(self, on: bool) -> None:
        """A decision was asked of the bot (``on``) or answered: see :meth:`rest`."""

    async def wait(self) -> int:
        assert self._proc is not None
        return await self._proc.wait()

    async def stop(self, grace: float = 1.0) -> None:
        """Terminate the whole process group, kill it after ``grace`` seconds, reap."""
        proc = self._proc
        if proc is not None:
            if proc.returncode is None:
                _signal_group(proc.pid, signal.SIGTERM)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(proc.wait(), grace)
            # Kill the group even if the leader exited: children may linger.
            _signal_group(proc.pid, signal.SIGKILL)
            if proc.returncode is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(proc.wait(), 5.0)
        if self._pump is not None:  # the group is dead: the pipe ends soon
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._pump, 5.0)
            self._pump = None
        self._close_log()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None


async def _copy(stream: asyncio.StreamReader, log: CappedLog) -> None:
    """Copy a bot's output to its log until the pipe closes."""
    while chunk := await stream.read(_READ_CHUNK):
        # A log that cannot be written (a full disk) loses the output, but the pipe is
        # still drained: a bot must never block on its own output.
        with contextlib.suppress(OSError):
            log.write(chunk)


def _wrapped(argv: list[str], cpu: int | None, mem: int | None) -> list[str]:
    """The command line to exec. Where util-linux is installed, ``setpriv --pdeathsig``
    has the kernel kill the bot if the referee dies (even by SIGKILL), and ``prlimit``
    applies the CPU and memory limits. Both are exec wrappers, so the referee never runs
    Python code between fork and exec (which is unsafe in a process using gRPC)."""
    out = list(argv)
    if cpu or mem:
        prlimit = shutil.which("prlimit")
        if prlimit is None:
            raise BotStartupError("cpu_seconds / memory_mb need the prlimit command "
                                  "(util-linux)")
        limits = ([f"--cpu={cpu}"] if cpu else []) + ([f"--as={mem << 20}"] if mem else [])
        out = [prlimit, *limits, "--", *out]
    setpriv = shutil.which("setpriv")
    if setpriv is not None and sys.platform.startswith("linux"):
        out = [setpriv, "--pdeathsig", "KILL", "--", *out]
    return out


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _substitute(arg: str, values: Mapping[str, str]) -> str:
    for k, v in values.items():
        arg = arg.replace("{" + k + "}", v)
    return arg


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
