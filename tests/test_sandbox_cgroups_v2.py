"""The cgroup v2 side of harness/sandbox/cgroups.py, against a hierarchy laid out in a
temporary folder as the kernel lays out ``/sys/fs/cgroup`` (the machines these tests run
on have cgroup v1, where boxes are tested for real): detection, the controllers enabled
for boxes, the limit files a box's group gets, and how its CPU time, OOM kills and
refused forks are read back."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import SandboxUnavailable
from harness.sandbox import cgroups


@pytest.fixture
def v2_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cgroup"
    root.mkdir()
    (root / "cgroup.controllers").write_text("cpuset cpu io memory hugetlb pids rdma misc\n")
    (root / "cgroup.subtree_control").write_text("")
    monkeypatch.setattr(cgroups, "CGROUP_ROOT", root)
    return root


def test_v2_is_detected_and_the_box_controllers_are_enabled(v2_root: Path) -> None:
    where = cgroups.hierarchy()
    parent = v2_root / cgroups.GROUP_NAME
    assert where.version == 2
    assert where.directories() == [parent]
    assert set(where.parents) == set(cgroups.V2_CONTROLLERS)
    enabled = "+memory +pids +cpu +cpuset"
    assert (v2_root / "cgroup.subtree_control").read_text() == enabled
    assert (parent / "cgroup.subtree_control").read_text() == enabled


def test_a_v2_box_gets_its_limits_in_the_v2_files(v2_root: Path) -> None:
    group = cgroups.Group(cgroups.hierarchy())
    group.create(memory_bytes=256 << 20, pids=32, cpus=0.5, cpuset=(1,))
    (folder,) = group.directories()
    assert folder.parent == v2_root / cgroups.GROUP_NAME
    assert (folder / "memory.max").read_text() == str(256 << 20)
    assert (folder / "memory.swap.max").read_text() == "0"
    assert (folder / "pids.max").read_text() == "32"
    assert (folder / "cpu.max").read_text() == "50000 100000"
    assert (folder / "cpuset.cpus").read_text() == "1"
    (folder / "cpu.stat").write_text("usage_usec 1234\nuser_usec 1000\nsystem_usec 234\n")
    (folder / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 2\n")
    (folder / "pids.events").write_text("max 5\n")
    assert group.cpu_ns() == 1_234_000
    assert group.oom_kills() == 2
    assert group.pids_refused() == 5
    (folder / "cpu.weight").write_text("")  # the kernel's file takes each write whole
    group.set_resting(True)  # between a bot's turns: the lowest weight v2 takes
    assert (folder / "cpu.weight").read_text() == "1"
    group.set_resting(False)  # in its turn: v2's default
    assert (folder / "cpu.weight").read_text() == "100"


def test_a_v2_machine_without_a_box_controller_is_refused_in_one_line(
        v2_root: Path) -> None:
    (v2_root / "cgroup.controllers").write_text("cpu io memory pids\n")
    with pytest.raises(SandboxUnavailable, match="missing: cpuset"):
        cgroups.hierarchy()
