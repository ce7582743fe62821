"""The Python SDK as a bot author uses it: the bot's own command-line flags, the rules
reachable from ``choose``, and what a decision shows (the documented surprises)."""

from __future__ import annotations

import asyncio
import random
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from ports import unused_port
from sandbox_support import play_over_unix
from test_faults import ROOMY, TWO, arena, log_text, run

from harness.protocol import convert, messages
from harness.referee.outcome import Termination
from harness.referee.process import BotCommand
from harness.rules.actions import ActionKind
from harness.rules.config import RulesConfig
from harness.rules.game import Game
from harness.rules.hand import Phase
from harness.rules.observation import Observation
from harness.sdk import Bot, MessageHandler

REPO = Path(__file__).resolve().parent.parent

# A bot with a flag of its own, whose choose() reads the rules and its seat from self.
_OWN_FLAGS_BOT = """
import argparse, sys
from harness.sdk import Bot, run

class Picky(Bot):
    name = "picky"
    def __init__(self, level):
        self.level = level
    def choose(self, obs, legal):
        assert self.rules is not None and self.rules.form.value == "two-handed", self.rules
        assert self.seat == obs.seat and len(self.seat_names) == 2, self.seat
        return legal[min(self.level, len(legal) - 1)]

ap = argparse.ArgumentParser()
ap.add_argument("--level", type=int, required=True)
args, _ = ap.parse_known_args()
print(f"picky: level {args.level}", file=sys.stderr, flush=True)
run(Picky(args.level))
"""


def test_bot_keeps_its_own_flags_and_reads_the_rules_in_choose(tmp_path: Path) -> None:
    """A bot started with flags the SDK does not know plays (``run`` used to reject them
    and exit 2), and its ``choose`` finds the rules and its seat on ``self``."""
    picky = BotCommand((sys.executable, "-c", _OWN_FLAGS_BOT, "--level", "1"),
                       cwd=str(REPO))
    random_bot = BotCommand((sys.executable, "-m", "sample_bots.random_bot", "--verbose"),
                            cwd=str(REPO))

    async def go() -> None:
        async with arena(tmp_path, ("picky", picky, 1), ("random", random_bot, 1)) as a:
            r = await a.play("g1", TWO, 3, ["picky", "random"], time_control=ROOMY)
            assert r.termination is Termination.NORMAL, r.detail
            assert r.faults == ()
            assert "picky: level 1" in log_text(a, "picky")
    run(go())


def test_rules_and_seat_are_set_on_the_bot_before_on_game_start() -> None:
    seen: list[tuple[RulesConfig | None, int]] = []

    class Recorder(Bot):
        def on_game_start(self, rules: RulesConfig, seat: int, names: object) -> None:
            seen.append((self.rules, self.seat))

    bot = Recorder()
    assert bot.rules is None and bot.seat == -1
    msg = convert.rules_to_pb(TWO)
    MessageHandler(bot, None).handle(messages.game_start("g", msg, 1, ["a", "b"],
                                                   increment_ms=1000, bank_ms=0))
    assert seen == [(TWO, 1)]
    assert bot.rules == TWO and bot.seat == 1 and tuple(bot.seat_names) == ("a", "b")


# --------------------------------------------------------------------------- decisions


def sdk_observations(config: RulesConfig, seeds: range) -> Iterator[Observation]:
    """Every observation an SDK bot gets (through the protocol, both ways) in random
    games with these seeds."""
    for seed in seeds:
        game = Game(config, seed)
        rng = random.Random(seed)
        while game.outcome is None:
            seat = game.current
            assert seat is not None
            request = convert.decision_request_to_pb(1, game.observation(seat), 1000, 0)
            yield convert.observation_from_pb(request.observation, request.legal_actions)
            game.apply(rng.choice(game.legal_actions()))


def test_dealer_discard_hand_is_the_five_dealt_cards_without_the_upcard() -> None:
    checked = 0
    for obs in sdk_observations(RulesConfig(), range(40)):
        if obs.phase is Phase.DEALER_DISCARD:
            assert len(obs.hand) == 5 and obs.upcard not in obs.hand
            assert sorted(a.card.id for a in obs.legal_actions if a.card) == sorted(
                c.id for c in obs.hand)
            checked += 1
    assert checked > 5


@pytest.mark.parametrize("must_take", [False, True])
def test_pickup_decision_only_without_dealer_must_take(must_take: bool) -> None:
    phases = {obs.phase for obs in sdk_observations(RulesConfig(dealer_must_take=must_take),
                                                   range(40))}
    assert Phase.DEALER_DISCARD in phases
    assert (Phase.DEALER_PICKUP in phases) is not must_take


def test_public_actions_never_hold_a_discard() -> None:
    seen_discards = 0
    for obs in sdk_observations(RulesConfig(), range(40)):
        assert all(a.kind is not ActionKind.DISCARD for _, a in obs.public_actions)
        seen_discards += len(obs.discards)
    assert seen_discards > 0  # the bot's own discards are there, in obs.discards


def test_the_sdk_dials_a_unix_socket(tmp_path: Path) -> None:
    result, peers = asyncio.run(play_over_unix(
        tmp_path, (sys.executable, "-m", "sample_bots.random_bot")))
    assert result.termination is Termination.NORMAL and result.faults == ()
    assert peers[0].startswith("unix:") and peers[1].startswith("ipv")


def _unreachable_address() -> str:
    """A loopback port that nothing listens on."""
    return f"127.0.0.1:{unused_port()}"


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_a_bot_gives_up_on_an_unreachable_referee_after_the_time_it_is_given(
        how: str) -> None:
    """--give-up-after (or EUCHRE_GIVE_UP_AFTER) sets how long the SDK keeps reconnecting:
    with 1 s the bot exits with status 1 and says why, long before the 30 s default."""
    import os
    import subprocess
    argv = [sys.executable, "-m", "sample_bots.random_bot", "--address",
            _unreachable_address(), "--token", "t"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("EUCHRE_")}
    if how == "flag":
        argv += ["--give-up-after", "1"]
    else:
        env["EUCHRE_GIVE_UP_AFTER"] = "1"
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=25)  # the 30 s default would not end within this
    assert done.returncode == 1, done.stderr
    assert "connection failed" in done.stderr, done.stderr


def test_a_bad_give_up_time_is_refused_with_the_flag_named() -> None:
    import subprocess
    done = subprocess.run([sys.executable, "-m", "sample_bots.random_bot", "--address",
                           "127.0.0.1:1", "--give-up-after", "soon"], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "--give-up-after" in done.stderr and "'soon'" in done.stderr
