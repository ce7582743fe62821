"""Measuring a referee's games while it is attacked, for the tests that play attacks on
a running ladder or serve (tests/test_http_slow_clients.py,
tests/test_grpc_idle_connections.py).

Games are counted over windows of :data:`WINDOW_S`, per second of the playing process's
own CPU time (what an attack costs the process; the suite's other workers move games per
wall-clock second by more than half), with the longest stretch in which no game was
stored (a stall that costs no CPU, such as a process out of files). Such a stretch may
last :func:`gap_allowed`: :data:`GAP_ALLOWED_S`, or on a machine so loaded that the
games before the attack came slowly, as long as :data:`GAP_GAMES` of them took. A stall
of the attack's making lasts as long as the attack: the window goes on until it holds
:data:`MIN_GAMES` games (below), up to a minute.

A window also lasts until it holds :data:`MIN_GAMES` games, or as many as its caller asks
(up to :data:`MAX_WINDOW_S`). When other work loads the machine the ladder may store
only a handful of games in :data:`WINDOW_S`, and their rate per CPU second is then noise;
and an attack that costs the process a fixed amount of CPU (2,000 silent gRPC streams
cost half a CPU second on an idle machine, over a second beside a second copy of the
suite) would weigh by how few games the load happened to allow: 9 games against 13
before it failed a test under a second copy of the suite, where the same attack on an
idle machine costs 15% of the rate (140 games a window)."""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from harness.storage.results import ResultsStore

FILE_LIMIT = 1024  # the attacked process's open-file limit
WINDOW_S = 6.0  # games are counted over windows this long
SAMPLE_S = 0.2  # the store is read this often within a window
GAP_ALLOWED_S = 5.0  # the longest stretch with no game stored during the attack...
GAP_GAMES = 20  # ...unless the games before it took longer to store this many
MIN_GAMES = 40  # a window goes on until it holds this many games...
MAX_WINDOW_S = 60.0  # ...for at most this long
CPU_TICK_S = 1 / os.sysconf("SC_CLK_TCK")  # the kernel counts CPU time in these
STDERR_GROWTH = 1 << 20  # what an attack may add to the process's stderr, at most
PACE_MS = 1
"""The attacked process's bots sleep this many milliseconds before each decision: its
games then come at about a quarter of the rate of bots that answer at once (a window
holds about 45 games on an idle machine, not 190), and the windows cost that much less
of the machine. Each window still holds :data:`MIN_GAMES`, and the rate per CPU second
is the same: each game costs the process as much CPU, however long its bots think."""


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


def gap_allowed(before: Window) -> float:
    """The longest stretch with no game stored that an attack may cause: 5 s, or as long
    as :data:`GAP_GAMES` games took before it (beside a second copy of the suite, games
    came at 1.7 a second before an attack, and one stretch of 8.4 s had none during it
    while the rate per CPU second held)."""
    return max(GAP_ALLOWED_S, GAP_GAMES / before.per_s if before.per_s > 0 else math.inf)


def window(store: Path, pid: int, min_games: int = MIN_GAMES,
           max_s: float = MAX_WINDOW_S) -> Window:
    """Watch the games stored in ``store`` by process ``pid`` for :data:`WINDOW_S`, and
    on until ``min_games`` are stored (at most ``max_s`` seconds in all)."""
    first = last = games_stored(store)
    cpu, start = cpu_seconds(pid), time.monotonic()
    last_new = start
    longest = 0.0
    while (elapsed := time.monotonic() - start) < WINDOW_S or (
            last - first < min_games and elapsed < max_s):
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
