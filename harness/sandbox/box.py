"""A box: one process tree under bubblewrap, in its own cgroup, with measured resources.

::

    box = Box("alice-0", files=Path("uploads/alice"), limits=BoxLimits(),
              socket_dir=server_socket_dir)
    proc = await box.start(["/bot/run"], {"EUCHRE_BOT_TOKEN": token}, CappedLog(log_path))
    ...
    box.cpu_ns(); box.oom_killed()
    box.rest(); box.turn(True); ...; box.turn(False)   # a bot's box: CPU only in its turn
    await box.kill()   # every process of the box, then its cgroup

What the box allows is said in :mod:`harness.sandbox.mounts` (files, namespaces, user),
:mod:`harness.sandbox.seccomp` (system calls) and :mod:`harness.sandbox.cgroups` (memory,
processes, CPU); docs/hosting.md puts them together with the threat model.
:func:`check_available` refuses (one line) on a machine without bubblewrap, setpriv, a
seccomp filter for its architecture or the cgroup controllers: nothing meant for a box
ever runs outside one.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import os
import shutil
import signal
import stat
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

import harness
from harness.errors import SandboxError, SandboxUnavailable
from harness.sandbox import cgroups, mounts, scratch, seccomp


class LogSink(Protocol):
    """Where a box's output goes: a bot's capped log file
    (:class:`harness.referee.botlog.CappedLog`) or a build's. ``close`` may be called
    twice."""

    def write(self, data: bytes) -> None: ...

    def close(self) -> None: ...


SOCKET_NAME = "referee.sock"
BOX_ADDRESS = f"unix:{mounts.SOCKET_DIR}/{SOCKET_NAME}"
"""The referee's address as a boxed bot dials it."""

# Moves the shell into the box's cgroups (its PID is $$), then execs the box: no Python
# code runs between fork and exec in the referee (unsafe with gRPC's threads), and the
# box's first process is already counted and limited. Exit code 125: could not join.
_JOIN = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'
JOIN_FAILED = 125


@dataclasses.dataclass(frozen=True)
class BoxLimits:
    """What one box may use. ``cpus`` is a quota in cores (1.0: one core's worth of CPU
    time per period, wherever it runs); ``cpuset`` pins the box to those CPUs (give two
    bots different ones and they never share a core); ``wall_seconds`` bounds a build."""

    memory_mib: int = 512
    pids: int = 64
    cpus: float = 1.0
    cpuset: tuple[int, ...] | None = None
    tmp_mib: int = 64
    wall_seconds: float = 600.0
    out_mib: int = 1024  # a build's /out holds at most this (harness.sandbox.scratch)

    def __post_init__(self) -> None:
        for name, low in (("memory_mib", 16), ("pids", 4), ("tmp_mib", 1), ("out_mib", 1)):
            if getattr(self, name) < low:
                raise ValueError(f"{name} must be at least {low}; got {getattr(self, name)}")
        if not 0.01 <= self.cpus <= 1024:
            raise ValueError(f"cpus must be between 0.01 and 1024; got {self.cpus}")
        if self.cpuset is not None and (not self.cpuset or min(self.cpuset) < 0):
            raise ValueError(f"cpuset must list CPU numbers; got {self.cpuset}")
        if self.wall_seconds <= 0:
            raise ValueError("wall_seconds must be positive")

    def memory_text(self) -> str:
        """``memory limit 512 MiB``: the detail of a fault for running out of memory."""
        return f"memory limit {self.memory_mib} MiB"


def spare_cpus() -> tuple[int, ...] | None:
    """The CPUs this process may use except the first, where the referee's own work goes
    (None with fewer than two). Hosted bots' boxes and builds are pinned to them: a box
    that keeps its quota busy on every core slows the games beside it several times over
    (bench/sandbox.py, part 4), one kept off the referee's core does not."""
    cpus = sorted(os.sched_getaffinity(0))
    return tuple(cpus[1:]) if len(cpus) >= 2 else None


def _tool(name: str, fallback: str) -> str | None:
    found = shutil.which(name)
    return found or (fallback if os.access(fallback, os.X_OK) else None)


