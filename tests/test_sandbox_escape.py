"""The escape suite: a hostile bot (tests/hostile_bot.py) in a real box tries to reach
the network, the referee's TCP port and other local ports, DNS, the results store, the
operator's token (environment and file), another bot's upload, other processes'
environments, files outside its /tmp; it fork-bombs, fills its /tmp, signals and traces
the referee, calls the operator service through its socket and leaves a process behind.
Every attempt must fail, and the bot's game must count normally: a box's faults are its
own. (Out of memory, CPU spin and leftovers after an exit: tests/test_sandbox.py.)
"""

from __future__ import annotations

import asyncio
import os
import re
import resource
import secrets
import socket
import sys
import threading
from pathlib import Path

import pytest
from sandbox_support import (
    REPO_ROOT,
    TESTS,
    add,
    bot_folder,
    boxed,
    every_process,
    require_boxes,
)

from harness.referee.arena import Arena
from harness.referee.boxed import BoxedBotProcess
from harness.referee.outcome import GameResult, Termination
from harness.referee.process import BotCommand
from harness.referee.server import FILES_KEPT, connection_cap
from harness.rules import Form, RulesConfig
from harness.sandbox import BoxLimits

pytestmark = pytest.mark.timeout(180)

LIMITS = BoxLimits(memory_mib=256, pids=64, tmp_mib=16)
ATTACKS = {"network", "dns", "environment", "proc-environ", "write-outside", "fork-bomb",
           "fill-tmp", "signal", "ptrace", "operator-service", "socket-flood"}
SOCKETS = 600  # idle connections the hostile bot opens to the referee's socket
FILE_LIMIT = 1024  # the referee's open-file limit while it plays: a cap of 170 connections


class Outcome:
    def __init__(self, result: GameResult, log: str, box_dirs: list[Path],
                 box_name: str, listener_hit: bool, most_files: int = 0) -> None:
        self.most_files = most_files  # the most files the referee had open at once
        self.cap = 0  # the connections the referee's socket takes at once
        self.result = result
        self.log = log
        self.box_dirs = box_dirs
        self.box_name = box_name
        self.listener_hit = listener_hit


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Outcome, str, Path]:
    require_boxes()
    root = tmp_path_factory.mktemp("escape")
    secret = "operator-" + secrets.token_hex(24)
    (root / "results").mkdir()
    store = root / "results" / "store.sqlite"
    store.write_text(f"stored games {secret}")
    token_file = root / "operator.token"
    token_file.write_text(secret)
    other = root / "uploads" / "other-bot"
    other.mkdir(parents=True)
    (other / "bot.py").write_text(f"# {secret}")
    for path in (store, token_file, other / "bot.py"):
        path.chmod(0o644)  # readable by every user on the machine: only the box stops it
    folder = bot_folder(root / "uploads" / "hostile", TESTS / "hostile_bot.py")
    old = os.environ.get("EUCHRE_OPERATOR_TOKEN")
    os.environ["EUCHRE_OPERATOR_TOKEN"] = secret  # in the referee's own environment
    # The referee (this process) and so the box play with the limit of open files at
    # FILE_LIMIT, so that the bot's flood of connections is more than the cap.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, FILE_LIMIT), hard))
    try:
        cap = connection_cap()
        outcome = asyncio.run(play(root, folder, [store, token_file, other / "bot.py"],
                                   [root, other, Path("/home"), Path("/sys/fs/cgroup")]))
        outcome.cap = cap
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        if old is None:
            del os.environ["EUCHRE_OPERATOR_TOKEN"]
        else:
            os.environ["EUCHRE_OPERATOR_TOKEN"] = old
    return outcome, secret, root


