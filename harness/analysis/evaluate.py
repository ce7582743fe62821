"""Valuing every legal action of a decision by search, from the deciding seat's view.

For a decision of a stored game, the seat's observation (what the referee showed it, no
more) is searched as the project's search bot searches (:mod:`harness.sdk.search`): hidden
worlds drawn uniformly among those consistent with the observation, each legal action
played out in the same worlds, everybody then playing the heuristic bot's policy. Card
play uses :func:`~harness.sdk.search.pimc.search_play`; every decision before play uses
:func:`~harness.sdk.search.bidding.search_bid` (worlds kept only if the heuristic bot would
have bid as the other seats did). An action's value is the mean points of the hand for
the seat's side minus the mean of the other sides' (a hand score, not a game score).

The budget is a fixed number of rollouts, and the random generator is seeded from the
analysis seed, the game and the decision's index, so an analysis is reproducible. The
loss of the chosen action is the best value minus its value; above ``threshold`` the
decision is flagged a mistake. Decisions with a single legal action are not analysed.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from harness.errors import InconsistentObservation
from harness.rules import Action, Game, Observation, Phase, RulesConfig, parse_cards
from harness.sdk.search.bidding import search_bid
from harness.sdk.search.pimc import Budget, search_play

# The phases the per-bot table splits decisions by.
PHASE_GROUPS = ("bidding", "going alone", "discard", "lead", "follow")
DEFAULT_ROLLOUTS = 400
DEFAULT_THRESHOLD = 0.25

Policy = Callable[[Observation], Action]


def phase_group(obs: Observation) -> str:
    phase = obs.phase
    if phase is Phase.PLAY:
        return "follow" if obs.current_trick else "lead"
    if phase is Phase.GO_ALONE:
        return "going alone"
    if phase in (Phase.DEALER_DISCARD, Phase.DUMMY_DISCARD):
        return "discard"
    return "bidding"


@dataclasses.dataclass(frozen=True, slots=True)
class DecisionAnalysis:
    """One analysed decision. ``values`` holds each legal action's expected points."""

    index: int  # the decision's index in the game (0 = the first action)
    hand: int
    seat: int
    bot: str
    phase: str  # one of PHASE_GROUPS
    chosen: Action
    best: Action
    values: dict[Action, float]
    worlds: int
    loss: float
    mistake: bool

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "hand": self.hand, "seat": self.seat, "bot": self.bot,
                "phase": self.phase, "chosen": str(self.chosen), "best": str(self.best),
                "values": {str(a): round(v, 4) for a, v in self.values.items()},
                "worlds": self.worlds, "loss": round(self.loss, 4), "mistake": self.mistake}


@dataclasses.dataclass(frozen=True, slots=True)
class Analysis:
    """The settings of an analysis: rollouts per decision, seed, mistake threshold."""

    rollouts: int = DEFAULT_ROLLOUTS
    seed: int = 0
    threshold: float = DEFAULT_THRESHOLD

    def rng(self, game_id: str, index: int) -> random.Random:
        return random.Random(f"analysis/{self.seed}/{game_id}/{index}")


def _heuristic() -> Policy:
    # The rollout policy is the heuristic sample bot's, as in the search bot.
    from sample_bots.heuristic_bot import HeuristicBot

    bot = HeuristicBot()

    def policy(obs: Observation) -> Action:
        return bot.decide_action(obs, obs.legal_actions)
    return policy


def action_values(obs: Observation, config: RulesConfig, rng: random.Random, rollouts: int,
                  policy: Policy | None = None) -> tuple[dict[Action, float], int]:
    """Each legal action's expected points for the observing seat, and the worlds
    searched."""
    budget = Budget(max(1, rollouts))
    if obs.phase is Phase.PLAY:
        result = search_play(obs, config, rng, budget)
    else:
        result = search_bid(obs, config, rng, budget, policy or _heuristic())
    return result.values, result.worlds


def analyze_position(game: Game, chosen: Action, analysis: Analysis, *, index: int = 0,
                     game_id: str = "", bot: str = "",
                     policy: Policy | None = None) -> DecisionAnalysis | None:
    """The analysis of the decision ``game`` is waiting for, ``chosen`` being the action
    taken; ``None`` if there was no choice (or no world fits the observation)."""
    seat = game.current
    assert seat is not None
    obs = game.observation(seat)
    if len(obs.legal_actions) < 2:
        return None
    try:
        values, worlds = action_values(obs, game.config, analysis.rng(game_id, index),
                                       analysis.rollouts, policy)
    except InconsistentObservation:
        return None
    best = max(obs.legal_actions, key=lambda a: values[a])  # the first of equals
    loss = values[best] - values[chosen]
    return DecisionAnalysis(index, len(game.hands) - 1, seat, bot or f"seat {seat}",
                            phase_group(obs), chosen, best, values, worlds, loss,
                            loss > analysis.threshold)


def analyze_record(record: Mapping[str, Any], analysis: Analysis, *,
                   only: Iterable[int] | None = None, bot: str | None = None,
                   policy: Policy | None = None) -> list[DecisionAnalysis]:
    """Analyse a game record's decisions: every one, those whose index is in ``only``,
    or those of the seats named ``bot``. The record is replayed on the engine."""
    config = RulesConfig.from_dict(record["rules"])
    hands = record["hands"]
    decks = [tuple(parse_cards(h["deck"])) for h in hands]
    game = Game(config, int(record.get("seed", 0)), first_dealer=int(record["first_dealer"]),
                decks=lambda i: decks[i])
    names = list(record.get("seats") or [f"seat {s}" for s in range(config.players)])
    game_id = str(record.get("game_id", ""))
    wanted = set(only) if only is not None else None
    policy = policy or _heuristic()
    out: list[DecisionAnalysis] = []
    index = 0
    for h in hands:
        for seat, text in h["actions"]:
            action = Action.parse(text)
            if (wanted is None or index in wanted) and (bot is None or names[seat] == bot):
                found = analyze_position(game, action, analysis, index=index,
                                         game_id=game_id, bot=names[seat], policy=policy)
                if found is not None:
                    out.append(found)
            game.apply(action)
            index += 1
    return out


def decisions_of(record: Mapping[str, Any], bot: str) -> list[int]:
    """The indices of the decisions the seats named ``bot`` took in a record."""
    names = list(record.get("seats") or [])
    out = []
    index = 0
    for h in record["hands"]:
        for seat, _ in h["actions"]:
            if seat < len(names) and names[seat] == bot:
                out.append(index)
            index += 1
    return out
