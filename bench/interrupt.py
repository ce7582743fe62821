"""How long each long-running command takes to exit after one Ctrl-C.

    python bench/interrupt.py [--runs 3] [--only run,run-cluster,sprt,ladder-cluster,serve,match]

Each command is started in a session of its own in a temporary folder, with a bot that
sleeps 15 ms a decision against the random bot (two-handed, to 3 points: about a second
a game); once it has stored (or, for ``match``, printed) its first game, SIGINT goes to
its whole process group, as a terminal sends it, and the seconds until the command has
exited are measured. Prints the median and the range over ``--runs``, the exit status
and the lines it wrote on stderr. The target is 5 s.
"""

from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOTS = """
[[bot]]
name = "sleepy"
command = "{python} bench/sleepy_bot.py"
env = { SLEEPY_BOT_MS = "15" }
[[bot]]
name = "random"
command = "{python} -m sample_bots.random_bot"
"""


def config(folder: Path, extra: str = "") -> Path:
    path = folder / "t.toml"
    path.write_text(f'name = "t"\nid = "t"\noutput = "{folder / "out"}"\ngames = 40\n'
                    f'concurrency = 2\ntc = "5+30"\n{extra}\n[rules]\nform = "two-handed"\n'
                    f'target = 3\n{BOTS}')
    return path


def games_in(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM games").fetchone()[0])
    except sqlite3.Error:
        return 0


def case(name: str, folder: Path) -> tuple[list[str], Callable[[], bool]]:
    """The command line of a case and the check that it has a first game."""
    cfg = config(folder)
    store = folder / "out" / "results.sqlite"
    if name in ("run", "run-cluster"):
        extra = ["--workers", "2"] if name == "run-cluster" else []
        return ["run", str(cfg), "--quiet", *extra], lambda: games_in(store) > 0
    if name == "sprt":
        cfg = config(folder, '[sprt]\ncandidate = "sleepy"\nbaseline = "random"\nelo1 = 5\n')
        return ["sprt", str(cfg), "--id", "t", "--quiet"], lambda: games_in(store) > 0
    if name == "ladder-cluster":
        ladder = folder / "out" / "ladder.sqlite"
        return (["ladder", str(cfg), "--port", "0", "--workers", "2"],
                lambda: games_in(ladder) > 0)
    if name == "match":
        out = folder / "stdout"
        return (["match", "--bot", "a={python} bench/sleepy_bot.py", "--bot",
                 "b={python} -m sample_bots.random_bot", "--games", "100", "--form",
                 "two-handed", "--target", "3", "--log-dir", str(folder / "logs")],
                lambda: "game   1" in out.read_text())
    raise ValueError(name)


def serve_case(folder: Path, proc_err: Path) -> Callable[[], bool]:
    """Start a tournament on the referee once it listens; the check for a first game."""
    cfg = config(folder)
    started: list[bool] = []
    store = folder / "res" / "t" / "results.sqlite"

    def ready() -> bool:
        text = proc_err.read_text()
        if not started and "listening on " in text:
            address = text.split("listening on ")[1].split()[0]
            subprocess.run([sys.executable, "-m", "harness", "ctl", "--address", address,
                            "start", str(cfg)], cwd=ROOT, check=True, capture_output=True)
            started.append(True)
        return bool(started) and games_in(store) > 0
    return ready


def once(name: str) -> tuple[float, int, int]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        err, out = folder / "stderr", folder / "stdout"
        if name == "serve":
            args = ["serve", "--port", "0", "--output", str(folder / "res"), "--log-dir",
                    str(folder / "logs")]
            ready = serve_case(folder, err)
        else:
            args, ready = case(name, folder)
        env = {**os.environ, "SLEEPY_BOT_MS": "15"}
        with err.open("wb") as e, out.open("wb") as o:
            proc = subprocess.Popen([sys.executable, "-m", "harness", *args], cwd=ROOT,
                                    stdout=o, stderr=e, env=env, start_new_session=True)
        try:
            deadline = time.monotonic() + 300
            while not ready():
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"{name}: no first game; stderr:\n{err.read_text()}")
                time.sleep(0.05)
            start = time.monotonic()
            os.killpg(proc.pid, signal.SIGINT)
            code = proc.wait(120)
            took = time.monotonic() - start
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        lines = len([line for line in err.read_text().splitlines() if line.strip()])
        return took, code, lines


def main() -> None:
    names = ["run", "run-cluster", "sprt", "ladder-cluster", "serve", "match"]
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default=",".join(names))
    args = ap.parse_args()
    print(f"{'command':<16}{'median s':>9}{'range s':>14}{'status':>8}{'stderr lines':>14}")
    for name in args.only.split(","):
        results = [once(name) for _ in range(args.runs)]
        times = [t for t, _, _ in results]
        print(f"{name:<16}{statistics.median(times):>9.1f}"
              f"{f'{min(times):.1f}-{max(times):.1f}':>14}"
              f"{','.join(sorted({str(c) for _, c, _ in results})):>8}"
              f"{','.join(sorted({str(n) for _, _, n in results})):>14}", flush=True)


if __name__ == "__main__":
    main()