@functools.cache
def _machine() -> tuple[str, str, cgroups.Hierarchy]:
    bwrap = _tool("bwrap", "/usr/bin/bwrap")
    if bwrap is None:
        raise SandboxUnavailable("boxed bots need bubblewrap (the bwrap command; Debian "
                                 "package bubblewrap), which is not installed")
    setpriv = _tool("setpriv", "/usr/bin/setpriv")
    if setpriv is None:
        raise SandboxUnavailable("boxed bots need setpriv (Debian package util-linux), "
                                 "which is not installed")
    if not sys.platform.startswith("linux"):
        raise SandboxUnavailable("boxed bots need Linux (namespaces and cgroups)")
    seccomp.program()  # SandboxUnavailable on an architecture without a filter
    return bwrap, setpriv, cgroups.hierarchy()


def check_available() -> None:
    """Raise SandboxUnavailable, with one line saying what is missing, unless boxes can
    run here: bubblewrap, setpriv, a seccomp filter for this architecture (x86_64,
    aarch64) and writable cgroup controllers (memory, pids, cpu, cpuacct on v1,
    cpuset)."""
    _machine()


def default_runtimes() -> tuple[Path, ...]:
    """What a boxed Python bot needs besides the system: this interpreter's environment
    (a virtual environment lives outside ``/usr``)."""
    return tuple(Path(p) for p in {sys.prefix, sys.base_prefix}
                 if not p.startswith("/usr"))


def sdk_package() -> Path:
    """The directory of the ``harness`` package, bound read-only into every box so that
    Python bots can ``import harness.sdk``."""
    return Path(harness.__file__).resolve().parent


def _check_readable(path: Path, what: str) -> None:
    try:
        mode = path.stat().st_mode
    except OSError as e:
        raise SandboxError(f"{what} {path}: {e.strerror or e}") from None
    if not stat.S_ISDIR(mode) or mode & 0o005 != 0o005:
        raise SandboxError(f"{what} {path} must be a directory that every user may read "
                           f"and enter (a box runs as nobody); its mode is "
                           f"{stat.filemode(mode)}")


