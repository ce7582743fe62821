"""Test setup shared by every test module."""

import os

import pytest

# Tests start bot processes from a process that uses gRPC (see harness/referee/__init__.py).
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")


def _shared_fixtures(item: pytest.Item) -> str:
    """The module-scoped fixtures ``item`` uses, with their parameters ("" if none)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return ""
    params = getattr(getattr(item, "callspec", None), "params", {})
    used = []
    for name in sorted(item.fixturenames):  # type: ignore[attr-defined]
        defs = info.name2fixturedefs.get(name)
        if defs and defs[-1].scope == "module":
            used.append(f"{name}[{params[name]}]" if name in params else name)
    return ",".join(used)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``long`` go first (the sort is stable: the rest keep their order), so
    that the parallel workers start the longest waits early and the run ends sooner.

    Tests that share a module-scoped fixture (a running ladder, a browser, a built bot)
    form one ``xdist_group``, so that the parallel workers (``--dist loadgroup``) start
    the fixture once, on one worker, instead of once on each worker that runs one of
    them; the groups of different fixtures (or parameters) still run side by side."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)
    for item in items:
        shared = _shared_fixtures(item)
        if shared and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(f"{item.module.__name__}:{shared}"))  # type: ignore[attr-defined]
