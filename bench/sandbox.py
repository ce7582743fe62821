"""Boxes (harness.sandbox): start-up time, per-decision overhead, the CPU clock's spread.

    python bench/sandbox.py [--startups 20] [--games 20] [--runs 100] [--load 2]
                            [--only startup,overhead,neighbours,clock] [--json PATH]

Needs bubblewrap and root (or a delegated cgroup), like every boxed bot.

1. **Start-up.** ``--startups`` times: a box around ``/bin/true`` (cgroup, bwrap,
   setpriv, exit, cgroup removed) against a plain ``/bin/true``; and a random bot from
   start to a completed handshake (``BotPool.ready`` after the previous process was
   stopped), boxed (Unix socket) against unboxed (TCP on loopback).
2. **Per-decision overhead.** ``--games`` pairs of identical two-handed games (the same
   deal seed, seeded random bots), one between two boxed bots over the Unix socket, one
   between two unboxed bots over TCP, alternating: wall time per decision (game time /
   decisions) and the referee's median request-to-reply time; the ratio boxed / unboxed
   per pair, then the median.
3. **CPU clock.** ``--runs`` identical games (deal seed fixed) between two boxed copies of
   ``bench/busy_bot.py`` (a fixed amount of CPU work per decision, seeded play) under
   ``clock = "cpu"``, while ``--load`` processes spin on the CPUs: the CPU each game
   charges (sum of its decisions), the spread of the charge of each decision across the
   runs, and how the two identical bots' charges compare (the median charge of each
   one's decisions). The same games on the wall clock (``--wall-runs``) under the same
   load, for contrast.
4. **Neighbours of a hostile box.** ``--games`` pairs of identical two-handed games
   between two unboxed, seeded random bots (the same deal seed, so every game is the
   same), one played with nothing beside it and one while a hostile bot
   (``bench/hostile_box.py``) fills a box of the default limits beside it: threads
   spinning on every CPU, children forked up to the process cap, memory allocated up
   to the limit. The neighbours' wall time per decision and the referee's median
   request-to-reply time, the ratio beside / alone per pair, then the median.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

from harness.referee.arena import Arena  # noqa: E402
from harness.referee.outcome import GameResult, Termination, TimeControl  # noqa: E402
from harness.referee.pool import Entrant  # noqa: E402
from harness.referee.process import BotCommand  # noqa: E402
from harness.rules import Form, RulesConfig  # noqa: E402
from harness.sandbox import Box, BoxLimits, check_available  # noqa: E402

TWO = RulesConfig(form=Form.TWO_HANDED)
SHORT = RulesConfig(form=Form.TWO_HANDED, target=5)


def bot_folder(base: Path, script: Path) -> Path:
    folder = base / script.stem
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    shutil.copy(script, folder / script.name)
    (folder / script.name).chmod(0o644)
    return folder


def spread(values: Sequence[float]) -> dict[str, float]:
    mean = statistics.fmean(values)
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "cv": statistics.pstdev(values) / mean if mean else 0.0}


# ------------------------------------------------------------------ 1. start-up


async def box_startup(n: int, base: Path) -> dict[str, float]:
    boxed, plain = [], []
    for _ in range(n):
        t = time.perf_counter()
        async with Box("bench", base, BoxLimits(), None) as box:
            proc = await box.start(["/bin/true"], {})
            await proc.wait()
        boxed.append(time.perf_counter() - t)
        t = time.perf_counter()
        proc = await asyncio.create_subprocess_exec("/bin/true")
        await proc.wait()
        plain.append(time.perf_counter() - t)
    return {"box_ms": statistics.median(boxed) * 1e3,
            "plain_ms": statistics.median(plain) * 1e3}


async def bot_startup(n: int, folder: Path, logs: Path) -> dict[str, float]:
    times: dict[str, list[float]] = {"boxed": [], "plain": []}
    async with Arena(log_dir=logs) as arena:
        arena.add(Entrant("boxed", BotCommand((sys.executable, "random_bot.py"),
                                              cwd=str(folder), sandbox=BoxLimits())), 1)
        arena.add(Entrant("plain", BotCommand((sys.executable, "random_bot.py"),
                                              cwd=str(folder))), 1)
        for _ in range(n):
            for name in ("boxed", "plain"):
                inst = arena.pool.instances(name)[0]
                t = time.perf_counter()
                await arena.pool.ready(inst)
                times[name].append(time.perf_counter() - t)
                assert inst.process is not None
                await inst.process.stop()
    return {f"{k}_ready_ms": statistics.median(v) * 1e3 for k, v in times.items()}


# ------------------------------------------------------------------ 2. overhead


def per_decision(result: GameResult) -> tuple[float, float]:
    ms = result.record["decision_ms"]
    return result.duration_s / len(ms) * 1e6, statistics.median(ms) * 1e3


async def overhead(games: int, folder: Path, logs: Path) -> dict[str, Any]:
    seed = {"EUCHRE_BOT_SEED": "5"}
    rows: dict[str, list[tuple[float, float]]] = {"boxed": [], "plain": []}
    abnormal = 0
    async with Arena(log_dir=logs) as arena:
        arena.add(Entrant("boxed", BotCommand((sys.executable, "random_bot.py"),
                                              cwd=str(folder), env=seed,
                                              sandbox=BoxLimits())), 2)
        arena.add(Entrant("plain", BotCommand((sys.executable, "random_bot.py"),
                                              cwd=str(folder), env=seed)), 2)
        for i in range(games + 1):  # game 0 of each: a warm-up, not counted
            for name in ("boxed", "plain"):
                result = await arena.play(f"{name}-{i}", TWO, 11, [name, name])
                abnormal += result.termination is not Termination.NORMAL
                if i:
                    rows[name].append(per_decision(result))
    return {**paired(rows, "boxed", "plain"), "abnormal": abnormal}


def paired(rows: dict[str, list[tuple[float, float]]], a: str, b: str) -> dict[str, Any]:
    """Medians of each side's (wall us, decide us) per game, and of the ratios a / b
    taken pair by pair."""
    wall = [x[0] / y[0] for x, y in zip(rows[a], rows[b], strict=True)]
    decide = [x[1] / y[1] for x, y in zip(rows[a], rows[b], strict=True)]
    return {f"{a}_wall_us": statistics.median(r[0] for r in rows[a]),
            f"{b}_wall_us": statistics.median(r[0] for r in rows[b]),
            f"{a}_decide_us": statistics.median(r[1] for r in rows[a]),
            f"{b}_decide_us": statistics.median(r[1] for r in rows[b]),
            "wall_ratio": statistics.median(wall), "decide_ratio": statistics.median(decide),
            "wall_ratio_range": [min(wall), max(wall)]}


# ------------------------------------------------------------------ 4. neighbours


async def neighbours(games: int, folder: Path, hostile: Path, logs: Path,
                     cpuset: tuple[int, ...] | None = None) -> dict[str, Any]:
    seed = {"EUCHRE_BOT_SEED": "5"}
    rows: dict[str, list[tuple[float, float]]] = {"alone": [], "beside": []}
    abnormal = 0
    async with Arena(log_dir=logs) as arena:
        arena.add(Entrant("plain", BotCommand((sys.executable, "random_bot.py"),
                                              cwd=str(folder), env=seed)), 2)
        await arena.play("warm", TWO, 11, ["plain", "plain"])
        for i in range(games):
            result = await arena.play(f"alone-{i}", TWO, 11, ["plain", "plain"])
            abnormal += result.termination is not Termination.NORMAL
            rows["alone"].append(per_decision(result))
            async with Box("hostile", hostile, BoxLimits(cpuset=cpuset), None) as box:
                proc = await box.start(["python3", "hostile_box.py"], {})
                assert proc.stdout is not None
                said = await asyncio.wait_for(proc.stdout.readline(), 60)  # it forked
                await asyncio.sleep(0.5)  # and it is filling its memory
                result = await arena.play(f"beside-{i}", TWO, 11, ["plain", "plain"])
                abnormal += result.termination is not Termination.NORMAL
                rows["beside"].append(per_decision(result))
    return {**paired(rows, "beside", "alone"), "hostile_said": said.decode().strip(),
            "abnormal": abnormal}


# ------------------------------------------------------------------ 3. CPU clock


async def clock_spread(runs: int, wall_runs: int, folder: Path, logs: Path,
                       loops: int) -> dict[str, Any]:
    env = {"BUSY_BOT_LOOPS": str(loops)}
    games: dict[str, list[list[float]]] = {"cpu": [], "wall": []}
    seats: list[int] = []  # the seat of each decision (the same game every run)
    faults = 0
    async with Arena(log_dir=logs) as arena:
        arena.add(Entrant("busy", BotCommand((sys.executable, "busy_bot.py"), cwd=str(folder),
                                             env=env, sandbox=BoxLimits())), 2)
        for clock, n in (("cpu", runs), ("wall", wall_runs)):
            tc = TimeControl(1.0, 10.0, clock)
            for i in range(n + 1):  # the first: a warm-up
                result = await arena.play(f"{clock}-{i}", SHORT, 3, ["busy", "busy"],
                                          time_control=tc)
                faults += len(result.faults)
                if i:
                    games[clock].append(result.record["decision_ms"])
                    seats = [seat for hand in result.record["hands"]
                             for seat, _ in hand["actions"]]
    lengths = {len(g) for g in games["cpu"] + games["wall"]}
    out: dict[str, Any] = {"decisions_per_game": sorted(lengths), "faults": faults}
    for clock, rows in games.items():
        if not rows or len(lengths) != 1:
            continue
        per_index = list(zip(*rows, strict=True))
        ranges = [(max(c) - min(c)) / statistics.median(c) for c in per_index]
        by_seat = [[ms for row in rows for ms, s in zip(row, seats, strict=True) if s == seat]
                   for seat in (0, 1)]
        out[clock] = {
            "game_ms": spread([sum(r) for r in rows]),
            "decision_ms": spread([ms for row in rows for ms in row]),
            # per decision of the game: (max - min) / median of its charge over the runs;
            # then the median and the 90th percentile of that over the game's decisions
            "decision_range_median": statistics.median(ranges),
            "decision_range_p90": statistics.quantiles(ranges, n=10)[-1],
            # the two identical bots: the median charge of each one's decisions
            "seat_decision_ms": [statistics.median(b) for b in by_seat],
            "seat_ratio": statistics.median(by_seat[0]) / statistics.median(by_seat[1]),
        }
    return out


# ------------------------------------------------------------------ main


def start_load(n: int) -> list[subprocess.Popen[bytes]]:
    """``n`` spinning processes, which the kernel kills if this one dies."""
    spin = ["setpriv", "--pdeathsig", "KILL", "--", sys.executable, "-c", "while True: pass"]
    return [subprocess.Popen(spin) for _ in range(n)]


async def main(args: argparse.Namespace) -> dict[str, Any]:
    check_available()
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
        base = Path(tmp)
        base.chmod(0o755)
        random_bot = bot_folder(base, ROOT / "sample_bots" / "random_bot.py")
        busy_bot = bot_folder(base, ROOT / "bench" / "busy_bot.py")
        logs = base / "logs"
        report: dict[str, Any] = {"machine": {"nproc": os.cpu_count(),
                                              "python": platform.python_version(),
                                              "load_before": os.getloadavg()[0]}}
        if "startup" in args.only:
            report["startup"] = {**await box_startup(args.startups, random_bot),
                                 **await bot_startup(args.startups, random_bot, logs)}
            print("start-up:", json.dumps(report["startup"]), flush=True)
        if "overhead" in args.only:
            report["overhead"] = await overhead(args.games, random_bot, logs)
            print("overhead:", json.dumps(report["overhead"]), flush=True)
        if "neighbours" in args.only:
            hostile = bot_folder(base, ROOT / "bench" / "hostile_box.py")
            report["neighbours"] = await neighbours(args.games, random_bot, hostile, logs,
                                                    args.hostile_cpuset)
            print("neighbours:", json.dumps(report["neighbours"]), flush=True)
        if "clock" not in args.only:
            return report
        load = start_load(args.load)
        try:
            report["clock"] = await clock_spread(args.runs, args.wall_runs, busy_bot, logs,
                                                 args.loops)
        finally:
            for p in load:
                p.kill()
                p.wait()
        report["clock"]["load_processes"] = args.load
        print("clock:", json.dumps(report["clock"]), flush=True)
    return report


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--startups", type=int, default=20)
    ap.add_argument("--games", type=int, default=20)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--wall-runs", type=int, default=20)
    ap.add_argument("--load", type=int, default=2, help="processes spinning during part 3")
    ap.add_argument("--loops", type=int, default=200_000, help="busy_bot's work per decision")
    ap.add_argument("--hostile-cpuset", type=lambda s: tuple(int(c) for c in s.split(",")),
                    default=None, metavar="CPUS",
                    help="part 4: pin the hostile box to these CPUs (default: not pinned)")
    ap.add_argument("--only", default="startup,overhead,neighbours,clock",
                    help="the parts to run, comma-separated (default all four)")
    ap.add_argument("--json", type=Path, default=None)
    return ap.parse_args(argv)


if __name__ == "__main__":
    arguments = parse_args()
    figures = asyncio.run(main(arguments))
    if arguments.json is not None:
        arguments.json.write_text(json.dumps(figures, indent=2))