class Box:
    """One box. ``files`` (read-only at /bot, the working directory) must be readable by
    every user; ``writable`` (a build's output, read-write at /out) is handed to the
    box's user; ``outputs`` is a finished build's output (read-only at /out);
    ``socket_dir`` (the referee's, read-only at /run/euchre) holds the socket the bot
    dials as :data:`BOX_ADDRESS`."""

    def __init__(self, name: str, files: Path, limits: BoxLimits,
                 socket_dir: Path | None, writable: Path | None = None, *,
                 outputs: Path | None = None, runtimes: Sequence[Path] | None = None) -> None:
        self.name = name
        self.files = Path(files)
        self.limits = limits
        self.socket_dir = socket_dir
        self.writable = writable
        self.outputs = outputs
        self.runtimes = tuple(default_runtimes() if runtimes is None else runtimes)
        self.group: cgroups.Group | None = None
        self.process: asyncio.subprocess.Process | None = None
        self._pump: asyncio.Task[None] | None = None
        self._oom_kills = 0
        self._cpu_ns = 0
        self._turns = 0  # decisions asked of the box's bot and not yet answered
        self._resting = False

    async def __aenter__(self) -> Box:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.kill()

    def command(self, argv: Sequence[str], env_fd: int, seccomp_fd: int) -> list[str]:
        """The full command line that runs ``argv`` in this box (after :meth:`prepare`),
        with the environment that the open file descriptor ``env_fd`` holds
        (:func:`~harness.sandbox.mounts.env_args`) and the seccomp filter that
        ``seccomp_fd`` holds (:func:`~harness.sandbox.seccomp.program`)."""
        bwrap, setpriv, _ = _machine()
        assert self.group is not None, "prepare() first"
        inner = mounts.bwrap_args(files=self.files, tmp_mib=self.limits.tmp_mib,
                                  env_fd=env_fd, seccomp_fd=seccomp_fd,
                                  socket_dir=self.socket_dir,
                                  writable=self.writable, outputs=self.outputs,
                                  runtimes=self.runtimes, sdk=sdk_package(), bwrap=bwrap,
                                  setpriv=setpriv)
        join = [str(p) for p in self.group.procs_files()]
        return ["/bin/sh", "-c", _JOIN, "box", *join, "--", *inner, *argv]

    def prepare(self) -> None:
        """Check the files and make the cgroup (SandboxError / SandboxUnavailable)."""
        where = _machine()[2]
        _check_readable(self.files, "a box's files")
        if self.outputs is not None:
            _check_readable(self.outputs, "a build's output")
        if self.writable is not None:
            self.writable.mkdir(parents=True, exist_ok=True)
            os.chown(self.writable, mounts.NOBODY, mounts.NOBODY)
        lim = self.limits
        group = cgroups.Group(where)
        group.create(memory_bytes=lim.memory_mib << 20, pids=lim.pids, cpus=lim.cpus,
                     cpuset=lim.cpuset)
        self.group = group

    async def start(self, argv: Sequence[str], env: Mapping[str, str],
                    log: LogSink | None = None) -> asyncio.subprocess.Process:
        """Run ``argv`` in the box with ``env`` added to the box's fixed environment.
        Its output (stdout and stderr) goes to ``log`` (closed when the output ends) or,
        without one, to the process's ``stdout`` pipe for the caller."""
        if self.process is not None:
            raise SandboxError(f"box {self.name} already started")
        self.prepare()
        # The environment (the bot's token in it) goes to bubblewrap through a file of
        # its own, never on a command line that every user of the machine may read; the
        # seccomp filter through another. Bubblewrap reads and closes both: the box gets
        # neither.
        with contextlib.ExitStack() as files:
            try:
                env_fd = _memfd("box-environment", mounts.env_args(env), files)
                seccomp_fd = _memfd("box-seccomp", seccomp.program(), files)
                self.process = await asyncio.create_subprocess_exec(
                    *self.command(argv, env_fd, seccomp_fd), env={"PATH": "/usr/bin:/bin"},
                    stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.STDOUT, start_new_session=True,
                    pass_fds=(env_fd, seccomp_fd))
            except OSError as e:
                await self.kill()
                raise SandboxError(f"box {self.name}: cannot start: {e}") from e
        if log is not None:
            assert self.process.stdout is not None
            self._pump = asyncio.ensure_future(_copy(self.process.stdout, log))
        return self.process

    def rest(self) -> None:
        """From now on, weigh the box at the lowest CPU weight whenever its bot is not in
        a turn (:meth:`turn`): what a bot computes between its decisions (pondering
        while the others play, or spinning on purpose) then runs only on CPU time that
        no box in its turn wants, and slows no other bot's decision on the CPUs the
        boxes share. A bot's box starts at the ordinary weight, for its start-up; the
        referee calls this once the bot has said Hello."""
        self._resting = True
        self._weigh()

    def turn(self, on: bool) -> None:
        """A decision was asked of the box's bot (``on``) or answered (not ``on``). Its
        box has the ordinary CPU weight while any decision of its is open (a bot may play
        several games at once)."""
        self._turns = self._turns + 1 if on else max(0, self._turns - 1)
        if self._resting and self._turns == (1 if on else 0):  # it starts or ends resting
            self._weigh()

    def _weigh(self) -> None:
        if self.group is not None:
            with contextlib.suppress(OSError):  # the group went with a kill
                self.group.set_resting(self._turns == 0)

    def cpu_ns(self) -> int:
        """CPU time used so far by every process of the box, in nanoseconds (after
        :meth:`kill`, the total)."""
        if self.group is not None:
            self._cpu_ns = max(self._cpu_ns, self.group.cpu_ns())
        return self._cpu_ns

    def oom_killed(self) -> bool:
        """Whether the kernel killed a process of the box for its memory limit."""
        if self.group is not None:
            self._oom_kills = max(self._oom_kills, self.group.oom_kills())
        return self._oom_kills > 0

    def pids_refused(self) -> int:
        """How many forks the process cap refused."""
        return self.group.pids_refused() if self.group is not None else 0

    def terminate(self) -> None:
        """Ask the box's processes to end (SIGTERM to each one the bot runs)."""
        if self.group is not None:
            self.group.signal_user(mounts.NOBODY, signal.SIGTERM)

    async def wait(self) -> int:
        assert self.process is not None
        return await self.process.wait()

    async def kill(self) -> None:
        """Kill every process of the box, reap the first, remove the cgroup. Safe to call
        again."""
        group = self.group
        if group is not None:
            self.oom_killed()
            self.cpu_ns()
            self.group = None
            await asyncio.to_thread(group.kill)
        proc = self.process
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), 5.0)
        if self._pump is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._pump, 5.0)
            self._pump = None
        if group is not None:
            await asyncio.to_thread(group.remove)


