"""Run by tests/test_suite_groups.py, not collected by the suite itself (its name does
not start with ``test_``): four tests that share a module-scoped fixture, which notes
each time it is set up in the folder ``GROUP_PROBE_DIR`` names."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def shared() -> str:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    (Path(os.environ["GROUP_PROBE_DIR"]) / f"{worker}-{uuid.uuid4().hex}").touch()
    return worker


@pytest.mark.parametrize("n", range(4))
def test_shares_the_fixture(shared: str, n: int) -> None:
    assert shared == os.environ.get("PYTEST_XDIST_WORKER", "")
