"""Boxed bots (harness.sandbox) in real boxes: bubblewrap, cgroups, the referee's Unix
socket. Each limit of a box ends as the fault the docs promise, and nothing of a box is
left when it ends. (The attacks of a hostile bot: tests/test_sandbox_escape.py.)"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from cli_support import harness_command
from configs import Bot, toml_config
from sandbox_support import (
    TESTS,
    add,
    bot_folder,
    boxed,
    every_process,
    random_bot_folder,
    require_boxes,
)

from harness.errors import ConfigError, SandboxError, SandboxUnavailable
from harness.hosting.files import BundleFiles
from harness.referee.arena import Arena
from harness.referee.botlog import CappedLog
from harness.referee.boxed import BoxedBotProcess
from harness.referee.outcome import FaultKind, Termination, TimeControl
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.rules import Form, RulesConfig
from harness.sandbox import BoxLimits, BuildOutcome, box, cgroups, run_build, scratch
from harness.tournament.config import build_config, read_config

pytestmark = pytest.mark.timeout(120)

RANDOM = (sys.executable, "-m", "sample_bots.random_bot")
REPO_ROOT = TESTS.parent


@pytest.fixture
def boxes() -> None:
    require_boxes()


def plain_random() -> BotCommand:
    return BotCommand(RANDOM, cwd=str(REPO_ROOT))


def box_bot_folder(tmp_path: Path) -> Path:
    return bot_folder(tmp_path / "box-bot", TESTS / "box_bot.py")


def first_process(arena: Arena, name: str) -> BoxedBotProcess:
    proc = arena.pool.instances(name)[0].process
    assert isinstance(proc, BoxedBotProcess)
    return proc


def test_boxed_bots_play_a_full_game_over_the_unix_socket(boxes: None, tmp_path: Path) -> None:
    async def main() -> None:
        async with Arena(log_dir=tmp_path / "logs") as arena:
            add(arena, "boxed", boxed(random_bot_folder(tmp_path / "rb"), "random_bot.py"), 2)
            add(arena, "plain", plain_random(), 2)
            result = await arena.play("g1", RulesConfig(), 1, ["boxed", "plain"] * 2)
            assert result.termination is Termination.NORMAL and result.faults == ()
            for inst in arena.pool.instances("boxed"):
                assert inst.slot.session is not None
                assert inst.slot.session.peer.startswith("unix:")
                assert isinstance(inst.process, BoxedBotProcess)
                assert (inst.process.cpu_ns() or 0) > 0
            for inst in arena.pool.instances("plain"):
                assert inst.slot.session is not None
                assert inst.slot.session.peer.startswith("ipv")
    asyncio.run(main())


def test_running_out_of_memory_is_a_crash_with_the_memory_limit(boxes: None,
                                                                 tmp_path: Path) -> None:
    limits = BoxLimits(memory_mib=64)

    async def main() -> None:
        async with Arena(log_dir=tmp_path / "logs") as arena:
            add(arena, "hog", boxed(box_bot_folder(tmp_path), "box_bot.py", limits,
                                    {"BOX_BOT_MODE": "hog"}))
            add(arena, "plain", plain_random())
            result = await arena.play("g1", RulesConfig(form=Form.TWO_HANDED), 1, ["hog", "plain"])
            assert result.termination is Termination.FORFEIT
            (fault,) = result.faults
            assert (fault.bot, fault.kind, fault.detail) == ("hog", FaultKind.CRASH,
                                                             "memory limit 64 MiB")
            assert "allocated" not in first_process(arena, "hog").log_path.read_text()
    asyncio.run(main())


@pytest.mark.parametrize("clock", ["wall", "cpu"])
def test_a_cpu_spin_is_a_time_fault(boxes: None, tmp_path: Path, clock: str) -> None:
    async def main() -> None:
        async with Arena(log_dir=tmp_path / "logs") as arena:
            add(arena, "spin", boxed(box_bot_folder(tmp_path), "box_bot.py",
                                     env={"BOX_BOT_MODE": "spin"}))
            add(arena, "other", boxed(random_bot_folder(tmp_path / "rb"), "random_bot.py"))
            tc = TimeControl(0.3, 0.0, clock)
            result = await arena.play("g1", RulesConfig(form=Form.TWO_HANDED), 1,
                                      ["spin", "other"], time_control=tc)
            assert result.termination is Termination.FORFEIT
            (fault,) = result.faults
            assert (fault.bot, fault.kind) == ("spin", FaultKind.TIMEOUT)
            if clock == "cpu":  # cut by its CPU budget, or on a crowded machine by the
                # wall limit (4 x 0.3 + 1 s) first
                assert "of CPU" in fault.detail or "within 2.200s" in fault.detail
                assert result.record["time_control"] == "0.3+0/cpu"
    asyncio.run(main())


@pytest.mark.parametrize("clock", ["wall", "cpu"])
def test_the_cpu_clock_does_not_charge_a_bot_for_waiting(boxes: None, tmp_path: Path,
                                                         clock: str) -> None:
    """A bot that sleeps 0.2 s per decision: over its 0.05 s on the wall clock (a
    timeout at once), far under it in CPU time (a whole game without a fault)."""
    async def main() -> None:
        async with Arena(log_dir=tmp_path / "logs") as arena:
            add(arena, "sleepy", boxed(box_bot_folder(tmp_path), "box_bot.py",
                                       env={"BOX_BOT_MODE": "sleep", "BOX_BOT_SLEEP": "0.2"}))
            add(arena, "other", boxed(random_bot_folder(tmp_path / "rb"), "random_bot.py"))
            tc = TimeControl(0.05, 0.0, clock)
            result = await arena.play("g1", RulesConfig(form=Form.TWO_HANDED, target=3), 1,
                                      ["sleepy", "other"], time_control=tc)
            if clock == "wall":
                assert [f.kind for f in result.faults] == [FaultKind.TIMEOUT]
            else:
                assert result.termination is Termination.NORMAL and result.faults == ()
                assert all(0 <= ms < 50 for ms in result.record["decision_ms"])
    asyncio.run(main())


def test_the_cpu_clock_charges_what_a_bot_computes_between_its_decisions(
        boxes: None, tmp_path: Path) -> None:
    """A bot that computes while the others play (after each reply a thread of its burns
    1 s of CPU, all of it before its next reply; its opponent here sleeps 1 s a decision,
    time in which the burning is mostly done) is charged that CPU at its next decision:
    from its last reply, not from the request. Free, it would be more computing than its
    0.3 s budget, and on the CPU the boxes share, taken from the others. (On a machine so
    loaded that the box gets under a seventh of a CPU, the wall limit of 4 x 0.3 + 1 s
    may cut the decision first: a timeout too.)"""
    async def main() -> None:
        async with Arena(log_dir=tmp_path / "logs") as arena:
            add(arena, "ponder", boxed(box_bot_folder(tmp_path), "box_bot.py",
                                       env={"BOX_BOT_MODE": "ponder", "BOX_BOT_SLEEP": "1"}))
            add(arena, "slow", boxed(box_bot_folder(tmp_path / "slow"), "box_bot.py",
                                     env={"BOX_BOT_MODE": "sleep", "BOX_BOT_SLEEP": "1"}))
            tc = TimeControl(0.3, 0.0, "cpu")
            result = await arena.play("g1", RulesConfig(form=Form.TWO_HANDED, target=1), 1,
                                      ["ponder", "slow"], time_control=tc)
            assert result.termination is Termination.FORFEIT, result.record["decision_ms"]
            (fault,) = result.faults
            assert (fault.bot, fault.kind) == ("ponder", FaultKind.TIMEOUT)
            assert ("of CPU since its last reply" in fault.detail
                    or "no reply within 2.200s" in fault.detail), fault.detail
    asyncio.run(main())


def test_a_box_computing_between_its_turns_takes_no_cpu_from_the_bot_whose_turn_it_is(
        boxes: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On the wall clock, a bot whose thread spins all game long shares one CPU with a
    bot that computes 0.15 s at each decision. Between its turns the spinner's box rests at
    the lowest CPU weight, so while the worker computes it gets almost none of that CPU.

    Both boxes' CPU time is sampled from their cgroups every few milliseconds. Counted
    over the stretches inside the worker's turns in which the worker computed (used at
    least a tenth of the stretch), and so did it in the stretches before and after (not
    those in which its computing began or ended, which also hold the request's or the
    reply's transit, when the spinner rightly runs), the spinner gets under a fifth of
    the worker's CPU; with equal weights it gets about as much. Both boxes are on the same
    one CPU, so a load from outside slows both alike: the ratio holds however loaded the
    machine."""
    limits = BoxLimits(cpuset=(max(os.sched_getaffinity(0)),))
    procs: dict[str, BoxedBotProcess] = {}
    samples: list[tuple[float, int, int]] = []  # wall s, spinner's and worker's CPU ns
    opened: list[int] = []
    turns: list[tuple[int, int]] = []  # the worker's turns, as indices into samples
    done = threading.Event()
    original = BoxedBotProcess.turn

    def turn(self: BoxedBotProcess, on: bool) -> None:
        procs[self.name] = self
        if self.name == "worker" and "spinner" in procs:  # both sampled from here on
            if on:
                opened.append(len(samples))
            elif opened:
                turns.append((opened.pop(), len(samples)))
        original(self, on)

    def cpu(name: str) -> int:
        proc = procs.get(name)
        return (proc.cpu_ns() or 0) if proc is not None else 0

    def sample() -> None:
        while not done.is_set():
            samples.append((time.monotonic(), cpu("spinner"), cpu("worker")))
            done.wait(0.005)

    monkeypatch.setattr(BoxedBotProcess, "turn", turn)

    async def main() -> None:
        async with Arena(log_dir=tmp_path / "logs") as arena:
            add(arena, "spinner", boxed(box_bot_folder(tmp_path), "box_bot.py", limits,
                                        env={"BOX_BOT_MODE": "spinner"}))
            add(arena, "worker", boxed(box_bot_folder(tmp_path / "w"), "box_bot.py", limits,
                                       env={"BOX_BOT_MODE": "work", "BOX_BOT_SLEEP": "0.15"}))
            result = await arena.play("g1", RulesConfig(form=Form.TWO_HANDED, target=2), 1,
                                      ["spinner", "worker"],
                                      time_control=TimeControl(30.0, 0.0))
            assert result.termination is Termination.NORMAL and result.faults == ()
            assert (first_process(arena, "spinner").cpu_ns() or 0) > 10**8  # it did spin

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        asyncio.run(main())
    finally:
        done.set()
        sampler.join()
    worker = spinner = 0
    for first, last in turns:
        stretches = [(samples[i + 1][0] - samples[i][0], samples[i + 1][1] - samples[i][1],
                      samples[i + 1][2] - samples[i][2]) for i in range(first, last - 1)]
        computed = [w >= 0.1 * dt * 1e9 for dt, _, w in stretches]
        for i in range(1, len(stretches) - 1):
            # Inside a run of stretches in which the worker computed: not the stretches in
            # which its computing began or ended, whatever else they held.
            if computed[i - 1] and computed[i] and computed[i + 1]:
                worker += stretches[i][2]
                spinner += stretches[i][1]
    assert len(turns) >= 8 and worker >= 2 * 10**8, (len(turns), worker)
    assert spinner < worker / 5, (spinner, worker)


