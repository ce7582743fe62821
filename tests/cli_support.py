"""The ``euchre-harness`` command, run in the test's own process.

Tests whose subject is what a command prints, stores or writes (a tournament's outputs,
a replay, an error line and its exit status) call :func:`harness_command`: the same
``main()`` that ``python -m harness`` runs, with the same parser, handlers and error
handling, and with its bots started as real processes over real gRPC as always. It only
skips starting one more Python process, which costs 0.2 to 0.5 CPU-seconds for the
imports alone (``ctl`` to ``run``); the suite runs a few hundred commands. Tests whose
subject is the process itself (a signal, a kill, the Quick start's commands, a server
that keeps running), or that run commands side by side, start ``python -m harness`` as a
real process instead. So does :func:`harness_command` where a command cannot run here:
in a thread that already runs an event loop (a browser driven by Playwright's
synchronous API runs one), or off the main thread (a command handles Ctrl-C there).

What a process would have on its own is given back afterwards: the working directory,
the environment, the root logger's level, and the standard streams, whose text is
returned as a :class:`subprocess.CompletedProcess` like ``subprocess.run`` would.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

from harness.cli import main

ROOT = Path(__file__).resolve().parent.parent
LOG_FORMAT = "%(asctime)s %(name)s: %(message)s"  # what main() sets up in a process


@contextlib.contextmanager
def _as_its_own_process(cwd: Path, env: Mapping[str, str] | None,
                        stderr: io.StringIO, verbose: bool) -> Iterator[None]:
    """The working directory, environment and log output a command run as a process
    would have; all put back on exit. (``main`` configures logging only where nothing
    has: under pytest, something has, so the command's log lines are routed here.)"""
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    root = logging.getLogger()
    saved_level = root.level
    handler = logging.StreamHandler(stderr)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler.setLevel(logging.INFO if verbose else logging.WARNING)
    try:
        os.environ.update(env or {})
        os.chdir(cwd)
        root.setLevel(handler.level)
        root.addHandler(handler)
        yield
    finally:
        root.removeHandler(handler)
        root.setLevel(saved_level)
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def harness_command(*args: str, cwd: Path = ROOT,
                    env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``euchre-harness ARGS`` here; its exit status and the text of its standard
    output and error, as ``subprocess.run(..., capture_output=True, text=True)`` gives."""
    if _loop_running() or threading.current_thread() is not threading.main_thread():
        return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd,
                              env={**os.environ, **(env or {})}, capture_output=True,
                              text=True, check=False)
    out, err = io.StringIO(), io.StringIO()
    verbose = args[:1] in (("-v",), ("--verbose",))  # main's own flag, before the command
    with _as_its_own_process(cwd, env, err, verbose), \
            contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as e:  # argparse: --help (0), a usage error (2)
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return subprocess.CompletedProcess(["euchre-harness", *args], code, out.getvalue(),
                                       err.getvalue())
