"""Perfect-information Monte Carlo (PIMC) for the play phase.

For one decision: draw worlds uniformly among those consistent with the observation
(:class:`~harness.sdk.search.worlds.WorldSampler`); in each, play out every legal card with
the heuristic rollout policy (:class:`~harness.sdk.search.rollout.PlayRollout`), the same
world for every card so that their comparison is paired; pick the card with the best
mean points for the observer's side.

The budget is a count of work, in play-phase rollouts, so that the choice depends only
on the observation and the random generator (a search is reproducible on any machine,
however busy). Every world tried is counted, the ones a filter refuses included. A
wall-clock deadline, if given, is only a safety net: it stops a search early on a
machine far too slow for the budget, and the result says so (``SearchResult.cut``).
"""

from __future__ import annotations

import dataclasses
import random
import time

from harness.rules import Action, Observation, Phase, RulesConfig
from harness.sdk.search.inference import BidFilter, Policy
from harness.sdk.search.rollout import PlayRollout
from harness.sdk.search.worlds import WorldSampler

INFER_COST = 10  # rollouts' worth of work to check one world against the bidding


@dataclasses.dataclass(frozen=True, slots=True)
class Budget:
    """At most ``rollouts`` units of work, one unit being one play-phase rollout (each
    search says what its other steps cost), and never past ``deadline``
    (``time.perf_counter`` seconds; ``None``: no deadline). At least one world is always
    searched."""

    rollouts: int
    deadline: float | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class SearchResult:
    """The chosen action, each legal action's mean value, the worlds searched, the worlds
    tried (searched or refused by a filter), the work spent and whether the deadline
    cut the search short (only then does the result depend on the machine's speed)."""

    action: Action
    values: dict[Action, float]
    worlds: int
    tried: int = 0
    spent: int = 0
    cut: bool = False


class Meter:
    """The work one search has spent against its :class:`Budget`."""

    def __init__(self, budget: Budget) -> None:
        self.limit = budget.rollouts
        self.deadline = budget.deadline
        self.spent = 0
        self.tried = 0
        self.cut = False

    def more(self, cost: int, worlds: int) -> bool:
        """Whether to try one more world whose whole search costs ``cost``: always until
        a world has been searched, then while it fits in the budget and the deadline has
        not passed."""
        if worlds == 0:
            return True
        if self.spent + cost > self.limit:
            return False
        if self.deadline is not None and time.perf_counter() > self.deadline:
            self.cut = True
            return False
        return True

    def result(self, legal: list[Action], totals: list[float], worlds: int) -> SearchResult:
        """The best action (:func:`best_of`) with this search's counts."""
        best = best_of(legal, totals, worlds)
        return dataclasses.replace(best, tried=self.tried, spent=self.spent, cut=self.cut)


def search_play(obs: Observation, config: RulesConfig, rng: random.Random,
                budget: Budget, policy: Policy | None = None) -> SearchResult:
    """PIMC over the legal cards of a play decision (see the module docstring). With a
    ``policy``, only worlds in which it explains the other seats' bids are searched
    (:class:`~harness.sdk.search.inference.BidFilter`); checking a world counts as
    ``INFER_COST`` rollouts of the budget."""
    legal = list(obs.legal_actions)
    if obs.phase is not Phase.PLAY or not legal:
        raise ValueError(f"search_play needs a play decision of the observing seat; the "
                         f"observation is in phase {obs.phase.value}")
    cards = [a.card.id for a in legal if a.card is not None]
    totals = [0.0] * len(legal)
    worlds = 0
    meter = Meter(budget)
    if len(legal) > 1:
        sampler = WorldSampler(obs, config)
        rollout = PlayRollout(obs, config)
        run = rollout.run
        keep = BidFilter(obs.seat, policy) if policy is not None else None
        check = INFER_COST if keep is not None else 0
        while meter.more(check + len(legal), worlds):
            world = sampler.sample(rng)
            meter.tried += 1
            meter.spent += check
            if keep is not None and not keep.accept(world):
                continue
            hands = [[c.id for c in h] for h in world.hands]
            for i, card in enumerate(cards):
                totals[i] += run([h[:] for h in hands], card)
            worlds += 1
            meter.spent += len(legal)
    return meter.result(legal, totals, worlds)


def best_of(legal: list[Action], totals: list[float], worlds: int) -> SearchResult:
    """The action with the best total (the first of equals), and every mean."""
    values = {a: t / max(worlds, 1) for a, t in zip(legal, totals, strict=True)}
    best = max(range(len(legal)), key=lambda i: (totals[i], -i))
    return SearchResult(legal[best], values, worlds)
