"""One control group per box: create it, set its limits, read its CPU time and OOM kills,
kill every process in it, remove it.

Both cgroup versions are handled; :func:`hierarchy` detects which one the machine has:

* **v2** (``/sys/fs/cgroup/cgroup.controllers`` exists): one tree. Boxes live under
  ``/sys/fs/cgroup/euchre-harness/`` (a group at the top, where the rule "no processes
  in a group whose controllers are delegated" does not bind the referee's own group),
  with the ``memory``, ``pids``, ``cpu`` and ``cpuset`` controllers enabled for them.
* **v1**: one tree per controller (``memory``, ``pids``, ``cpu``, ``cpuacct``,
  ``cpuset``), found in ``/proc/self/mountinfo``. Boxes live under the referee's own
  group of each tree, in ``euchre-harness/``, so a limit put on the referee itself still
  holds its boxes.

A box's limits: memory (swap included where the kernel accounts it: a boxed bot cannot
page out), process count, a CPU quota in cores (the CFS quota per 100 ms period) and an
optional cpuset. Its CPU time comes from ``cpuacct.usage`` (v1) or ``cpu.stat`` (v2) in
nanoseconds; its OOM kills from ``memory.oom_control`` (v1) or ``memory.events`` (v2).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import time
from collections.abc import Sequence
from pathlib import Path

from harness.errors import SandboxUnavailable

CGROUP_ROOT = Path("/sys/fs/cgroup")
GROUP_NAME = "euchre-harness"
V1_CONTROLLERS = ("memory", "pids", "cpu", "cpuacct", "cpuset")
V2_CONTROLLERS = ("memory", "pids", "cpu", "cpuset")
CFS_PERIOD_US = 100_000
# A resting box's CPU weight (the lowest each version takes) against the default of a
# box whose turn it is (v1 ``cpu.shares`` 1024, v2 ``cpu.weight`` 100): between its
# turns a box gets a CPU only when no sibling whose turn it is wants it.
RESTING_SHARES, RESTING_WEIGHT = 2, 1
TURN_SHARES, TURN_WEIGHT = 1024, 100


class Hierarchy:
    """Where boxes' groups are made: ``version`` 1 or 2, and the parent directory of the
    boxes for each controller (v2: the same directory for all)."""

    def __init__(self, version: int, parents: dict[str, Path]) -> None:
        self.version = version
        self.parents = parents

    def directories(self) -> list[Path]:
        """Each distinct parent directory once (v1 trees may be mounted together)."""
        return list(dict.fromkeys(self.parents.values()))


def _v1_mounts() -> dict[str, Path]:
    """Controller name -> mount point of its v1 tree."""
    mounts: dict[str, Path] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            fields, tail = left.split(), right.split()
            if len(tail) < 3 or tail[0] != "cgroup":
                continue
            for option in tail[2].split(","):
                if option in V1_CONTROLLERS:
                    mounts.setdefault(option, Path(fields[4]))
    return mounts


def _own_v1_groups() -> dict[str, str]:
    """Controller name -> the referee's own group path in that v1 tree."""
    own: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for name in controllers.split(","):
                own[name] = path
    return own


def hierarchy() -> Hierarchy:
    """Detect the cgroup version and where boxes go. Raises SandboxUnavailable (one line)
    when a controller is missing or the directory cannot be written."""
    if (CGROUP_ROOT / "cgroup.controllers").exists():
        return _v2_hierarchy()
    mounts = _v1_mounts()
    missing = [c for c in V1_CONTROLLERS if c not in mounts]
    if missing:
        raise SandboxUnavailable(f"boxed bots need the cgroup controllers "
                                 f"{', '.join(V1_CONTROLLERS)}; missing: {', '.join(missing)}")
    own = _own_v1_groups()
    parents = {c: mounts[c] / own.get(c, "/").lstrip("/") / GROUP_NAME
               for c in V1_CONTROLLERS}
    for controller, parent in parents.items():
        _make_parent(parent)
        if controller == "cpuset":
            _inherit_cpuset(parent)
    return _swept(Hierarchy(1, parents))