def test_processes_a_bot_leaves_behind_die_with_its_box(boxes: None, tmp_path: Path) -> None:
    async def main() -> None:
        async with Arena(log_dir=tmp_path / "logs") as arena:
            add(arena, "leaver", boxed(box_bot_folder(tmp_path), "box_bot.py",
                                       env={"BOX_BOT_MODE": "leftover"}))
            add(arena, "plain", plain_random())
            result = await arena.play("g1", RulesConfig(form=Form.TWO_HANDED), 1,
                                      ["leaver", "plain"])
            (fault,) = result.faults
            assert fault.kind is FaultKind.CRASH
            proc = first_process(arena, "leaver")
            assert "leftover" in proc.log_path.read_text()  # the grandchild did start
            assert proc.box is not None and proc.box.group is not None
            group = proc.box.group
            deadline = time.monotonic() + 10
            while group.members() and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            assert group.members() == []  # the box is empty once its bot has exited
            folders = group.directories()
        assert not any(d.exists() for d in folders)  # and its cgroup is gone with the pool
    asyncio.run(main())


def test_a_box_gets_its_environment_off_every_command_line(boxes: None,
                                                          tmp_path: Path) -> None:
    # A bot's token is in its box's environment, and nowhere that another user of the
    # machine can read it: bubblewrap's command line (in ps, /proc/PID/cmdline) must not
    # hold it, nor any other process's.
    token = "bot-token-" + secrets.token_hex(24)
    files = bot_folder(tmp_path / "src")

    async def main() -> None:
        async with box.Box("environment", files, BoxLimits(), None) as boxed_:
            proc = await boxed_.start(["/bin/sh", "-c",
                                       'echo "seen $EUCHRE_BOT_TOKEN"; exec sleep 60'],
                                      {"EUCHRE_BOT_TOKEN": token})
            assert proc.stdout is not None
            line = await asyncio.wait_for(proc.stdout.readline(), 60)
            assert line.decode().strip() == f"seen {token}"
            readers = [cmdline.replace(b"\0", b" ")[:200]
                       for _, cmdline in every_process("cmdline") if token.encode() in cmdline]
            assert readers == []
    asyncio.run(main())


