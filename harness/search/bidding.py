"""Determinized search for the decisions before play: bids, the dealer's pickup and
discard, going alone, the cutthroat maker's dummy discards.

For each sampled world the hand is rebuilt on the engine (:meth:`World.to_hand`), each
legal action is applied, the rest of the bidding is played by a given policy (the
heuristic bot's, for every seat), and the play phase is rolled out with
:class:`~harness.search.rollout.PlayRollout`. The action with the best mean points for
the observer's side wins.

Worlds can be filtered by the policy (``infer=True``): a world is kept only if, dealt
that way, the policy would have made every bid the other seats made. This is exact
inference when the others play that policy, and a model of them otherwise; when too few
worlds pass, the search falls back to unfiltered worlds.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from harness.rules import Action, Hand, Observation, Phase, RulesConfig
from harness.rules.observation import observe
from harness.search.pimc import Budget, SearchResult
from harness.search.rollout import PlayRollout
from harness.search.worlds import World, WorldRejected, WorldSampler

Policy = Callable[[Observation], Action]
MAX_REJECTIONS = 20  # per world accepted, before inference is given up


def search_bid(obs: Observation, config: RulesConfig, rng: random.Random, budget: Budget,
               policy: Policy, infer: bool = True) -> SearchResult:
    """Determinized search over a decision before play (see the module docstring).
    ``budget.rollouts`` counts (world, action) play-outs."""
    legal = list(obs.legal_actions)
    if obs.phase in (Phase.PLAY, Phase.HAND_OVER) or not legal:
        raise ValueError(f"search_bid needs a decision before play by the observing seat; "
                         f"the observation is in phase {obs.phase.value}")
    sampler = WorldSampler(obs, config)
    totals = [0.0] * len(legal)
    worlds = 0
    rejected = 0
    seat = obs.seat

    def consistent(hand: Hand, who: int, action: Action) -> bool:
        return who == seat or policy(_observe(hand, who)) is action

    clock = time.perf_counter
    while (worlds + 1) * len(legal) <= budget.rollouts or worlds == 0:
        world = sampler.sample(rng)
        if infer and rejected <= MAX_REJECTIONS * (worlds + 1):
            try:
                world.to_hand(consistent)
            except WorldRejected:
                rejected += 1
                continue
        for i, action in enumerate(legal):
            totals[i] += playout(world, action, policy)
        worlds += 1
        if budget.deadline is not None and clock() > budget.deadline:
            break
    values = {a: t / worlds for a, t in zip(legal, totals, strict=True)}
    best = max(range(len(legal)), key=lambda i: (totals[i], -i))
    return SearchResult(legal[best], values, worlds)


def _observe(hand: Hand, seat: int) -> Observation:
    return observe(hand, seat, (0, 0, 0), 0)


def playout(world: World, action: Action, policy: Policy) -> float:
    """The observer's points (minus the mean of the other sides') when it plays
    ``action`` in ``world`` and everybody then follows ``policy``."""
    hand = world.to_hand()
    hand.apply(action)
    while hand.phase is not Phase.PLAY:
        if hand.result is not None:  # thrown in
            return 0.0
        hand.apply(policy(_observe(hand, hand.current)))  # type: ignore[arg-type]
    rollout = PlayRollout(_observe(hand, world.observation.seat), world.config)
    return rollout.run([[c.id for c in h] for h in hand.hands])