def _v2_hierarchy() -> Hierarchy:
    available = (CGROUP_ROOT / "cgroup.controllers").read_text().split()
    missing = [c for c in V2_CONTROLLERS if c not in available]
    if missing:
        raise SandboxUnavailable(f"boxed bots need the cgroup v2 controllers "
                                 f"{', '.join(V2_CONTROLLERS)}; missing: {', '.join(missing)}")
    parent = CGROUP_ROOT / GROUP_NAME
    enable = " ".join(f"+{c}" for c in V2_CONTROLLERS)
    _make_parent(parent)
    try:
        (CGROUP_ROOT / "cgroup.subtree_control").write_text(enable)
        (parent / "cgroup.subtree_control").write_text(enable)
    except OSError as e:
        raise SandboxUnavailable(f"cannot enable the cgroup controllers for boxes in "
                                 f"{parent}: {e.strerror or e}") from None
    return _swept(Hierarchy(2, dict.fromkeys(V2_CONTROLLERS, parent)))


def _swept(where: Hierarchy) -> Hierarchy:
    """Kill what is left of the boxes whose referee is gone, and remove their groups.
    A referee killed with SIGKILL takes its boxes with it (bubblewrap's
    ``--die-with-parent``) but cannot remove their groups; and should a process of a
    box outlive it all the same, the next referee to start kills it here."""
    dead: set[str] = set()
    for parent in where.directories():
        with contextlib.suppress(OSError):
            for child in parent.iterdir():
                owner = child.name.split("-")
                if len(owner) != 3 or owner[0] != "box" or not owner[1].isdigit():
                    continue
                try:
                    os.kill(int(owner[1]), 0)
                except ProcessLookupError:
                    dead.add(child.name)
                except PermissionError:
                    pass
    for name in sorted(dead):
        Group(where, name).remove()  # (another referee may have swept it first)
    return where


def _make_parent(parent: Path) -> None:
    try:
        parent.mkdir(exist_ok=True)
    except OSError as e:
        raise SandboxUnavailable(f"cannot create the cgroup {parent} for boxes "
                                 f"({e.strerror or e}); boxed bots need root or a "
                                 f"delegated cgroup") from None


def _inherit_cpuset(group: Path) -> None:
    """A new v1 cpuset group starts with no CPUs and no memory nodes: copy its parent's."""
    for name in ("cpuset.cpus", "cpuset.mems"):
        mine = group / name
        if not mine.read_text().strip():
            mine.write_text((group.parent / name).read_text().strip())