def test_builds_run_in_a_box_and_write_only_their_output(boxes: None, tmp_path: Path) -> None:
    files = bot_folder(tmp_path / "src")
    (files / "build.sh").write_text(
        "echo built > /out/bot && echo made /out/bot\n"
        "echo x > /bot/stray 2>/dev/null || echo cannot write /bot\n"
        "getent hosts example.org || echo no network\n")
    out = tmp_path / "out"
    log = tmp_path / "build.log"
    outcome = asyncio.run(run_build(files, ["/bin/sh", "build.sh"], BoxLimits(), CappedLog(log), 60,
                                    output=out))
    assert outcome.ok, (outcome, log.read_text())
    assert (out / "bot").read_text() == "built\n"
    assert not (files / "stray").exists()
    text = log.read_text()
    assert "cannot write /bot" in text and "no network" in text
    slow = asyncio.run(run_build(files, ["/bin/sleep", "60"], BoxLimits(), CappedLog(log), 0.5,
                                 output=out))
    assert (slow.ok, slow.timed_out) == (False, True) and "out of time" in slow.detail
    big = asyncio.run(run_build(files, [sys.executable, "-c", "b = bytearray(200 << 20)"],
                                BoxLimits(memory_mib=64), CappedLog(log), 60, output=out))
    assert (big.ok, big.oom) == (False, True)
    assert big.detail == "the build ran out of memory (memory limit 64 MiB)"


