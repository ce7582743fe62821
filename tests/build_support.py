"""Builds that the parallel test workers share: one C++ build per run, started early.

The C++ sample bot (sample_bots/cpp/) is built with CMake into the pytest cache, in the
build box of hosted bots where boxes run (no network, capped memory and CPU), else on
this machine. The build takes a core for tens of seconds; a test that needed it would
wait that long. So the first worker to collect a test that uses it starts the build in
the background (``python tests/build_support.py cpp ROOT``), the tests that use it run
last (tests/conftest.py), and the ``cpp_bot`` fixture takes the build lock: it finds the
build finished, or waits for it, or builds itself when the background build could not
(its error is the fixture's to report).
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from harness.errors import SandboxUnavailable
from harness.hosting.build import BUILD_LIMITS
from harness.referee.botlog import CappedLog
from harness.sandbox import check_available, run_build

REPO_ROOT = Path(__file__).resolve().parent.parent
CPP_SOURCE = REPO_ROOT / "sample_bots" / "cpp"
TOOLS = ("cmake", "c++", "protoc", "grpc_cpp_plugin")
INSTALL_HINT = "apt-get install -y cmake g++ libgrpc++-dev protobuf-compiler-grpc"

# The sample's build, as a hosted bot's manifest would give it: unoptimised and without
# debug information (-O0 alone), which compiles in about half the CPU time of the default
# release build and a sixth less than a debug build; nothing here times the bot or
# debugs it.
BUILD = ("cmake -S sample_bots/cpp -B {out} -DCMAKE_BUILD_TYPE=Debug "
         "-DCMAKE_CXX_FLAGS_DEBUG=-O0 && cmake --build {out} -j 2")


class MissingPrerequisite(Exception):
    """The machine lacks a tool or library the C++ build needs."""


class BuildFailed(Exception):
    """The C++ build ran and failed."""


@contextmanager
def build_lock(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``folder`` (created if missing) while building into it:
    the first worker builds, the others wait and then find the build up to date."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.with_name(folder.name + ".lock"), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def cpp_build_root(config: pytest.Config) -> Path | None:
    """Where the run's workers share the C++ build: the pytest cache; without one
    (``-p no:cacheprovider``), the run's temporary folder, which holds each parallel
    worker's own (so the build is made once per run, not once per worker). None in a
    single process without a cache: the fixture builds in its own temporary folder."""
    cache = getattr(config, "cache", None)
    if cache is not None:
        return Path(cache.mkdir("cpp-bot"))
    basetemp = config.option.basetemp  # a parallel worker's: the run's folder/popen-gwN
    if getattr(config, "workerinput", None) is not None and basetemp:
        return Path(basetemp).parent / "cpp-bot"
    return None


def build_cpp(root: Path) -> Path:
    """Build the C++ sample bot under ``root`` (up to date: CMake rebuilds only what
    changed) and return the executable. Raises MissingPrerequisite or BuildFailed."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        raise MissingPrerequisite(f"not on PATH: {', '.join(missing)}")
    with build_lock(root):  # parallel test workers share one build
        try:
            check_available()
        except SandboxUnavailable:
            if os.environ.get("CI"):
                raise
            return _build_here(root / "here")
        return _build_in_a_box(root)


def _cmake_failure(output: str, what: str) -> Exception:
    if "Could NOT find" in output or "Could not find" in output:
        return MissingPrerequisite(f"CMake could not find a dependency:\n{output}")
    return BuildFailed(f"{what}:\n{output}")


def _build_in_a_box(root: Path) -> Path:
    source, out = root / "source", root / "out"
    for folder in ("sample_bots/cpp", "proto"):  # copies keep their times: CMake rebuilds
        shutil.copytree(REPO_ROOT / folder, source / folder, dirs_exist_ok=True,
                        copy_function=shutil.copy2,
                        ignore=shutil.ignore_patterns("build", "*.md"))
    for path in (source, *source.rglob("*")):  # a box runs as nobody
        path.chmod(0o755 if path.is_dir() else 0o644)
    exe = out / "build" / "random_bot"
    # A build's /out starts empty (a tmpfs: harness/sandbox/scratch.py), so CMake cannot
    # tell that nothing changed: the stamp of the sources' newest time and the build
    # command, written after the build that made ``exe``, says so instead.
    stamp = root / "out.stamp"
    newest = max(p.stat().st_mtime_ns for p in source.rglob("*") if p.is_file())
    built = f"{newest} {BUILD}"
    if exe.is_file() and stamp.is_file() and stamp.read_text() == built:
        return exe
    log = root / "build.log"
    outcome = asyncio.run(run_build(source, ("sh", "-c", BUILD.format(out="/out/build")),
                                    BUILD_LIMITS, CappedLog(log), 1800, output=out))
    if not outcome.ok:
        raise _cmake_failure(log.read_text(errors="replace")[-4000:],
                             f"the C++ sample's build in a box: {outcome.detail}")
    if not exe.is_file():
        raise BuildFailed(f"the build made no {exe}")
    stamp.write_text(built)
    return exe


def _build_here(build: Path) -> Path:
    """The same build on this machine, outside a box (where boxes cannot run)."""
    for step in (["cmake", "-S", str(CPP_SOURCE), "-B", str(build),
                  "-DCMAKE_BUILD_TYPE=Debug"],
                 ["cmake", "--build", str(build), "-j", "2"]):
        done = subprocess.run(step, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise _cmake_failure((done.stdout + done.stderr)[-4000:], " ".join(step))
    exe = build / "random_bot"
    if not exe.is_file():
        raise BuildFailed(f"the build made no {exe}")
    return exe


def start_background_build(config: pytest.Config) -> subprocess.Popen[bytes] | None:
    """Start the C++ build in the background, once per run: the first worker (or the
    only process) to call this starts it, the others find it started. None when this
    process did not start it, or when there is no shared folder to build into."""
    root = cpp_build_root(config)
    if root is None:
        return None
    worker = getattr(config, "workerinput", None)
    run_id = worker["testrunuid"] if worker is not None else f"pid{os.getpid()}"
    marker = root.with_name(f"cpp-bot.started-{run_id}")
    for old in root.parent.glob("cpp-bot.started-*"):  # earlier runs'
        if old != marker:
            old.unlink(missing_ok=True)
    try:
        os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return None
    return subprocess.Popen([sys.executable, __file__, "cpp", str(root)], cwd=REPO_ROOT,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


if __name__ == "__main__":
    # The background build: any failure is left for the cpp_bot fixture, which builds
    # again and reports it.
    _, kind, where = sys.argv
    assert kind == "cpp"
    try:
        build_cpp(Path(where))
    except Exception:
        sys.exit(1)
