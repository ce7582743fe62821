"""A fault's parts are data from where it arises to where it is read: a start-up failure
keeps why the bot did not start (``detail``) apart from the end of its log
(``log_tail``) through the arena, the cluster's wire form and the store, so nobody
parses the harness's own messages back apart, and text a bot prints that looks like
those messages changes nothing."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from harness.cluster.worker import result_from_data, result_to_data
from harness.competition.seatings import ScheduledGame
from harness.referee.arena import Arena
from harness.referee.outcome import FaultKind, GameResult, Termination, TimeControl
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.results.rows import to_row
from harness.rules.config import Form, RulesConfig
from harness.storage.results import ResultsStore
from harness.tournament.runner import startup_failure_reason
from harness.web.replay import replay_view

REPO = Path(__file__).resolve().parent.parent
TWO = RulesConfig(form=Form.TWO_HANDED)
# What the bot prints before it exits: words shaped like the harness's own fault text,
# with a secret in them.
MIMIC = "oops-secret-41c7; its log x ends: startup_failure: seat 0 (b) forfeits: crash"
EXITS = BotCommand((sys.executable, "-c", f"import sys; print({MIMIC!r}); sys.exit(3)"))
RANDOM = BotCommand((sys.executable, "-m", "sample_bots.random_bot"), cwd=str(REPO))


def test_a_start_up_failure_keeps_its_log_tail_apart_everywhere(tmp_path: Path) -> None:
    async def play() -> tuple[GameResult, Path]:
        async with Arena(log_dir=tmp_path / "logs", startup_timeout=60.0) as arena:
            arena.add(Entrant("exits", EXITS), 1)
            arena.add(Entrant("random", RANDOM), 1)
            result = await arena.play("g1", TWO, 7, ["random", "exits"],
                                      time_control=TimeControl(5.0, 0.0))
            return result, arena.pool.log_dir / "exits-0.log"

    result, log = asyncio.run(asyncio.wait_for(play(), 120))
    assert result.termination is Termination.FORFEIT
    (fault,) = result.faults
    assert (fault.seat, fault.bot, fault.kind) == (1, "exits", FaultKind.STARTUP_FAILURE)
    assert fault.detail == "exited with code 3 before the handshake"
    assert fault.log_tail == f"its log {log} ends: {MIMIC}"
    # The game's detail is public: it says who forfeited and why, never the log's words.
    assert result.detail == ("seat 1 (exits) forfeits: startup_failure: exited with code "
                             "3 before the handshake")
    # What an operator is told is the two fields joined, exactly, whatever the bot printed.
    assert startup_failure_reason("exits", result) == (
        f"exited with code 3 before the handshake; its log {log} ends: {MIMIC}")

    # Through the cluster's wire form and the store, the fields arrive as they left.
    assert result_from_data(result_to_data(result)).faults == (fault,)
    game = ScheduledGame("g1", ("random", "exits"), 7, "g1", 0, (("random",), ("exits",)))
    with ResultsStore(tmp_path / "r.sqlite") as store:
        store.ensure_tournament("t", "t", {})
        assert store.record_game(to_row("t", game, result))
        (row,) = store.games("t")
    assert row.faults == (fault,)
    # The replay page (public) shows neither the log's words nor the secret in them.
    view = replay_view(row.record)
    assert "oops-secret-41c7" not in repr(view)
    assert view["faults"] == ["exits (seat 1): startup_failure: exited with code 3 before the "
                              "handshake"]
