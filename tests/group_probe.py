"""Run by tests/test_suite_groups.py, not collected by the suite itself (its name does
not start with ``test_``): two sets of four tests, each set sharing a module-scoped
fixture (one of them parametrised). Each fixture notes every time it is set up in the
folder ``GROUP_PROBE_DIR`` names."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest


def _set_up(name: str) -> str:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    (Path(os.environ["GROUP_PROBE_DIR"]) / f"{name}-{worker}-{uuid.uuid4().hex}").touch()
    return worker


@pytest.fixture(scope="module")
def shared() -> str:
    return _set_up("shared")


@pytest.fixture(scope="module", params=["x"])
def shaped(request: pytest.FixtureRequest) -> str:
    return _set_up(f"shaped_{request.param}")


@pytest.mark.parametrize("n", range(4))
def test_shares_the_fixture(shared: str, n: int) -> None:
    assert shared == os.environ.get("PYTEST_XDIST_WORKER", "")


@pytest.mark.parametrize("n", range(4))
def test_shares_the_parametrised_fixture(shaped: str, n: int) -> None:
    assert shaped == os.environ.get("PYTEST_XDIST_WORKER", "")