def test_a_build_that_writes_without_end_fills_only_its_capped_out(boxes: None,
                                                                 tmp_path: Path) -> None:
    # What a build writes to /out lands on a tmpfs of out_mib, copied to the disk when it
    # ends: writing until the disk is full stops at the cap, and a sparse file (holes
    # cost a tmpfs nothing, a copy would write them out) is not copied at all.
    files = bot_folder(tmp_path / "src")
    log = tmp_path / "build.log"
    limits = BoxLimits(out_mib=8)

    def build(script: str, out: Path) -> BuildOutcome:
        return asyncio.run(run_build(files, ["/bin/sh", "-c", script], limits,
                                     CappedLog(log), 60, output=out))

    fill = build("echo small > /out/first; cat /dev/zero > /out/fill", tmp_path / "fill")
    assert (fill.ok, fill.detail) == (False, "the build's output filled /out (at most 8 MiB)")
    assert not (tmp_path / "fill").exists()  # a failed build's output is not kept
    holes = build("truncate -s 1T /out/holes", tmp_path / "holes")
    assert (holes.ok, holes.detail) == (False, "the build's output filled /out (at most 8 MiB)")
    assert not (tmp_path / "holes").exists()
    made = build("mkdir /out/bin && echo x > /out/bin/x && chmod 4700 /out/bin/x "
                 "&& echo y > /out/y && chmod 666 /out/y && chmod 777 /out/bin "
                 "&& ln -s bin/x /out/link && ln -s /etc/passwd /out/host", tmp_path / "made")
    assert made.ok, (made, log.read_text())
    # On the host it belongs to the referee, readable by all, with no set-id bits and
    # nothing writable by others; links stay links, whatever they point at.
    x = tmp_path / "made" / "bin" / "x"
    assert x.read_text() == "x\n" and x.stat().st_mode & 0o7777 == 0o755
    assert (tmp_path / "made" / "y").stat().st_mode & 0o7777 == 0o644
    assert x.parent.stat().st_mode & 0o7777 == 0o755
    assert {p.lstat().st_uid for p in (tmp_path / "made").rglob("*")} == {os.getuid()}
    assert os.readlink(tmp_path / "made" / "link") == "bin/x"
    assert os.readlink(tmp_path / "made" / "host") == "/etc/passwd"
    assert [p for p in scratch.mount_points() if tmp_path in p.parents] == []
    # Folders and links take the disk too (a block each, at least): a tree of empty
    # folders that fits the tmpfs's file cap but would take over the cap on the disk
    # is not copied.
    folders = build("i=0; while [ $i -lt 2100 ]; do mkdir /out/d$i || exit 1; "
                    "i=$((i+1)); done", tmp_path / "folders")
    assert (folders.ok, folders.detail) == (
        False, "the build's output filled /out (at most 8 MiB)")
    assert not (tmp_path / "folders").exists()


