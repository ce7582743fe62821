"""Bots of a standing ladder outlive its restarts, and a bot stops quietly on a signal.

Real processes over real gRPC: ``euchre-harness ladder`` is stopped with SIGTERM (its
Shutdown says it is restarting) and started again on the same port and store; the same
Python and Node.js bot processes reconnect by themselves and play again. A connected
sample bot sent SIGINT or SIGTERM closes its stream and exits with 128 + the signal's
number, printing no traceback."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest
from ports import unused_port
from serve_support import REPO, Ladder, Started, end
from test_node_bot import NODE_BOT, require_node
from waiting import wait_for

# The bots wait for the restarted ladder as long as it takes to start on a busy machine.
PATIENT = ("--give-up-after", "600")


def _python_bot(folder: Path, address: str, token: str, name: str) -> Started:
    return Started([sys.executable, "-m", "sample_bots.random_bot", "--address", address,
                    "--token", token, *PATIENT], folder, name, env={"PYTHONPATH": str(REPO)})


def _node_bot(folder: Path, address: str, token: str, name: str) -> Started:
    return Started([require_node(), str(NODE_BOT), "--address", address, "--token", token,
                    *PATIENT], folder, name)


def _still_running(bots: list[Started]) -> None:
    for bot in bots:
        assert bot.proc.poll() is None, f"a bot exited ({bot.proc.returncode}): {bot.stderr}"


@pytest.mark.long
def test_bots_reconnect_and_play_again_after_a_ladder_is_stopped_and_restarted(
        tmp_path: Path) -> None:
    first = Ladder(tmp_path, name="restart-ladder", port=unused_port(),  # see tests/ports.py
                   house_only_with_visitors=True)
    second = None
    bots: list[Started] = []
    try:
        py_token, node_token = first.register("py-visitor"), first.register("node-visitor")
        bots = [*(_python_bot(tmp_path, first.address, py_token, f"py{i}") for i in range(2)),
                *(_node_bot(tmp_path, first.address, node_token, f"node{i}") for i in range(2))]

        def played() -> tuple[int, int]:
            return first.sets_played("py-visitor"), first.sets_played("node-visitor")

        first.wait_for(lambda: min(played()) >= 1, "both visitors' first sets")
        assert first.stop(signal.SIGTERM) == 0, first.stderr
        before = played()
        _still_running(bots)

        second = Ladder(tmp_path, name="restart-ladder", port=first.port,
                        house_only_with_visitors=True)
        wait_for(lambda: (second.sets_played("py-visitor") > before[0]
                          and second.sets_played("node-visitor") > before[1])
                 or any(b.proc.poll() is not None for b in bots),
                 "both visitors to play again", proc=second.proc, log=second.log)
        _still_running(bots)
        assert second.stop(signal.SIGTERM) == 0, second.stderr
    finally:
        end([first, second, *bots])
    assert all("restarting" in bot.stderr for bot in bots)


def test_a_connected_bot_sent_sigint_or_sigterm_exits_quietly_with_128_plus_the_signal(
        tmp_path: Path) -> None:
    ladder = Ladder(tmp_path, name="signal-ladder", house_only_with_visitors=True)
    bots: list[Started] = []
    try:
        py_token, node_token = ladder.register("py-visitor"), ladder.register("node-visitor")
        bots = [*(_python_bot(tmp_path, ladder.address, py_token, f"py{i}") for i in range(2)),
                *(_node_bot(tmp_path, ladder.address, node_token, f"node{i}")
                  for i in range(2))]
        ladder.wait_for(lambda: min(ladder.sets_played("py-visitor"),
                                    ladder.sets_played("node-visitor")) >= 1,
                        "both visitors' first sets")
        _still_running(bots)
        sent = [signal.SIGINT, signal.SIGTERM] * 2
        statuses = [bot.stop(sig) for bot, sig in zip(bots, sent, strict=True)]
    finally:
        end([ladder, *bots])
    assert statuses == [128 + sig for sig in sent], [b.stderr for b in bots]
    for bot in bots:
        assert "Traceback" not in bot.stderr and "KeyboardInterrupt" not in bot.stderr, \
            bot.stderr

