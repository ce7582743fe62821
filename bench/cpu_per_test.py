"""Where the test suite's CPU goes, test by test: a pytest plugin and its summary.

    PYTHONPATH=bench python -m pytest -n0 -q -p cpu_per_test --cpu-per-test cpu.json
    python bench/cpu_per_test.py cpu.json [--top 30]

The plugin records, for each test, the busy time of the whole machine (all cores, as
``bench/suite.py`` counts it) and the wall time from its setup to its teardown, and writes
them to the JSON file when the run ends. Run it serially (``-n0``) on an otherwise idle machine: one
test at a time, the machine's busy time is that test's cost, with everything it started
(bots, referees, browsers, clusters), which the CPU time of the test's own process
leaves out. A module's shared fixtures are charged to the test that set them up; the
summary adds the tests up by module.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from collections.abc import Generator
from pathlib import Path

import pytest
from suite import machine_busy_s


class _Recorder:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows: list[tuple[str, float, float]] = []

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, None, None]:
        busy, start = machine_busy_s(), time.monotonic()
        yield
        self.rows.append((item.nodeid, round(machine_busy_s() - busy, 2),
                          round(time.monotonic() - start, 2)))

    def pytest_sessionfinish(self) -> None:
        self.path.write_text(json.dumps(self.rows, indent=0))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--cpu-per-test", metavar="PATH", default=None,
                     help="write each test's machine CPU and wall time to PATH (JSON)")


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("--cpu-per-test")
    if path and config.getoption("numprocesses", None):
        raise pytest.UsageError("--cpu-per-test measures one test at a time: add -n0")
    if path:
        config.pluginmanager.register(_Recorder(Path(path)), "cpu-per-test-recorder")


def summary(rows: list[tuple[str, float, float]], top: int) -> str:
    modules: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for nodeid, cpu, wall in rows:
        m = modules[nodeid.split("::")[0]]
        m[0] += cpu
        m[1] += wall
        m[2] += 1
    total_cpu = sum(r[1] for r in rows)
    lines = [f"{len(rows)} tests: {total_cpu:.0f} CPU-s of the machine, "
             f"{sum(r[2] for r in rows):.0f} s of wall time, one at a time", "",
             f"{'CPU-s':>7} {'share':>6} {'wall s':>7} {'tests':>5}  module"]
    for name, (cpu, wall, count) in sorted(modules.items(), key=lambda kv: -kv[1][0])[:top]:
        lines.append(f"{cpu:7.1f} {cpu / total_cpu:6.1%} {wall:7.1f} {int(count):5d}  {name}")
    lines += ["", f"{'CPU-s':>7} {'wall s':>7}  test"]
    for nodeid, cpu, wall in sorted(rows, key=lambda r: -r[1])[:top]:
        lines.append(f"{cpu:7.1f} {wall:7.1f}  {nodeid}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description="Sum up a --cpu-per-test file.")
    parser.add_argument("path", type=Path)
    parser.add_argument("--top", type=int, default=30, help="rows of each table")
    args = parser.parse_args()
    rows = [(str(n), float(c), float(w)) for n, c, w in json.loads(args.path.read_text())]
    print(summary(rows, args.top))


if __name__ == "__main__":
    main()