def test_a_build_that_makes_files_without_end_stops_at_the_file_cap(
        boxes: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Empty files take no room but each takes an inode: /out holds at most MAX_FILES
    # (here 1,000), and the build that wants more fails with the same reason.
    monkeypatch.setattr(scratch, "MAX_FILES", 1000)
    files = bot_folder(tmp_path / "src")
    many = asyncio.run(run_build(files, ["/bin/sh", "-c", "i=0; while [ $i -lt 5000 ]; do "
                                         ": > /out/f$i || exit 1; i=$((i+1)); done"],
                                 BoxLimits(out_mib=8), CappedLog(tmp_path / "log"), 60,
                                 output=tmp_path / "out"))
    assert (many.ok, many.detail) == (False, "the build's output filled /out (at most 8 MiB)")
    assert not (tmp_path / "out").exists()


def test_a_build_whose_out_cannot_be_mounted_is_an_error_that_says_so(
        boxes: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Where the referee may not mount (no CAP_SYS_ADMIN) the build does not run with an
    # uncapped /out: run_build raises, and a ladder stores "build failed" with the reason
    # ("the build could not run: ...", harness/ladder/hosting.py).
    real = subprocess.run

    def no_mount(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        if argv[0] == "mount":
            return subprocess.CompletedProcess(argv, 32, "", "mount: permission denied")
        return real(argv, **kwargs)

    monkeypatch.setattr(subprocess, "run", no_mount)  # what scratch.py mounts with
    started: list[object] = []
    monkeypatch.setattr(box.Box, "start", lambda *args, **kwargs: started.append(args))
    files = bot_folder(tmp_path / "src")
    with pytest.raises(SandboxError) as refused:
        asyncio.run(run_build(files, ["/bin/true"], BoxLimits(), CappedLog(tmp_path / "log"),
                              60, output=tmp_path / "out"))
    assert str(refused.value).startswith("cannot mount the capped folder for a build's output")
    assert str(refused.value).endswith("mount: permission denied")
    assert started == [] and not (tmp_path / "out").exists()


def test_a_capped_out_left_mounted_by_a_killed_referee_is_swept_at_start(
        boxes: None, tmp_path: Path) -> None:
    files = BundleFiles(tmp_path / "uploads")
    left = files.tmp / "build-0123" / "out.capped"
    left.mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(left)], check=True)
    assert left.resolve() in scratch.mount_points()
    assert files.sweep_except([]) == [files.tmp / "build-0123"]
    assert left.resolve() not in scratch.mount_points()
    assert list(files.tmp.iterdir()) == []


def test_without_bubblewrap_a_boxed_bot_is_refused_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(box, "_tool", lambda name, fallback: None)
    box._machine.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable) as err:
            box.check_available()
        assert "bubblewrap" in str(err.value) and "\n" not in str(err.value)

        async def main() -> None:
            async with Arena(log_dir=tmp_path / "logs") as arena:
                with pytest.raises(SandboxUnavailable):  # never run unboxed instead
                    arena.add(Entrant("b", boxed(tmp_path, "x.py")), 1)
                assert "b" not in arena.pool.entrants
        asyncio.run(main())
    finally:
        box._machine.cache_clear()


