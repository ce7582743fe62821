"""Helpers for the tests that use a Dask cluster: a scheduler and a worker started as
separate commands (as on several machines). Their ports come from tests/ports.py."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from distributed import Client
from waiting import WAIT_S, wait_for

ROOT = Path(__file__).resolve().parent.parent


def start_cluster(port: int, log: Path) -> list[subprocess.Popen[bytes]]:
    """A scheduler and one worker, as separate commands (as on several machines),
    returned once the worker has joined the scheduler (on a loaded machine that can take
    longer than a command waits for workers)."""
    dask = Path(sys.executable).parent / "dask"
    out = open(log, "ab")  # noqa: SIM115 - closed with the test's tmp dir
    said = log.with_name(f"scheduler-{port}-{time.monotonic_ns()}.json")
    scheduler = subprocess.Popen([str(dask), "scheduler", "--host", "127.0.0.1", "--port",
                                  str(port), "--no-dashboard", "--scheduler-file", str(said)],
                                 stdout=out, stderr=out, cwd=ROOT)
    # Connect only to this scheduler: once it says it listens on the port (had another
    # process taken the port, it would exit, and a client would talk to a stranger).
    try:
        wait_for(lambda: said.exists() and f":{port}" in said.read_text(),
                 f"the scheduler to listen on port {port}", proc=scheduler, log=log)
    except BaseException:
        stop([scheduler])
        raise
    worker = subprocess.Popen([str(dask), "worker", f"tcp://127.0.0.1:{port}", "--nthreads",
                               "1", "--no-dashboard"], stdout=out, stderr=out, cwd=ROOT,
                              start_new_session=True)
    procs = [scheduler, worker]
    try:
        with Client(f"tcp://127.0.0.1:{port}", timeout=WAIT_S) as client:
            client.wait_for_workers(1, timeout=WAIT_S)
    except BaseException:
        stop(procs)
        raise
    return procs


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
