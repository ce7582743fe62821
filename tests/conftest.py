"""Test setup shared by every test module."""

import compileall
import contextlib
import importlib
import importlib.util
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from build_support import start_background_build

ROOT = Path(__file__).resolve().parent.parent
_BUILD = pytest.StashKey[subprocess.Popen[bytes]]()

# Tests start bot processes from a process that uses gRPC (see harness/referee/__init__.py).
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")


def pytest_configure(config: pytest.Config) -> None:
    """Compile the project's modules to bytecode once, before any test runs.

    The suite starts several hundred Python processes (bots, commands, referees). Where
    the environment asks Python not to write bytecode (``PYTHONDONTWRITEBYTECODE``), each
    of them would compile every module it imports from source again; compiled once here,
    they all read the same ``__pycache__`` files (ignored by git). Test modules are left
    out: pytest rewrites their asserts itself. Runs once, in the process that starts the
    parallel workers."""
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: its controller did it
        return
    tests = re.compile(r"(^|/)(test_[^/]*|conftest)\.py$")
    for folder in ("harness", "sample_bots", "tests"):
        compileall.compile_dir(ROOT / folder, quiet=1, rx=tests)
    if config.getoption("numprocesses", None) and config.getoption("assertmode") == "rewrite":
        _rewrite_test_modules_once(config)


def _rewrite_test_modules_once(config: pytest.Config) -> None:
    """Write pytest's cache of the modules it rewrites the asserts of, once, for the
    parallel workers to read: the test modules, and the modules of the installed packages
    that bring pytest plugins (pytest-xdist's, pytest-timeout's, Hypothesis's: pytest
    rewrites those too, and the tests import Hypothesis whole). Each worker would
    otherwise rewrite all of them itself (about 4 CPU-seconds for the test modules, 1.3
    for the packages), since pytest does not write that cache either where the
    environment asks for no bytecode. The cache is pytest's own format, made by its own
    functions; with a pytest that lacks them, the workers rewrite as before."""
    try:
        from _pytest.assertion.rewrite import (
            PYC_TAIL,
            AssertionRewritingHook,
            _read_pyc,
            _rewrite_test,
            _write_pyc,
            assertstate_key,
            get_cache_dir,
        )
        state = config.stash[assertstate_key]
    except (ImportError, KeyError):
        return

    def cache(source: Path) -> None:
        pyc = get_cache_dir(source) / (source.name[:-3] + PYC_TAIL)
        if _read_pyc(source, pyc, state.trace) is not None:
            return
        with contextlib.suppress(OSError):  # a read-only folder: the workers rewrite
            pyc.parent.mkdir(exist_ok=True)
            source_hash, code = _rewrite_test(source, config)
            _write_pyc(state, code, source_hash, pyc)

    for source in sorted((ROOT / "tests").glob("*.py")):
        if source.name.startswith("test_") or source.name == "conftest.py":
            cache(source)
    hook = next((h for h in sys.meta_path if isinstance(h, AssertionRewritingHook)), None)
    marked = sorted(getattr(hook, "_must_rewrite", ()))
    writes, sys.dont_write_bytecode = sys.dont_write_bytecode, False
    try:  # imported here once, as each worker's test modules will; the hook caches them
        for name in marked:
            if name not in sys.modules and importlib.util.find_spec(name) is not None:
                importlib.import_module(name)
    finally:
        sys.dont_write_bytecode = writes
    for module in list(sys.modules.values()):
        spec = getattr(module, "__spec__", None)
        if spec is not None and spec.loader is hook and spec.origin:
            cache(Path(spec.origin))


def _shared_fixtures(item: pytest.Item) -> list[str]:
    """The module-scoped fixtures ``item`` uses, with their parameters."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    params = getattr(getattr(item, "callspec", None), "params", {})
    used = []
    for name in sorted(item.fixturenames):  # type: ignore[attr-defined]
        defs = info.name2fixturedefs.get(name)
        if defs and defs[-1].scope == "module":
            used.append(f"{name}[{params[name]}]" if name in params else name)
    return used


_GROUP_SAFE = str.maketrans({"[": "(", "]": ")", "@": "_"})


def _fixture_groups(items: list[pytest.Item]) -> dict[str, str]:
    """For each test that uses a module-scoped fixture, its group: the tests of a module
    linked by the fixtures (and parameters) they share, directly or through others. A
    browser and a results folder that two groups of tests each share with a third are
    one group: split, each worker running one of them would set up both again."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    keys = {item.nodeid: [f"{item.module.__name__}:{fixture}"  # type: ignore[attr-defined]
                          for fixture in _shared_fixtures(item)] for item in items}
    for linked in keys.values():
        for key in linked:
            parent[root(key)] = root(linked[0])
    members: dict[str, list[str]] = {}
    for key in list(parent):
        members.setdefault(root(key), []).append(key)
    # pytest-xdist reads the group from the end of the test's id, after an "@" that comes
    # later than any "]": a name with a "]" or an "@" would not be read as a group.
    name = {top: min(found).translate(_GROUP_SAFE) for top, found in members.items()}
    return {nodeid: name[root(linked[0])] for nodeid, linked in keys.items() if linked}


def _group(item: pytest.Item) -> str:
    marker = item.get_closest_marker("xdist_group")
    return str(marker.args[0]) if marker is not None and marker.args else item.nodeid


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``long`` go first (the sort is stable: the rest keep their order), so
    that the parallel workers start the longest tests early and the run ends sooner.

    Tests marked ``waits`` (most of their time is a wait on purpose: a start-up timeout,
    a store made slow) form one ``xdist_group`` and run one after another on one worker,
    while the others keep the cores busy: run side by side, several of them left both
    cores idle together. The group goes first with the long tests (pytest-xdist hands
    out the larger groups first as well): started late, its two minutes would be the
    run's tail.

    Tests that share a module-scoped fixture (a running ladder, a browser, a built bot)
    form one ``xdist_group`` (see _fixture_groups), so that the parallel workers
    (``--dist loadgroup``) start the fixture once, on one worker, instead of once on
    each worker that runs one of them; the groups of different fixtures (or parameters)
    still run side by side.

    The tests that play the C++ sample bot (and the groups they are in) go last, and
    the bot's build starts in the background now (tests/build_support.py): the workers
    run everything else meanwhile instead of waiting for the compiler.

    It runs before pytest-xdist's own hook, which turns each test's ``xdist_group`` into
    the suffix of its id that the scheduler reads: run after it, the groups given here
    would be ignored, and every worker would start the fixtures of its share again."""
    groups = _fixture_groups(items)
    for item in items:
        if item.get_closest_marker("waits") is not None:
            groups.setdefault(item.nodeid, "waits")
        if item.nodeid in groups and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(groups[item.nodeid]))
    built = {_group(item) for item in items if "cpp_bot" in getattr(item, "fixturenames", ())}
    items.sort(key=lambda item: (_group(item) in built,
                                 item.get_closest_marker("long") is None
                                 and item.get_closest_marker("waits") is None))
    if built:
        background_build = start_background_build(config)
        if background_build is not None:
            config.stash[_BUILD] = background_build


def pytest_unconfigure(config: pytest.Config) -> None:
    """A background build still running when the run ends (no test waited for it: the
    run was cut short or chose no such test) is stopped."""
    background_build = config.stash.get(_BUILD, None)
    if background_build is not None and background_build.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(background_build.pid, signal.SIGTERM)
        background_build.wait()
