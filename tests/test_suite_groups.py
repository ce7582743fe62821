"""The suite's own parallel runs keep the tests that share a module-scoped fixture on one
worker (tests/conftest.py groups them), so that a ladder, a browser or a cluster starts
once per run, not once per worker that runs one of its tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_tests_that_share_a_module_fixture_run_on_one_worker_that_sets_it_up_once(
        tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_XDIST", "PYTEST_CURRENT"))}
    env["GROUP_PROBE_DIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "-v", "-p", "no:cacheprovider",
         "tests/group_probe.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    workers: dict[str, set[str]] = {}  # test function: the workers that ran it
    for line in done.stdout.splitlines():
        if " PASSED " in line and "group_probe.py::" in line:
            test = line.split("group_probe.py::")[1].split("[")[0]
            workers.setdefault(test, set()).add(line.split()[0])
    assert set(workers) == {"test_shares_the_fixture",
                            "test_shares_the_parametrised_fixture"}, done.stdout
    # each set of four ran on one worker (a parametrised fixture's group too: its name
    # would end in "]", which pytest-xdist does not read as a group)
    assert all(len(ran) == 1 for ran in workers.values()), workers
    setups = [p.name.split("-")[0] for p in tmp_path.iterdir()]
    assert sorted(setups) == ["shaped_x", "shared"], setups  # each set up once
