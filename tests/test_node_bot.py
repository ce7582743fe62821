"""The Node.js sample bot (sample_bots/node/random_bot.js) against the real referee.

Real processes over real gRPC: an :class:`~harness.referee.arena.Arena` starts the
referee and the bots (the Node bot next to the Python random and heuristic bots) and plays
complete games in every form with every deck. The Node bot needs ``node`` on PATH and its
dependencies installed (``npm ci --prefix sample_bots/node``); without them these tests
fail rather than skip, so that CI cannot pass without exercising a non-Python bot.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest
from sandbox_support import play_over_unix

from harness.referee.arena import Arena
from harness.referee.outcome import GameResult, Termination
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.rules import DeckKind, Form, Game, RulesConfig

REPO_ROOT = Path(__file__).resolve().parent.parent
NODE_DIR = REPO_ROOT / "sample_bots" / "node"
NODE_BOT = NODE_DIR / "random_bot.js"
INSTALL_HINT = "run `npm ci --prefix sample_bots/node` (needs Node.js 18.3 or later)"


def require_node() -> str:
    """The node executable. Fails the test (never skips it) when the Node bot cannot run."""
    exe = shutil.which("node")
    if exe is None:
        pytest.fail(f"`node` is not on PATH: install Node.js, then {INSTALL_HINT}")
    if not (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir():
        pytest.fail(f"{NODE_DIR / 'node_modules'} is missing: {INSTALL_HINT}")
    return exe


def python_bot(module: str, seed: int) -> BotCommand:
    return BotCommand((sys.executable, "-m", f"sample_bots.{module}"), cwd=str(REPO_ROOT),
                      env={"EUCHRE_BOT_SEED": str(seed)})


# Seats per form: every game has the Node bot and a Python bot at the table. Four-handed,
# the Node bot holds one partnership (seats 0 and 2) against a random + heuristic one.
SEATS = {
    Form.FOUR_HANDED: ["node", "random", "node", "heuristic"],
    Form.TWO_HANDED: ["heuristic", "node"],
    Form.CUTTHROAT: ["random", "node", "heuristic"],
}
DECKS = [DeckKind.D24, DeckKind.D32, DeckKind.D25]


async def play_one(node: str, config: RulesConfig, seats: list[str], seed: int,
                   log_dir: Path) -> GameResult:
    async with Arena(log_dir=log_dir) as arena:
        node_cmd = BotCommand((node, str(NODE_BOT)), env={"EUCHRE_BOT_SEED": str(seed)})
        arena.add(Entrant("node", node_cmd), seats.count("node"))
        for module in ("random", "heuristic"):
            if module in seats:
                arena.add(Entrant(module, python_bot(f"{module}_bot", seed)),
                          seats.count(module))
        return await arena.play(f"node-{config.form.value}-{config.deck.value}", config,
                                seed=seed, seats=seats)


@pytest.mark.parametrize("deck", DECKS, ids=lambda d: f"deck{d.value}")
@pytest.mark.parametrize("form", list(SEATS), ids=lambda f: f.value)
def test_node_bot_plays_full_games(form: Form, deck: DeckKind, tmp_path: Path) -> None:
    node = require_node()
    # Full 10-point games: a game takes well under a second (bot start-up dominates), so a
    # shorter target would save nothing.
    target = 10
    config = RulesConfig(form=form, deck=deck, target=target)
    seats = SEATS[form]
    seed = 11 + DECKS.index(deck)
    result = asyncio.run(play_one(node, config, seats, seed, tmp_path))

    logs = "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-2000:]}"
                     for p in sorted(tmp_path.glob("*.log")))
    assert result.termination is Termination.NORMAL, f"{result.detail}\n{logs}"
    assert result.faults == (), f"{result.faults}\n{logs}"
    assert result.seats == tuple(seats)
    assert result.winner is not None
    assert result.scores[result.winner] >= target
    assert max(result.scores) == result.scores[result.winner]

    # The Node seats really played: they took actions in the recorded hands.
    node_seats = {s for s, name in enumerate(seats) if name == "node"}
    acted = {seat for hand in result.record["hands"] for seat, _ in hand["actions"]}
    assert node_seats <= acted

    # The stored record replays to the same game.
    replay = Game.from_record(result.record)
    assert tuple(replay.scores) == result.scores
    assert replay.outcome is not None
    assert replay.outcome.winner == result.winner
    assert tuple(replay.outcome.places) == result.places
    assert len(replay.hands) == result.hands


def test_node_bot_seed_makes_games_reproducible(tmp_path: Path) -> None:
    node = require_node()
    # EUCHRE_BOT_SEED fixes the Node bot's choices (and the Python random bot's): the same
    # deal seed and bot seeds give the same game, action for action.
    config = RulesConfig(form=Form.FOUR_HANDED, deck=DeckKind.D25, target=5)
    seats = ["node", "random", "node", "random"]
    first, second = (asyncio.run(play_one(node, config, seats, 5, tmp_path / run))
                     for run in ("a", "b"))
    assert first.termination is second.termination is Termination.NORMAL
    assert first.record["hands"] == second.record["hands"]
    assert first.scores == second.scores


def test_node_bot_dials_a_unix_socket(tmp_path: Path) -> None:
    result, peers = asyncio.run(play_over_unix(tmp_path, (require_node(), str(NODE_BOT))))
    assert result.termination is Termination.NORMAL and result.faults == ()
    assert peers[0].startswith("unix:") and peers[1].startswith("ipv")