async def play(root: Path, folder: Path, files: list[Path], dirs: list[Path]) -> Outcome:
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    counting = threading.Event()
    most = [0]

    def count_files() -> None:  # the referee is this process: its open files, 20 a second
        while not counting.wait(0.05):
            most[0] = max(most[0], len(os.listdir("/proc/self/fd")))

    counter = threading.Thread(target=count_files, daemon=True)
    counter.start()
    try:
        # The attacks run before the bot connects: give it time on a crowded machine.
        async with Arena(log_dir=root / "logs", startup_timeout=90) as arena:
            env = {"HOSTILE_PORTS": os.pathsep.join([str(arena.server.port),
                                                     str(listener.getsockname()[1])]),
                   "HOSTILE_FILES": os.pathsep.join(map(str, files)),
                   "HOSTILE_DIRS": os.pathsep.join(map(str, dirs)),
                   "HOSTILE_ENV": "EUCHRE_OPERATOR_TOKEN",
                   "HOSTILE_PID": str(os.getpid()), "HOSTILE_FORKS": "500",
                   "HOSTILE_TMP_MIB": str(LIMITS.tmp_mib),
                   "HOSTILE_SOCKETS": str(SOCKETS)}
            add(arena, "hostile", boxed(folder, "hostile_bot.py", LIMITS, env))
            add(arena, "plain", BotCommand((sys.executable, "-m", "sample_bots.random_bot"),
                                           cwd=str(REPO_ROOT)))
            result = await arena.play("g1", RulesConfig(form=Form.TWO_HANDED, target=5), 1,
                                      ["hostile", "plain"])
            proc = arena.pool.instances("hostile")[0].process
            assert isinstance(proc, BoxedBotProcess) and proc.box is not None
            assert proc.box.group is not None
            dirs, name = proc.box.group.directories(), proc.box.group.name
            log_path = proc.log_path
        try:
            listener.accept()
            hit = True
        except BlockingIOError:
            hit = False
        counting.set()
        counter.join()
        return Outcome(result, log_path.read_text(), dirs, name, hit, most[0])
    finally:
        counting.set()
        listener.close()


def attacks(log: str) -> dict[str, str]:
    return dict(re.findall(r"^ATTACK (.+?): (.*)$", log, re.MULTILINE))


def test_every_attack_of_the_hostile_bot_is_blocked(
        hostile: tuple[Outcome, str, Path]) -> None:
    outcome, _, root = hostile
    assert "ATTACKS DONE" in outcome.log, outcome.log[-3000:]
    found = attacks(outcome.log)
    expected = ATTACKS | {f"tcp-{p}" for p in re.findall(r"^ATTACK tcp-(\d+):", outcome.log,
                                                          re.MULTILINE)}
    expected |= {f"read {p}" for p in (root / "results" / "store.sqlite",
                                       root / "operator.token",
                                       root / "uploads" / "other-bot" / "bot.py")}
    expected |= {f"list {p}" for p in (root, root / "uploads" / "other-bot", "/home",
                                       "/sys/fs/cgroup")}
    assert len([k for k in found if k.startswith("tcp-")]) == 2
    assert set(found) == expected
    opened = {k: v for k, v in found.items() if not v.startswith("blocked")}
    assert opened == {}
    assert not outcome.listener_hit  # nothing reached the other local port
    # The socket reached the referee, which offers the bot service only there.
    assert "StatusCode.UNIMPLEMENTED" in outcome.log.split("ATTACK operator-service:")[1]
    # It opened more idle connections to the referee's socket than the referee takes at
    # once; they were all closed (the attack is blocked), and the referee kept the open
    # files that its live page and bots need.
    flood = re.search(r"^socket flood: (\d+) connections$", outcome.log, re.MULTILINE)
    assert flood is not None and int(flood[1]) > outcome.cap, (outcome.log[-3000:],
                                                               outcome.cap)
    assert outcome.most_files <= FILE_LIMIT - FILES_KEPT, outcome.most_files
    # Its /proc shows its own PID namespace only: the box's keeper (PID 1, root) and
    # the bot's own processes, never the referee's.
    seen = re.search(r"^processes seen: \[(.*)\]$", outcome.log, re.MULTILINE)
    assert seen is not None and seen[1].startswith("1, ")
    assert str(os.getpid()) not in seen[1].split(", ")


def test_the_secret_never_reaches_the_box(hostile: tuple[Outcome, str, Path]) -> None:
    outcome, secret, _ = hostile
    assert secret not in outcome.log
    assert "EUCHRE_OPERATOR_TOKEN" not in outcome.log.split("environment: ", 1)[1].split(
        "\n", 1)[0]


def test_the_process_cap_and_the_tmp_cap_stopped_the_bot(
        hostile: tuple[Outcome, str, Path]) -> None:
    outcome, _, _ = hostile
    forked = re.search(r"^forked (\d+) processes$", outcome.log, re.MULTILINE)
    assert forked is not None and 0 < int(forked[1]) < LIMITS.pids
    filled = re.search(r"^filled /tmp with (\d+) MiB$", outcome.log, re.MULTILINE)
    assert filled is not None and int(filled[1]) <= LIMITS.tmp_mib


def test_the_hostile_bot_game_counts_and_nothing_of_its_box_is_left(
        hostile: tuple[Outcome, str, Path]) -> None:
    outcome, _, _ = hostile
    assert outcome.result.termination is Termination.NORMAL and outcome.result.faults == ()
    assert not any(d.exists() for d in outcome.box_dirs)
    survivors = [pid for pid, text in every_process("cgroup")
                 if outcome.box_name.encode() in text]
    assert survivors == []
