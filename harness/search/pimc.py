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
from harness.search.inference import BidFilter, Policy
from harness.search.rollout import PlayRollout
from harness.search.worlds import WorldSampler

INFER_COST = 10  # rollouts' worth of work to check one world against the bidding


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
                budget: Budget, policy: Policy | None = None) -> SearchResult:
    """PIMC over the legal cards of a play decision (see the module docstring). With a
    ``policy``, only worlds in which it explains the other seats' bids are searched
    (:class:`~harness.search.inference.BidFilter`); checking a world counts as
    ``INFER_COST`` rollouts of the budget."""
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
        keep = BidFilter(obs.seat, policy) if policy is not None else None
        deadline = budget.deadline
        clock = time.perf_counter
        spent = 0
        while spent + len(legal) <= budget.rollouts or worlds == 0:
            world = sampler.sample(rng)
            if keep is not None:
                spent += INFER_COST
                if not keep.accept(world):
                    continue
            hands = [[c.id for c in h] for h in world.hands]
            for i, card in enumerate(cards):
                totals[i] += run([h[:] for h in hands], card)
            worlds += 1
            spent += len(legal)
            if deadline is not None and clock() > deadline:
                break
    return best_of(legal, totals, worlds)


def best_of(legal: list[Action], totals: list[float], worlds: int) -> SearchResult:
    """The action with the best total (the first of equals), and every mean."""
    values = {a: t / max(worlds, 1) for a, t in zip(legal, totals, strict=True)}
    best = max(range(len(legal)), key=lambda i: (totals[i], -i))
    return SearchResult(legal[best], values, worlds)
