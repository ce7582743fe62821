"""Bot log files are capped, keeping the start and the end of a bot's output."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from harness.referee.arena import Arena
from harness.referee.botlog import CappedLog
from harness.referee.outcome import Termination
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.rules.config import Form, RulesConfig

ROOT = Path(__file__).resolve().parent.parent
TWO = RulesConfig(form=Form.TWO_HANDED, target=3)

# A bot that writes about 3 MB before it plays, and 100 kB more as it exits.
CHATTY = (
    "import atexit, sys\n"
    "print('FIRST-LINE-OF-OUTPUT', flush=True)\n"
    "for i in range(30000):\n"
    "    sys.stdout.write(f'line {i:06d} ' + 'x' * 90 + '\\n')\n"
    "sys.stdout.flush()\n"
    "import signal\n"
    "def bye():\n"
    "    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a stop while it writes its end\n"
    "    for i in range(1000):\n"
    "        sys.stderr.write(f'late {i:06d} ' + 'y' * 90 + '\\n')\n"
    "    sys.stderr.write('LAST-LINE-OF-OUTPUT\\n')\n"
    "    sys.stderr.flush()\n"
    "atexit.register(bye)\n"
    "signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))\n"
    "import asyncio, os\n"
    "from harness.sdk import run_async\n"
    "from sample_bots.random_bot import RandomBot\n"
    # run_async, not the SDK's main: that one takes SIGTERM over (a quiet, orderly exit),
    # while this bot must start its last words the moment it is told to stop
    "asyncio.run(run_async(RandomBot(), os.environ['EUCHRE_REFEREE_ADDRESS'],\n"
    "                      os.environ['EUCHRE_BOT_TOKEN']))\n"
)


def test_a_bot_that_writes_a_lot_gets_a_capped_log_with_its_start_and_end(
        tmp_path: Path) -> None:
    limit = 256 * 1024
    command = BotCommand((sys.executable, "-c", CHATTY), cwd=str(ROOT), log_limit=limit)
    random = BotCommand((sys.executable, "-m", "sample_bots.random_bot"), cwd=str(ROOT))

    async def go() -> Path:
        async with Arena(log_dir=tmp_path, startup_timeout=60) as arena:
            arena.add(Entrant("chatty", command), 1)
            arena.add(Entrant("random", random), 1)
            result = await arena.play("g1", TWO, 5, ["chatty", "random"])
            assert result.termination is Termination.NORMAL, result.detail
            proc = arena.pool.instances("chatty")[0].process
            assert proc is not None
            return proc.log_path

    log_path = asyncio.run(go())
    data = log_path.read_bytes()
    assert len(data) <= limit + 1024  # the bot wrote about 3 MB
    assert data.startswith(b"--- start: ")
    assert b"FIRST-LINE-OF-OUTPUT" in data[:1024]
    assert data.rstrip().endswith(b"LAST-LINE-OF-OUTPUT")
    assert b"bytes left out here] ---" in data


def test_a_capped_log_keeps_head_and_recent_tail_and_counts_what_it_left_out(
        tmp_path: Path) -> None:
    path = tmp_path / "bot.log"
    log = CappedLog(path, limit=8192)
    chunks = [f"{i:05d}".encode() * 20 + b"\n" for i in range(1000)]  # 101 bytes each
    for chunk in chunks:
        log.write(chunk)
    log.close()
    data = path.read_bytes()
    total = sum(map(len, chunks))
    assert len(data) <= 8192 + 100
    assert data[:4096] == b"".join(chunks)[:4096]
    assert data.endswith(b"".join(chunks[-20:]))  # the last 2 KB at least
    head, _, rest = data.partition(b"\n--- [bot log capped: ")
    omitted = int(rest.split(b" ", 1)[0])
    kept_tail = rest.split(b"] ---\n", 1)[1]
    assert len(head) + omitted + len(kept_tail) == total


def test_a_restarted_bot_appends_to_its_capped_log_without_passing_the_cap(
        tmp_path: Path) -> None:
    path = tmp_path / "bot.log"
    for run in range(3):
        log = CappedLog(path, limit=8192)
        for i in range(300):
            log.write(f"run {run} line {i:04d} ".encode() + b"z" * 80 + b"\n")
        log.close()
    data = path.read_bytes()
    assert len(data) <= 8192 + 2 * 100
    assert data.startswith(b"run 0 line 0000 ")
    assert data.endswith(b"run 2 line 0299 " + b"z" * 80 + b"\n")


def test_a_log_limit_below_the_minimum_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least"):
        CappedLog(tmp_path / "bot.log", limit=100)


def test_one_write_larger_than_the_cap_still_leaves_the_log_within_it(tmp_path: Path) -> None:
    path = tmp_path / "bot.log"
    log = CappedLog(path, limit=8192)
    blob = b"".join(f"{i:07d}\n".encode() for i in range(12_500))  # 100 kB in one write
    log.write(blob)
    log.close()
    data = path.read_bytes()
    assert len(data) <= 8192 + 100  # the cap and one marker line
    assert data[:4096] == blob[:4096]
    assert data.endswith(blob[-2048:])
