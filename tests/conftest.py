"""Test setup shared by every test module."""

import os

import pytest

# Tests start bot processes from a process that uses gRPC (see harness/referee/__init__.py).
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``long`` go first (the sort is stable: the rest keep their order), so
    that the parallel workers start the longest waits early and the run ends sooner."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)
