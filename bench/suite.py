"""The test suite's cost, with the machine's speed measured in the same run.

    python bench/suite.py [--reference-seconds 2.0] [--at HANDS_PER_S] [--json PATH]
                          [--checkout DIR] [-- PYTEST ARGS ...]

Runs ``python -m pytest`` (default arguments: ``-q``, so the settings of
``pyproject.toml`` apply: parallel workers, timeouts) from the checkout's root and reports
its wall time and CPU time. ``--checkout DIR`` runs the suite of another checkout
instead, with the Python of its own ``.venv`` (a clone at an older commit, set up by its
own ``.ci/run``), while the reference below stays this checkout's: runs of two versions
of the suite, alternated on one machine, then compare by their ratio.

The CPU of a run that starts several hundred processes is counted two ways: the CPU of
every process the run waited for (``RUSAGE_CHILDREN``: its workers, the bots and commands
they started and waited for), and the busy time of the whole machine during the run
(psutil), which also counts processes that were not waited for (browsers, servers killed
on purpose) and anything else that ran meanwhile: it is the suite's own only on an
otherwise idle machine.

The speed of a shared virtual machine can drift several-fold from one day to another,
which moves every wall-clock figure of the suite with it. So the same run also measures
a reference, before and after the suite: the rules engine's random play (four-handed,
24 cards, ``bench/engine.py``'s loop), in hands per CPU second of this process. The
suite's CPU times that speed, ``reference hands``, is a cost that stays comparable
across days and machines (the suite is bound by CPU: see the utilisation figure);
``--at HANDS_PER_S`` also prints the wall time the run would take at that reference
speed, an estimate that assumes the whole suite scales as the engine does.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from engine import hands_loop, rate  # noqa: E402
from referee import environment  # noqa: E402

from harness.rules import RulesConfig  # noqa: E402


def machine_busy_s() -> float:
    """CPU seconds the whole machine has been busy since boot, all cores (psutil: on
    Linux, guests' time is already in ``user`` and ``nice``)."""
    t = psutil.cpu_times()
    return float(t.user + t.nice + t.system + getattr(t, "irq", 0.0)
                 + getattr(t, "softirq", 0.0))


def reference(seconds: float, runs: int = 3) -> float:
    """The engine's random play, four-handed 24 cards: hands per CPU second (median)."""
    return rate(hands_loop(RulesConfig(), observe=False), seconds, runs)


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reference-seconds", type=float, default=2.0,
                    help="length of each of the 3 reference runs, before and after")
    ap.add_argument("--at", type=float, metavar="HANDS_PER_S",
                    help="also estimate the wall time at this reference speed")
    ap.add_argument("--json", type=Path, help="write the figures to this file")
    ap.add_argument("--checkout", type=Path, metavar="DIR",
                    help="run the suite of this checkout, with its own .venv's Python "
                         "(default: this checkout's suite, with this Python)")
    ap.add_argument("pytest_args", nargs="*", default=["-q"],
                    help="arguments for pytest, after -- (default: -q)")
    args = ap.parse_args(argv)
    where, python = ROOT, sys.executable
    if args.checkout is not None:
        where = args.checkout.resolve()
        python = str(where / ".venv" / "bin" / "python")
        if not Path(python).exists():
            ap.error(f"{python} does not exist: set the checkout up first (bash .ci/run)")

    cores = os.cpu_count() or 1
    load_before = os.getloadavg()[0]
    ref_before = reference(args.reference_seconds)
    busy0, cpu0 = machine_busy_s(), children_cpu_s()
    start = time.monotonic()
    status = subprocess.call([python, "-m", "pytest", *args.pytest_args], cwd=where)
    wall = time.monotonic() - start
    busy1, cpu1 = machine_busy_s(), children_cpu_s()
    ref_after = reference(args.reference_seconds)

    ref = statistics.mean((ref_before, ref_after))
    waited = cpu1 - cpu0
    machine = busy1 - busy0
    env = environment()
    figures: dict[str, object] = {
        "machine": f"{cores} CPUs, {env['cpu']}; Python {env['python']}",
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "checkout": str(where) if args.checkout is not None else "this one",
        "pytest_args": args.pytest_args,
        "exit_status": status,
        "wall_s": round(wall, 1),
        "cpu_s_waited_processes": round(waited, 1),
        "cpu_s_whole_machine": round(machine, 1),
        "load_average_before": round(load_before, 2),
        "reference_hands_per_cpu_s": {"before": round(ref_before), "after": round(ref_after)},
        "reference_hands": round(machine * ref),
    }
    print(f"\n{figures['machine']}; {figures['date_utc']} UTC; pytest "
          f"{' '.join(args.pytest_args)}: exit status {status}")
    if args.checkout is not None:
        print(f"  the suite of                         {where}")
    print(f"  wall                                 {wall:8.1f} s")
    print(f"  CPU, processes the run waited for    {waited:8.1f} s")
    print(f"  CPU, whole machine                   {machine:8.1f} s  (utilisation "
          f"{machine / (wall * cores):.0%} of {cores} cores)")
    print(f"  load average before                  {load_before:8.2f}")
    print(f"  reference, hands per CPU second      {ref_before:8.0f} before, "
          f"{ref_after:.0f} after")
    print(f"  the suite's CPU in reference hands   {figures['reference_hands']:8,}")
    if args.at:
        estimate = wall * ref / args.at
        figures["wall_s_estimated_at"] = {"reference": args.at, "wall_s": round(estimate, 1)}
        print(f"  estimated wall at {args.at:.0f} hands/s       {estimate:8.1f} s "
              f"(scaled by the reference; an estimate, not a measurement)")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
