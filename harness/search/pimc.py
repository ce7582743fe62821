"""Perfect-information Monte Carlo (PIMC) for the play phase.

For one decision: draw worlds uniformly among those consistent with the observation
(:class:`~harness.search.worlds.WorldSampler`); in each, play out every legal card with
the heuristic rollout policy (:class:`~harness.search.rollout.PlayRollout`), the same
world for every card so that their comparison is paired; pick the card with the best
mean points for the observer's side.

The budget is a number of rollouts, so that the choice depends only on the observation
and the random generator (a search is reproducible); a wall-clock deadline stops it
early if the machine is too slow to finish in time.
"""

from __future__ import annotations

import dataclasses
import random
import time

from harness.rules import Action, Observation, Phase, RulesConfig
from harness.search.rollout import PlayRollout
from harness.search.worlds import WorldSampler


@dataclasses.dataclass(frozen=True, slots=True)
class Budget:
    """At most ``rollouts`` rollouts, and never past ``deadline`` (``time.perf_counter``
    seconds; ``None``: no deadline)."""

    rollouts: int
    deadline: float | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class SearchResult:
    """The chosen action, each legal action's mean value and the worlds searched."""

    action: Action
    values: dict[Action, float]
    worlds: int


def search_play(obs: Observation, config: RulesConfig, rng: random.Random,
                budget: Budget) -> SearchResult:
    """PIMC over the legal cards of a play decision (see the module docstring)."""
    legal = list(obs.legal_actions)
    if obs.phase is not Phase.PLAY or not legal:
        raise ValueError(f"search_play needs a play decision of the observing seat; the "
                         f"observation is in phase {obs.phase.value}")
    cards = [a.card.id for a in legal if a.card is not None]
    totals = [0.0] * len(legal)
    worlds = 0
    if len(legal) > 1:
        sampler = WorldSampler(obs, config)
        rollout = PlayRollout(obs, config)
        run = rollout.run
        per_world = len(legal)
        deadline = budget.deadline
        clock = time.perf_counter
        while (worlds + 1) * per_world <= budget.rollouts or worlds == 0:
            hands = [[c.id for c in h] for h in sampler.sample(rng).hands]
            for i, card in enumerate(cards):
                totals[i] += run([h[:] for h in hands], card)
            worlds += 1
            if deadline is not None and clock() > deadline:
                break
    values = {a: t / max(worlds, 1) for a, t in zip(legal, totals, strict=True)}
    best = max(range(len(legal)), key=lambda i: (totals[i], -i))
    return SearchResult(legal[best], values, worlds)
