"""Measuring a referee's games while it is attacked, for the tests that play attacks on
a running ladder or serve (tests/test_http_slow_clients.py,
tests/test_grpc_idle_connections.py).

Games are counted over windows of :data:`WINDOW_S`, per second of the playing process's
own CPU time (what an attack costs the process; the suite's other workers move games per
wall-clock second by more than half), with the longest stretch in which no game was
stored (a stall that costs no CPU, such as a process out of files)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from harness.storage.results import ResultsStore

FILE_LIMIT = 1024  # the attacked process's open-file limit
WINDOW_S = 6.0  # games are counted over windows this long
SAMPLE_S = 0.2  # the store is read this often within a window
GAP_ALLOWED_S = 5.0  # the longest stretch with no game stored during the attack
CPU_TICK_S = 1 / os.sysconf("SC_CLK_TCK")  # the kernel counts CPU time in these
STDERR_GROWTH = 1 << 20  # what an attack may add to the process's stderr, at most


def soft_file_limit(pid: int) -> int:
    """The soft limit on open files of process ``pid``."""
    soft, _ = psutil.Process(pid).rlimit(psutil.RLIMIT_NOFILE)
    return int(soft)


def games_stored(store: Path) -> int:
    if not store.exists():
        return 0
    with ResultsStore(store) as results:
        return sum(count for *_, count in results.tournament_summaries())


def cpu_seconds(pid: int) -> float:
    """The CPU time process ``pid`` has used so far, all its threads (not its children)."""
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


@dataclass(frozen=True)
class Window:
    """What one :data:`WINDOW_S` of play stored: games, per wall second and per CPU
    second of the process that plays them, and the longest stretch with none stored."""

    games: int
    per_s: float
    per_cpu_s: float
    longest_gap_s: float


def window(store: Path, pid: int) -> Window:
    """Watch the games stored in ``store`` by process ``pid`` for :data:`WINDOW_S`."""
    first = last = games_stored(store)
    cpu, start = cpu_seconds(pid), time.monotonic()
    last_new = start
    longest = 0.0
    while time.monotonic() - start < WINDOW_S:
        time.sleep(SAMPLE_S)
        if (count := games_stored(store)) > last:
            now = time.monotonic()
            longest = max(longest, now - last_new)
            last, last_new = count, now
    end = time.monotonic()
    longest = max(longest, end - last_new)
    used = max(cpu_seconds(pid) - cpu, CPU_TICK_S)
    return Window(last - first, (last - first) / (end - start), (last - first) / used,
                  longest)
