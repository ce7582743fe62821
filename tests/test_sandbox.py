"""Boxed bots (harness.sandbox) in real boxes: bubblewrap, cgroups, the referee's Unix
socket. Each limit of a box ends as the fault the docs promise, and nothing of a box is
left when it ends. (The attacks of a hostile bot: tests/test_sandbox_escape.py.)"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest
from sandbox_support import TESTS, add, bot_folder, boxed, random_bot_folder, require_boxes

from harness.errors import ConfigError, SandboxUnavailable
from harness.referee.arena import Arena
from harness.referee.outcome import FaultKind, TimeControl, Termination
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.rules import RulesConfig
from harness.sandbox import BoxLimits, box, run_build
from harness.sandbox.bots import BoxedBotProcess
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
            result = await arena.play("g1", RulesConfig(form="two-handed"), 1, ["hog", "plain"])
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
            result = await arena.play("g1", RulesConfig(form="two-handed"), 1,
                                      ["spin", "other"], time_control=tc)
            assert result.termination is Termination.FORFEIT
            (fault,) = result.faults
            assert (fault.bot, fault.kind) == ("spin", FaultKind.TIMEOUT)
            if clock == "cpu":
                assert "of CPU" in fault.detail
                assert result.record["time_control"] == "0.3+0/cpu"
    asyncio.run(main())


@pytest.mark.parametrize("clock", ["wall", "cpu"])
def test_the_cpu_clock_does_not_charge_a_bot_for_waiting(boxes: None, tmp_path: Path,
                                                         clock: str) -> None:
    """A bot that sleeps 0.1 s per decision: over its 0.02 s on the wall clock (a
    timeout at once), far under it in CPU time (a whole game without a fault)."""
    async def main() -> None:
        async with Arena(log_dir=tmp_path / "logs") as arena:
            add(arena, "sleepy", boxed(box_bot_folder(tmp_path), "box_bot.py",
                                       env={"BOX_BOT_MODE": "sleep", "BOX_BOT_SLEEP": "0.1"}))
            add(arena, "other", boxed(random_bot_folder(tmp_path / "rb"), "random_bot.py"))
            tc = TimeControl(0.02, 0.0, clock)
            result = await arena.play("g1", RulesConfig(form="two-handed", target=3), 1,
                                      ["sleepy", "other"], time_control=tc)
            if clock == "wall":
                assert [f.kind for f in result.faults] == [FaultKind.TIMEOUT]
            else:
                assert result.termination is Termination.NORMAL and result.faults == ()
                assert all(0 <= ms < 20 for ms in result.record["decision_ms"])
    asyncio.run(main())


def test_processes_a_bot_leaves_behind_die_with_its_box(boxes: None, tmp_path: Path) -> None:
    async def main() -> None:
        async with Arena(log_dir=tmp_path / "logs") as arena:
            add(arena, "leaver", boxed(box_bot_folder(tmp_path), "box_bot.py",
                                       env={"BOX_BOT_MODE": "leftover"}))
            add(arena, "plain", plain_random())
            result = await arena.play("g1", RulesConfig(form="two-handed"), 1,
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


def test_builds_run_in_a_box_and_write_only_their_output(boxes: None, tmp_path: Path) -> None:
    files = bot_folder(tmp_path / "src")
    (files / "build.sh").write_text(
        "echo built > /out/bot && echo made /out/bot\n"
        "echo x > /bot/stray 2>/dev/null || echo cannot write /bot\n"
        "getent hosts example.org || echo no network\n")
    out = tmp_path / "out"
    log = tmp_path / "build.log"
    outcome = asyncio.run(run_build(files, ["/bin/sh", "build.sh"], BoxLimits(), log, 60,
                                    output=out))
    assert outcome.ok, (outcome, log.read_text())
    assert (out / "bot").read_text() == "built\n"
    assert not (files / "stray").exists()
    text = log.read_text()
    assert "cannot write /bot" in text and "no network" in text
    slow = asyncio.run(run_build(files, ["/bin/sleep", "60"], BoxLimits(), log, 0.5,
                                 output=out))
    assert (slow.ok, slow.timed_out) == (False, True) and "out of time" in slow.detail


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
            result = await arena.play("g1", RulesConfig(form="two-handed"), 1, ["b", "plain"])
            (fault,) = result.faults
            assert fault.kind is FaultKind.STARTUP_FAILURE and "every user may read" in \
                fault.detail
    asyncio.run(main())


def config_text(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "t.toml"
    path.write_text('name = "t"\n' + body)
    return path


@pytest.mark.parametrize(("body", "option", "fragment"), [
    ('[[bot]]\nname = "a"\ncommand = "a"\nsandbox = true\n[[bot]]\nname = "b"\n'
     'command = "b"\n', "bot[0].cwd", "folder of its own"),
    ('[[bot]]\nname = "a"\ncommand = "a"\ncwd = "."\nsandbox = true\n[[bot]]\nname = "b"\n'
     'command = "b"\ncwd = "b"\nsandbox = true\n', "bot[0].cwd", "tournament's file"),
    ('clock = "cpu"\n[[bot]]\nname = "a"\ncommand = "a"\ncwd = "a"\nsandbox = true\n'
     '[[bot]]\nname = "b"\ncommand = "b"\n', "bot[1].sandbox", "every bot needs"),
    ('[[bot]]\nname = "a"\ncommand = "a"\ncwd = "a"\nsandbox = true\nbox_cpuset = [-1]\n'
     '[[bot]]\nname = "b"\ncommand = "b"\n', "bot[0].box_cpuset", "CPU numbers"),
    ('clock = "sundial"\n[[bot]]\nname = "a"\ncommand = "a"\n[[bot]]\nname = "b"\n'
     'command = "b"\n', "clock", "wall, cpu"),
])
def test_sandbox_keys_are_checked(tmp_path: Path, body: str, option: str,
                                  fragment: str) -> None:
    with pytest.raises(ConfigError) as err:
        build_config(read_config(config_text(tmp_path, body)))
    assert err.value.option == option and fragment in err.value.message


def test_sandbox_keys_reach_the_box(tmp_path: Path) -> None:
    path = config_text(tmp_path, 'clock = "cpu"\ntc = "0.5+5"\n'
                       '[[bot]]\nname = "a"\ncommand = "a"\ncwd = "a"\nsandbox = true\n'
                       'box_memory_mib = 100\nbox_pids = 10\nbox_cpus = 0.5\nbox_cpuset = [1]\n'
                       'box_tmp_mib = 8\n'
                       '[[bot]]\nname = "b"\ncommand = "b"\ncwd = "b"\nsandbox = true\n')
    config = build_config(read_config(path))
    a, b = (bot.entrant().command for bot in config.bots)
    assert a is not None and b is not None
    assert a.sandbox == BoxLimits(memory_mib=100, pids=10, cpus=0.5, cpuset=(1,), tmp_mib=8)
    assert b.sandbox == BoxLimits()
    assert str(config.time_control) == "0.5+5/cpu"
    assert TimeControl.parse("0.5+5/cpu") == config.time_control
