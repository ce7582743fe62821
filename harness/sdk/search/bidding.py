"""Determinized search for the decisions before play: bids, the dealer's pickup and
discard, going alone, the cutthroat maker's dummy discards.

For each sampled world the hand is rebuilt on the engine (:meth:`World.to_hand`), each
legal action is applied, the rest of the bidding is played by a given policy (the
heuristic bot's, for every seat), and the play phase is rolled out with
:class:`~harness.sdk.search.rollout.PlayRollout`. The action with the best mean points for
the observer's side wins.

With ``infer=True`` worlds are kept only if, dealt that way, the policy would have made
every bid the other seats made (:class:`~harness.sdk.search.inference.BidFilter`).

Costs against the :class:`~harness.sdk.search.pimc.Budget`, in play-phase rollouts (measured
on the four-handed game; see ``bench/README.md``): a play-out from here replays the
bidding on the engine first, ``PLAYOUT_COST``; every world tried, refused or not, costs
``CHECK_COST`` for drawing it and replaying the bidding through the filter.
"""

from __future__ import annotations

import random

from harness.rules import Action, Observation, Phase, RulesConfig
from harness.sdk.search.inference import BidFilter, Policy, observe_any
from harness.sdk.search.pimc import Budget, Meter, SearchResult
from harness.sdk.search.rollout import PlayRollout
from harness.sdk.search.worlds import World, WorldSampler

PLAYOUT_COST = 5  # one (world, action) play-out, bidding replayed on the engine
CHECK_COST = 3  # drawing one world and checking it against the bidding


def search_bid(obs: Observation, config: RulesConfig, rng: random.Random, budget: Budget,
               policy: Policy, infer: bool = True) -> SearchResult:
    """Determinized search over a decision before play (see the module docstring and
    its costs)."""
    legal = list(obs.legal_actions)
    if obs.phase in (Phase.PLAY, Phase.HAND_OVER) or not legal:
        raise ValueError(f"search_bid needs a decision before play by the observing seat; "
                         f"the observation is in phase {obs.phase.value}")
    sampler = WorldSampler(obs, config)
    totals = [0.0] * len(legal)
    worlds = 0
    keep = BidFilter(obs.seat, policy) if infer else None
    meter = Meter(budget)
    check = CHECK_COST if keep is not None else 0
    search = PLAYOUT_COST * len(legal)
    while meter.more(check + search, worlds):
        world = sampler.sample(rng)
        meter.tried += 1
        meter.spent += check
        if keep is not None and not keep.accept(world):
            continue
        for i, action in enumerate(legal):
            totals[i] += playout(world, action, policy)
        worlds += 1
        meter.spent += search
    return meter.result(legal, totals, worlds)


def playout(world: World, action: Action, policy: Policy) -> float:
    """The observer's points (minus the mean of the other sides') when it plays
    ``action`` in ``world`` and everybody then follows ``policy``."""
    hand = world.to_hand()
    hand.apply(action)
    while hand.phase is not Phase.PLAY:
        if hand.result is not None:  # thrown in
            return 0.0
        hand.apply(policy(observe_any(hand, hand.current)))  # type: ignore[arg-type]
    rollout = PlayRollout(observe_any(hand, world.observation.seat), world.config)
    return rollout.run([[c.id for c in h] for h in hand.hands])