def test_a_box_refuses_files_its_user_cannot_read(boxes: None, tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)

    async def main() -> None:
        async with Arena(log_dir=tmp_path / "logs") as arena:
            add(arena, "b", boxed(private, "random_bot.py"))
            add(arena, "plain", plain_random())
            result = await arena.play("g1", RulesConfig(form=Form.TWO_HANDED), 1, ["b", "plain"])
            (fault,) = result.faults
            assert fault.kind is FaultKind.STARTUP_FAILURE and "every user may read" in \
                fault.detail
    asyncio.run(main())


def config_text(tmp_path: Path, bots: tuple[Bot, ...], clock: str | None = None,
                tc: str | None = None) -> Path:
    path = tmp_path / "t.toml"
    path.write_text(toml_config("t", bots=bots, clock=clock, tc=tc))
    return path


def in_box(name: str, more: str = "", *, cwd: str | None = None) -> Bot:
    """A [[bot]] with ``sandbox = true`` whose command is its name (never run), in the
    folder ``cwd`` (its name by default)."""
    folder = name if cwd is None else cwd
    return Bot(name, name, extra=f'cwd = "{folder}"\nsandbox = true\n{more}')


@pytest.mark.parametrize(("clock", "bots", "option", "fragment"), [
    (None, (Bot("a", "a", extra="sandbox = true"), Bot("b", "b")),
     "bot[0].cwd", "folder of its own"),
    (None, (in_box("a", cwd="."), in_box("b")), "bot[0].cwd", "tournament's file"),
    ("cpu", (in_box("a"), Bot("b", "b")), "bot[1].sandbox", "every bot needs"),
    (None, (in_box("a", "box_cpuset = [-1]"), Bot("b", "b")), "bot[0].box_cpuset",
     "CPU numbers"),
    (None, (in_box("a", "memory_mb = 100"), Bot("b", "b")), "bot[0].memory_mb",
     "box's limits"),
    ("sundial", (Bot("a", "a"), Bot("b", "b")), "clock", "wall, cpu"),
])
def test_sandbox_keys_are_checked(tmp_path: Path, clock: str | None, bots: tuple[Bot, ...],
                                  option: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as err:
        build_config(read_config(config_text(tmp_path, bots, clock)))
    assert err.value.option == option and fragment in err.value.message


def test_sandbox_keys_reach_the_box(tmp_path: Path) -> None:
    path = config_text(tmp_path, (in_box("a", "box_memory_mib = 100\nbox_pids = 10\n"
                                                "box_cpus = 0.5\nbox_cpuset = [1]\n"
                                                "box_tmp_mib = 8"),
                                  in_box("b")),
                       clock="cpu", tc="0.5+5")
    config = build_config(read_config(path))
    a, b = (bot.entrant().command for bot in config.bots)
    assert a is not None and b is not None
    assert a.sandbox == BoxLimits(memory_mib=100, pids=10, cpus=0.5, cpuset=(1,), tmp_mib=8)
    assert b.sandbox == BoxLimits()
    assert str(config.time_control) == "0.5+5/cpu"
    assert TimeControl.parse("0.5+5/cpu") == config.time_control


def test_match_runs_a_bot_in_a_box_on_the_cpu_clock(boxes: None, tmp_path: Path) -> None:
    folder = random_bot_folder(tmp_path / "rb")
    done = harness_command(
        "match", "--bot", "boxed={python} random_bot.py",
        "--bot", "plain={python} -m sample_bots.random_bot", "--box", f"boxed={folder}",
        "--form", "two-handed", "--games", "1", "--tc", "0.5+5/cpu",
        "--log-dir", str(tmp_path / "logs"), "--store", str(tmp_path / "matches.sqlite"),
        cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr
    assert "tc 0.5+5/cpu" in done.stderr and "normal" in done.stdout and "faults -" in done.stdout
    assert "--- start:" in (tmp_path / "logs" / "boxed-0.log").read_text()
    wrong = harness_command(
        "match", "--bot", "a={python} x.py", "--bot", "b={python} y.py", "--box",
        f"c={folder}", "--log-dir", str(tmp_path / "logs"),
        "--store", str(tmp_path / "matches.sqlite"), cwd=REPO_ROOT)
    assert wrong.returncode == 2 and "--box names no --bot: c" in wrong.stderr


def test_a_box_has_its_limits_pinned_cpus_and_a_cpu_quota(boxes: None, tmp_path: Path) -> None:
    """The cgroup holds the configured limits; the box runs only on its cpuset; a
    spinning box with half a core's quota gets at most half a core (plus a period)."""
    limits = BoxLimits(memory_mib=100, pids=20, cpus=0.5, cpuset=(0,))
    script = ("import os, time\nprint('cpus', sorted(os.sched_getaffinity(0)), flush=True)\n"
              "end = time.monotonic() + 1.0\nwhile time.monotonic() < end: pass\n")
    folder = bot_folder(tmp_path / "spin")
    (folder / "spin.py").write_text(script)
    (folder / "spin.py").chmod(0o644)

    async def main() -> tuple[int, float]:
        async with box.Box("limits", folder, limits, None) as b:
            started = time.monotonic()
            proc = await b.start([sys.executable, "spin.py"], {}, CappedLog(tmp_path / "log"))
            group = b.group
            assert group is not None
            files = {name: (d / name).read_text().strip() for d in group.directories()
                     for name in ("memory.limit_in_bytes", "memory.max", "pids.max",
                                  "cpuset.cpus") if (d / name).exists()}
            assert files.get("memory.limit_in_bytes", files.get("memory.max")) == \
                str(100 << 20)
            assert files["pids.max"] == "20" and files["cpuset.cpus"] == "0"
            assert await proc.wait() == 0
            return b.cpu_ns(), time.monotonic() - started
    cpu_ns, wall = asyncio.run(main())
    assert "cpus [0]" in (tmp_path / "log").read_text()
    assert cpu_ns / 1e9 <= 0.5 * wall + 0.1


def test_groups_left_by_a_killed_referee_are_swept(boxes: None) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    where = cgroups.hierarchy()
    stale = [d / f"box-{dead.pid}-0123456789ab" for d in where.directories()]
    live = cgroups.Group(where)  # this process's: kept
    for d in stale:
        d.mkdir()
    live.create(memory_bytes=64 << 20, pids=8, cpus=1.0, cpuset=None)
    try:
        cgroups.hierarchy()
        assert not any(d.exists() for d in stale)
        assert all(d.exists() for d in live.directories())
    finally:
        live.remove()


def test_the_boxes_weigh_as_many_processes_as_there_are_boxes(boxes: None) -> None:
    """Two boxes: their parent group has at least two ordinary processes' CPU weight, so
    that a busy machine does not starve boxed bots next to unboxed ones."""
    where = cgroups.hierarchy()
    two = [cgroups.Group(where), cgroups.Group(where)]
    try:
        for g in two:
            g.create(memory_bytes=64 << 20, pids=8, cpus=1.0, cpuset=None)
        parent = where.parents["cpu"]
        if where.version == 2:
            assert int((parent / "cpu.weight").read_text()) >= 200
        else:
            assert int((parent / "cpu.shares").read_text()) >= 2048
    finally:
        for g in two:
            g.remove()


def members(group: Path) -> list[str]:
    """The processes in a box's group. A referee that starts sweeps the groups of dead
    referees (another test's may do so at any moment), and it removes only empty ones:
    a group that is gone had none."""
    try:
        return (group / "cgroup.procs").read_text().split()
    except FileNotFoundError:
        return []


def test_a_box_dies_with_its_referee_even_a_killed_one(boxes: None, tmp_path: Path) -> None:
    folder = box_bot_folder(tmp_path)
    referee = subprocess.Popen(
        [sys.executable, "-m", "harness", "match", "--bot", "sleepy={python} box_bot.py sleep 60",
         "--bot", "plain={python} -m sample_bots.random_bot", "--box", f"sleepy={folder}",
         "--form", "two-handed", "--games", "1", "--tc", "120+0",
         "--log-dir", str(tmp_path / "logs"), "--store", str(tmp_path / "matches.sqlite")],
        cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=(tmp_path / "stderr").open("w"))
    try:
        parent = cgroups.hierarchy().parents["pids"]
        deadline = time.monotonic() + 60
        group: Path | None = None
        while time.monotonic() < deadline and referee.poll() is None:
            found = [d for d in parent.glob(f"box-{referee.pid}-*")
                     if len((d / "cgroup.procs").read_text().split()) >= 3]
            if found and "--- start" in (tmp_path / "logs" / "sleepy-0.log").read_text():
                group = found[0]
                break
            time.sleep(0.05)
        assert group is not None, (
            f"the boxed bot never started (the referee: exit code {referee.poll()}; "
            f"{(tmp_path / 'stderr').read_text()[-2000:]!r}; the bot's log: "
            f"{''.join(p.read_text()[-2000:] for p in (tmp_path / 'logs').glob('sleepy*'))!r})")
    finally:
        referee.kill()
        referee.wait()
    deadline = time.monotonic() + 20
    while members(group) and time.monotonic() < deadline:
        time.sleep(0.05)
    # On a loaded machine a box's process may (rarely) outlive its killed referee; the
    # next referee that starts kills it then, and removes the group.
    cgroups.hierarchy()
    assert members(group) == []
    assert not group.exists()


def test_the_next_referee_kills_what_a_dead_referees_box_left_and_removes_its_group(
        boxes: None) -> None:
    """A process left in the group of a box whose referee is gone (the rare case where
    one outlives a killed referee) is killed by the next referee's start, and the group
    removed. (The group's referee dies only once the process is in the group: a referee
    that another test starts meanwhile sweeps the groups of dead referees too.)"""
    referee = subprocess.Popen(["sleep", "600"])  # stands for the box's referee
    where = cgroups.hierarchy()
    group = cgroups.Group(where, name=f"box-{referee.pid}-{'ab' * 6}")
    group.create(memory_bytes=256 << 20, pids=16, cpus=1.0, cpuset=None)
    survivor = subprocess.Popen(["sleep", "600"])
    try:
        for procs in group.procs_files():
            procs.write_text(str(survivor.pid))
        assert str(survivor.pid) in members(group.paths["pids"])
        referee.kill()
        referee.wait()  # the referee is gone; the process in its box is not
        cgroups.hierarchy()  # a referee starts
        assert survivor.wait(timeout=30) == -signal.SIGKILL
        cgroups.hierarchy()  # (this test, its parent, reaps it only now)
        assert not any(d.exists() for d in group.directories())
    finally:
        for process in (referee, survivor):
            process.kill()
            process.wait()
        group.remove()


def test_hosted_bots_and_builds_are_kept_off_the_referees_cpu() -> None:
    """bench/sandbox.py part 4: a hostile box slows the games beside it several times
    over when it may run on the referee's CPU, and not at all when it may not."""
    from harness.hosting.build import BuildPolicy
    from harness.sandbox import spare_cpus

    cpus = sorted(os.sched_getaffinity(0))
    expected = tuple(cpus[1:]) if len(cpus) >= 2 else None
    assert spare_cpus() == expected
    policy = BuildPolicy()
    assert policy.bot_limits.cpuset == expected and policy.build_limits.cpuset == expected