class Group:
    """The control group of one box."""

    def __init__(self, where: Hierarchy, name: str | None = None) -> None:
        self.where = where
        self.name = name or f"box-{os.getpid()}-{secrets.token_hex(6)}"
        self.paths = {c: parent / self.name for c, parent in where.parents.items()}
        self.memory_bytes = 0
        self._weight_fd: int | None = None  # the CPU weight's file, kept open: see rest

    @property
    def v2(self) -> bool:
        return self.where.version == 2

    def directories(self) -> list[Path]:
        return list(dict.fromkeys(self.paths.values()))

    def create(self, *, memory_bytes: int, pids: int, cpus: float,
               cpuset: Sequence[int] | None) -> None:
        """Make the group and set its limits (SandboxUnavailable if that fails)."""
        try:
            for d in self.directories():
                d.mkdir()
            self.memory_bytes = memory_bytes
            self._set_limits(memory_bytes, pids, cpus, cpuset)
        except OSError as e:
            self.remove()
            raise SandboxUnavailable(f"cannot set up the cgroup {self.name}: "
                                     f"{e.strerror or e}") from None
        self._reweigh()

    def _reweigh(self) -> None:
        """Give the boxes' parent group the CPU weight of as many ordinary processes as it
        holds boxes. The scheduler weighs a group as one entity against the processes
        beside it: without this, every box of the machine together would get one
        process's share of a busy CPU, and a boxed bot far less than an unboxed one."""
        parent = self.where.parents["cpu"]
        boxes = sum(1 for d in parent.iterdir() if d.name.startswith("box-"))
        name, value = (("cpu.weight", min(10_000, 100 * max(1, boxes))) if self.v2 else
                       ("cpu.shares", min(262_144, 1024 * max(1, boxes))))
        with contextlib.suppress(OSError):
            (parent / name).write_text(str(value))

    def set_resting(self, resting: bool) -> None:
        """Give the group the lowest CPU weight (``resting``) or the default one back.
        The weight ranks the group only against the other boxes (its siblings). Called
        twice a decision, so the file stays open (a write is then about 2 us, against
        35 us to open, write and close it)."""
        if self._weight_fd is None:
            name = "cpu.weight" if self.v2 else "cpu.shares"
            self._weight_fd = os.open(self.paths["cpu"] / name, os.O_WRONLY | os.O_CLOEXEC)
        if self.v2:
            value = RESTING_WEIGHT if resting else TURN_WEIGHT
        else:
            value = RESTING_SHARES if resting else TURN_SHARES
        os.pwrite(self._weight_fd, b"%d" % value, 0)

    def _set_limits(self, memory: int, pids: int, cpus: float,
                    cpuset: Sequence[int] | None) -> None:
        quota = max(1000, round(CFS_PERIOD_US * cpus))
        cpus_text = ",".join(str(c) for c in cpuset) if cpuset else ""
        if self.v2:
            self._write("memory", "memory.max", str(memory))
            with contextlib.suppress(FileNotFoundError):  # no swap accounting: no swap
                self._write("memory", "memory.swap.max", "0")
            self._write("pids", "pids.max", str(pids))
            self._write("cpu", "cpu.max", f"{quota} {CFS_PERIOD_US}")
            if cpus_text:
                self._write("cpuset", "cpuset.cpus", cpus_text)
            return
        self._write("memory", "memory.limit_in_bytes", str(memory))
        with contextlib.suppress(FileNotFoundError):  # swap is accounted: count it too
            self._write("memory", "memory.memsw.limit_in_bytes", str(memory))
        self._write("pids", "pids.max", str(pids))
        self._write("cpu", "cpu.cfs_period_us", str(CFS_PERIOD_US))
        self._write("cpu", "cpu.cfs_quota_us", str(quota))
        _inherit_cpuset(self.paths["cpuset"])
        if cpus_text:
            self._write("cpuset", "cpuset.cpus", cpus_text)

    def _write(self, controller: str, name: str, value: str) -> None:
        (self.paths[controller] / name).write_text(value)

    def _read(self, controller: str, name: str) -> str:
        try:
            return (self.paths[controller] / name).read_text()
        except OSError:
            return ""

    def procs_files(self) -> list[Path]:
        """The ``cgroup.procs`` file of each directory: writing a PID there moves it in."""
        return [d / "cgroup.procs" for d in self.directories()]

    def cpu_ns(self) -> int:
        """CPU time used by every process that ever ran in the group, in nanoseconds."""
        if self.v2:
            for line in self._read("cpu", "cpu.stat").splitlines():
                key, _, value = line.partition(" ")
                if key == "usage_usec":
                    return int(value) * 1000
            return 0
        text = self._read("cpuacct", "cpuacct.usage").strip()
        return int(text) if text else 0

    def oom_kills(self) -> int:
        """How many processes the kernel killed for the group's memory limit."""
        text = self._read("memory", "memory.events" if self.v2 else "memory.oom_control")
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def pids_refused(self) -> int:
        """How many forks the process cap refused."""
        for line in self._read("pids", "pids.events").splitlines():
            key, _, value = line.partition(" ")
            if key == "max":
                return int(value)
        return 0

    def members(self) -> list[int]:
        pids: set[int] = set()
        for d in self.directories():
            with contextlib.suppress(OSError):
                pids.update(int(p) for p in (d / "cgroup.procs").read_text().split())
        return sorted(pids)

    def signal_user(self, uid: int, sig: signal.Signals) -> None:
        """Send ``sig`` to the members running as ``uid`` (a box's own processes, not
        the bubblewrap processes that hold it together)."""
        for pid in self.members():
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            uids = next((ln.split()[1:] for ln in status.splitlines()
                         if ln.startswith("Uid:")), [])
            if uids and int(uids[0]) == uid:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)

    def kill(self, timeout: float = 5.0) -> bool:
        """SIGKILL every process in the group until it is empty (True) or ``timeout``
        seconds pass. v2 has ``cgroup.kill``; on v1 the members are killed one by one,
        again and again, so that children forked meanwhile go too (the process cap
        bounds them)."""
        deadline = time.monotonic() + timeout
        if self.v2:
            with contextlib.suppress(OSError):
                self._write("pids", "cgroup.kill", "1")
        while True:
            members = self.members()
            if not members:
                return True
            for pid in members:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            if time.monotonic() > deadline:
                return False
            time.sleep(0.005)

    def remove(self) -> None:
        """Remove the group's directories (kills what is left in it first)."""
        if self._weight_fd is not None:
            os.close(self._weight_fd)
            self._weight_fd = None
        self.kill()
        for d in self.directories():
            for _ in range(50):  # a killed process leaves the group once it is reaped
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)
        with contextlib.suppress(OSError):
            self._reweigh()