def _memfd(name: str, data: bytes, files: contextlib.ExitStack) -> int:
    """A file descriptor of a new in-memory file holding ``data``, at its start, closed
    when ``files`` closes."""
    fd = os.memfd_create(name, 0)
    files.callback(os.close, fd)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


async def _copy(stream: asyncio.StreamReader, log: LogSink) -> None:
    try:
        while chunk := await stream.read(65536):
            with contextlib.suppress(OSError):
                log.write(chunk)
    finally:
        log.close()


@dataclasses.dataclass(frozen=True)
class BuildOutcome:
    """How a build ended. ``ok``: it exited 0 within its time and memory."""

    ok: bool
    returncode: int | None
    detail: str
    wall_seconds: float
    cpu_seconds: float
    timed_out: bool = False
    oom: bool = False


async def run_build(files: Path, argv: Sequence[str], limits: BoxLimits, log: LogSink,
                    timeout: float | None = None, *, output: Path,
                    runtimes: Sequence[Path] | None = None,
                    env: Mapping[str, str] | None = None) -> BuildOutcome:
    """Run a build command in a box: ``files`` read-only at /bot (the working
    directory), a writable /out of at most ``limits.out_mib`` MiB (a tmpfs:
    :mod:`harness.sandbox.scratch`) whose contents replace ``output`` when the build
    succeeds (what the bot's run then gets read-only, through ``Box(...,
    outputs=output)``), no network, ``limits`` on memory, processes and CPU, and
    ``timeout`` seconds of wall time (default ``limits.wall_seconds``). Its output goes
    to ``log``, closed at the end. Raises SandboxUnavailable / SandboxError only when the
    box cannot be made; a failing build is an outcome."""
    wall = limits.wall_seconds if timeout is None else timeout
    capped = output.with_name(f"{output.name}.capped")
    box = Box(f"build-{files.name}", files, limits, None, writable=capped,
              runtimes=runtimes)
    start = time.monotonic()
    timed_out = full = over = False
    try:
        async with scratch.capped_folder(capped, limits.out_mib):
            async with box:
                proc = await box.start(argv, env or {}, log)
                try:
                    code: int | None = await asyncio.wait_for(proc.wait(), wall)
                except TimeoutError:
                    timed_out, code = True, None
                cpu = box.cpu_ns() / 1e9
                oom = box.oom_killed()
            full = scratch.is_full(capped)
            if code == 0 and not oom and not timed_out:
                try:
                    await scratch.keep(capped, output, limits.out_mib)
                except scratch.OverCap:
                    over = True
    finally:
        log.close()  # if the box could not start, nothing else closes it
    seconds = time.monotonic() - start
    if timed_out:
        detail = f"the build ran out of time ({wall:g} s)"
    elif oom:
        detail = f"the build ran out of memory ({limits.memory_text()})"
    elif code == JOIN_FAILED:
        detail = "the build's box could not be set up"
    elif over or (full and code != 0):
        detail = f"the build's output filled /out (at most {limits.out_mib} MiB)"
    elif code != 0:
        detail = f"the build failed (exit code {code})"
    else:
        detail = "built"
    ok = code == 0 and not oom and not timed_out and not over
    return BuildOutcome(ok, code, detail, seconds, cpu, timed_out, oom)
