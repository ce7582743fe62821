"""Local bot processes (limits, logs, clean-up) and remote bots that dial in with a token."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from ports import unused_port

import harness
from harness.referee.arena import Arena
from harness.referee.outcome import FaultKind, Termination
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.rules.config import Form, RulesConfig

ROOT = Path(__file__).resolve().parent.parent
RANDOM = (sys.executable, "-m", "sample_bots.random_bot")
TWO = RulesConfig(form=Form.TWO_HANDED, target=3)


def test_memory_limit_is_applied_to_a_local_bot(tmp_path: Path) -> None:
    async def go() -> None:
        async with Arena(log_dir=tmp_path, startup_timeout=10) as arena:
            # 8 MB of address space is far too little for a Python interpreter.
            arena.add(Entrant("starved", BotCommand(RANDOM, cwd=str(ROOT), memory_mb=8)), 1)
            arena.add(Entrant("roomy", BotCommand(RANDOM, cwd=str(ROOT), memory_mb=2048,
                                                  cpu_seconds=60)), 1)
            starved = await arena.play("g1", TWO, 1, ["starved", "roomy"])
            assert starved.termination is Termination.FORFEIT
            assert starved.faults[0].kind is FaultKind.STARTUP_FAILURE
            assert starved.faults[0].seat == 0
            assert "exited with code" in starved.faults[0].detail
            # A generous limit lets the bot start and play (its opponent is the starved
            # one again, which forfeits without playing).
            again = await arena.play("g2", TWO, 2, ["roomy", "starved"])
            assert [(f.bot, f.kind) for f in again.faults] == [
                ("starved", FaultKind.STARTUP_FAILURE)]
            roomy = arena.pool.instances("roomy")[0]
            assert roomy.slot.live and roomy.process is not None and roomy.process.alive
    asyncio.run(go())


def test_bot_processes_are_gone_after_the_arena_closes(tmp_path: Path) -> None:
    async def go() -> list[int]:
        async with Arena(log_dir=tmp_path) as arena:
            arena.add(Entrant("random", BotCommand(RANDOM, cwd=str(ROOT))), 2)
            result = await arena.play("g1", TWO, 3, ["random", "random"])
            assert result.termination is Termination.NORMAL
            pids = [i.process.pid for i in arena.pool.instances("random")
                    if i.process is not None and i.process.pid is not None]
        return pids

    pids = asyncio.run(go())
    assert len(pids) == 2
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        raise AssertionError(f"bot process {pid} outlived the arena")


def test_a_remote_bot_dials_in_with_its_token_and_plays(tmp_path: Path) -> None:
    async def go() -> None:
        async with Arena(log_dir=tmp_path, startup_timeout=20) as arena:
            arena.add(Entrant("remote", None, ("remote-token-1",)), 1)
            arena.add(Entrant("local", BotCommand(RANDOM, cwd=str(ROOT))), 1)
            env = {**os.environ, "EUCHRE_REFEREE_ADDRESS": arena.server.address,
                   "EUCHRE_BOT_TOKEN": "remote-token-1"}
            proc = await asyncio.create_subprocess_exec(
                *RANDOM, cwd=str(ROOT), env=env, stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL)
            try:
                result = await arena.play("g1", TWO, 4, ["remote", "local"])
                assert result.termination is Termination.NORMAL, result.detail
                assert result.faults == ()
                slot = arena.pool.instances("remote")[0].slot
                assert slot.remote and slot.games_played == 1
            finally:
                proc.kill()
                await proc.wait()
    asyncio.run(go())


def test_a_remote_bot_that_never_connects_forfeits_by_startup_failure(tmp_path: Path) -> None:
    async def go() -> None:
        async with Arena(log_dir=tmp_path, startup_timeout=60) as arena:
            arena.add(Entrant("ghost", None, ("ghost-token",)), 1)
            arena.add(Entrant("local", BotCommand(RANDOM, cwd=str(ROOT))), 1)
            # The local bot gets all the time it needs to start; the ghost only 0.5 s.
            await arena.pool.ready(arena.pool.instances("local")[0])
            arena.pool.startup_timeout = 0.5
            result = await arena.play("g1", TWO, 5, ["local", "ghost"])
            assert result.termination is Termination.FORFEIT
            assert (result.faults[0].seat, result.faults[0].kind) == (
                1, FaultKind.STARTUP_FAILURE)
            assert result.places == (1, 2)
    asyncio.run(go())


def test_the_sdk_retries_until_the_referee_is_up(tmp_path: Path) -> None:
    """A bot started before its referee keeps dialling (with backoff) and then plays."""

    port = unused_port()  # for the referee to bind once the bot is dialling

    async def go() -> None:
        env = {**os.environ, "EUCHRE_REFEREE_ADDRESS": f"127.0.0.1:{port}",
               "EUCHRE_BOT_TOKEN": "early-token"}
        proc = await asyncio.create_subprocess_exec(
            *RANDOM, cwd=str(ROOT), env=env, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE)
        try:
            await asyncio.sleep(1.0)  # the bot is already retrying
            assert proc.returncode is None
            async with Arena(log_dir=tmp_path, port=port, startup_timeout=20) as arena:
                arena.add(Entrant("early", None, ("early-token",)), 1)
                arena.add(Entrant("local", BotCommand(RANDOM, cwd=str(ROOT))), 1)
                result = await arena.play("g1", TWO, 6, ["early", "local"])
                assert result.termination is Termination.NORMAL, result.detail
            # The referee told it that it was shutting down: a clean exit.
            assert await asyncio.wait_for(proc.wait(), 10) == 0
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    asyncio.run(go())


def test_a_referee_error_interrupts_the_game_without_taking_the_arena_down(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.protocol import messages

    calls = {"n": 0}
    real = messages.decision_request_bytes  # what the runner builds each request with

    def flaky(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 5:
            raise RuntimeError("simulated referee bug")
        return real(*args, **kwargs)

    monkeypatch.setattr(messages, "decision_request_bytes", flaky)

    async def go() -> None:
        async with Arena(log_dir=tmp_path) as arena:
            arena.add(Entrant("random", BotCommand(RANDOM, cwd=str(ROOT))), 2)
            broken = await arena.play("g1", TWO, 7, ["random", "random"])
            assert broken.termination is Termination.INTERRUPTED
            assert "simulated referee bug" in broken.detail
            assert broken.faults == () and broken.winner is None
            fine = await arena.play("g2", TWO, 8, ["random", "random"])
            assert fine.termination is Termination.NORMAL
    asyncio.run(go())


def test_a_bot_given_its_token_on_the_command_line_never_has_it_in_its_log(
        tmp_path: Path) -> None:
    command = BotCommand((sys.executable, "-m", "sample_bots.random_bot", "--token", "{token}"),
                         cwd=str(ROOT))

    async def go() -> tuple[str, Termination]:
        async with Arena(log_dir=tmp_path) as arena:
            arena.add(Entrant("a", command), 1)
            arena.add(Entrant("b", command), 1)
            result = await arena.play("g1", RulesConfig(form=Form.TWO_HANDED, target=1), 3,
                                      ["a", "b"])
            tokens = [inst.slot.token for name in ("a", "b") for inst in arena.pool.instances(name)]
            assert all(tokens)
            return "\n".join(tokens), result.termination

    tokens, termination = asyncio.run(go())
    assert termination is Termination.NORMAL  # the bots did get their tokens
    logs = "".join(p.read_text() for p in tmp_path.glob("*.log"))
    assert "--token '{token}'" in logs  # shell-quoted as the log shows it
    assert not any(t in logs for t in tokens.splitlines())


def test_a_local_bot_never_gets_the_operators_token_from_the_referees_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The operator's token in the referee's environment (as the docs suggest, rather than
    # a flag) would give every bot it starts every operator call.
    secret = "operator-" + os.urandom(16).hex()
    monkeypatch.setenv("EUCHRE_OPERATOR_TOKEN", secret)
    shows = (sys.executable, "-c",
             "import os, runpy, sys; print('operator token:', "
             "os.environ.get('EUCHRE_OPERATOR_TOKEN'), flush=True); "
             "sys.argv = ['random_bot']; runpy.run_module('sample_bots.random_bot', "
             "run_name='__main__')")

    async def go() -> Termination:
        async with Arena(log_dir=tmp_path) as arena:
            arena.add(Entrant("a", BotCommand(shows, cwd=str(ROOT))), 1)
            arena.add(Entrant("b", BotCommand(RANDOM, cwd=str(ROOT))), 1)
            result = await arena.play("g1", RulesConfig(form=Form.TWO_HANDED, target=1), 3,
                                      ["a", "b"])
            return result.termination

    assert asyncio.run(go()) is Termination.NORMAL
    logs = "".join(p.read_text() for p in tmp_path.glob("*.log"))
    assert "operator token: None" in logs
    assert secret not in logs
    # Nor does a Dask worker the harness starts (its bots inherit its environment).
    assert "EUCHRE_OPERATOR_TOKEN" not in harness.importable_env()
