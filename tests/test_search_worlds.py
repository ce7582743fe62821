"""Hidden-world sampling: every world is consistent with the observation it was drawn
for, and worlds are drawn uniformly (checked against exact enumeration)."""

from __future__ import annotations

import collections
import math
import random
from collections.abc import Callable, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import InconsistentObservation
from harness.rules import Card, DeckKind, Form, Game, Observation, Phase, RulesConfig
from harness.rules.cards import effective_suit
from harness.rules.observation import observe
from harness.sdk.search.constraints import HolderKind
from harness.sdk.search.worlds import WorldSampler, sample_world

CONFIGS = [RulesConfig(form=f, deck=d, dealer_must_take=take) for f in Form
           for d in DeckKind for take in (False, True)]


def shown_voids(obs: Observation) -> dict[int, set[object]]:
    """The test's own reading of the voids: who failed to follow which led suit."""
    out: dict[int, set[object]] = collections.defaultdict(set)
    for plays in [*(t.plays for t in obs.tricks), obs.current_trick]:
        for seat, card in plays[1:]:
            led = effective_suit(plays[0][1], obs.trump)
            if effective_suit(card, obs.trump) is not led:
                out[seat].add(led)
    return out


def random_position(config: RulesConfig, seed: int, steps: int) -> Game:
    rng = random.Random(seed)
    game = Game(config, seed)
    for _ in range(steps):
        if game.outcome is not None:
            break
        game.apply(rng.choice(game.legal_actions()))
    return game


@settings(max_examples=120, deadline=None, derandomize=True)
@given(config=st.sampled_from(CONFIGS), seed=st.integers(0, 10_000),
       steps=st.integers(0, 80), seat=st.integers(0, 3), draw=st.integers(0, 1000))
def test_every_sampled_world_replays_to_the_same_observation(
        config: RulesConfig, seed: int, steps: int, seat: int, draw: int) -> None:
    game = random_position(config, seed, steps)
    seat %= config.players
    obs = game.observation(seat)
    world = sample_world(obs, config, random.Random(draw))
    hand = world.to_hand()
    assert observe(hand, seat, obs.scores, obs.hand_number) == obs
    assert sorted(world.deck()) == sorted(game.hand.deck)  # the same pack, once each
    for other, suits in shown_voids(obs).items():
        assert not any(effective_suit(c, obs.trump) in suits for c in world.hands[other])
    # Cards never seen by this seat stay hidden from it, wherever the world puts them:
    # only the seat's own cards and public ones are fixed.
    assert world.hands[seat] == obs.hand or not obs.hand
    assert world.kitty[0] is obs.upcard


def positions_with_voids(config: RulesConfig, tricks: int) -> Iterator[Observation]:
    """Observations of play positions after ``tricks`` tricks in which someone other
    than the observer has shown a void."""
    for seed in range(500):
        rng = random.Random(seed)
        game = Game(config, seed)
        while game.outcome is None and not (game.phase is Phase.PLAY
                                            and len(game.hand.tricks) == tricks):
            game.apply(rng.choice(game.legal_actions()))
        if game.outcome is not None or game.hand.alone:
            continue
        obs = game.observation(game.current)  # type: ignore[arg-type]
        if any(s != obs.seat for s in shown_voids(obs)):
            yield obs


def exact_distribution(obs: Observation, sampler: WorldSampler
                       ) -> tuple[int, dict[tuple[Card, int], int]]:
    """Enumerate every assignment of the unseen cards to the places (sizes from the
    sampler, voids from the test's own reading): the number of worlds, and for each
    (card, place) how many worlds put the card there."""
    holders = sampler.constraints.holders
    unseen = sampler.constraints.unseen
    void = shown_voids(obs)
    room = [h.free for h in holders]
    # The upcard is never unseen in these positions: a known card sits in its place.
    assert all(not h.known or h.kind is HolderKind.HAND for h in holders)
    counts: dict[tuple[Card, int], int] = collections.Counter()
    total = 0
    where: list[int] = []

    def fits(card: Card, i: int) -> bool:
        h = holders[i]
        return not (h.kind is HolderKind.HAND and h.seat is not None
                    and effective_suit(card, obs.trump) in void[h.seat])

    def go(k: int) -> None:
        nonlocal total
        if k == len(unseen):
            total += 1
            for card, i in zip(unseen, where, strict=True):
                counts[(card, i)] += 1
            return
        for i in range(len(holders)):
            if room[i] and fits(unseen[k], i):
                room[i] -= 1
                where.append(i)
                go(k + 1)
                where.pop()
                room[i] += 1

    go(0)
    return total, counts


SMALL_CASES = [RulesConfig(), RulesConfig(form=Form.CUTTHROAT),
               RulesConfig(form=Form.TWO_HANDED, deck=DeckKind.D25)]
Places = Callable[[random.Random], list[list[Card]]]


def worst_deviation(obs: Observation, sampler: WorldSampler, places: Places) -> float:
    """Over 3,000 draws of ``places``, the largest deviation, in standard errors, of a
    (card, place) frequency from its exact probability; infinite if a draw puts a card
    where no consistent world has it, or not where every consistent world has it."""
    total, exact = exact_distribution(obs, sampler)
    assert sampler.count == total
    rng = random.Random(5)
    n = 3000
    seen: dict[tuple[Card, int], int] = collections.Counter()
    for _ in range(n):
        for i, cards in enumerate(places(rng)):
            for card in cards:
                seen[(card, i)] += 1
    worst = 0.0
    for key in set(exact) | set(seen):
        p = exact.get(key, 0) / total
        if p == 0 or (p == 1 and seen[key] != n):
            return math.inf
        if p == 1:  # a card with one possible place is always there
            continue
        worst = max(worst, abs(seen[key] / n - p) / (p * (1 - p) / n) ** 0.5)
    return worst


def naive_places(sampler: WorldSampler) -> Places:
    """Sequential dealing: each unseen card in turn to a random place that may take it
    (starting again when a card has none left). Biased when voids restrict places."""
    cons = sampler.constraints

    def draw(rng: random.Random) -> list[list[Card]]:
        while True:
            room = [h.free for h in cons.holders]
            out: list[list[Card]] = [[] for _ in room]
            for card, allowed in zip(cons.unseen, cons.allowed, strict=True):
                options = [i for i in allowed if room[i]]
                if not options:
                    break
                i = rng.choice(options)
                room[i] -= 1
                out[i].append(card)
            else:
                return out
    return draw


@pytest.mark.parametrize("config", SMALL_CASES, ids=lambda c: c.form.value)
def test_each_unseen_card_reaches_each_place_at_its_exact_frequency(
        config: RulesConfig) -> None:
    obs = next(positions_with_voids(config, 3))
    sampler = WorldSampler(obs, config)
    assert worst_deviation(obs, sampler, sampler.sample_places) < 5


@pytest.mark.parametrize("config", SMALL_CASES, ids=lambda c: c.form.value)
def test_the_frequency_check_catches_naive_sequential_dealing(config: RulesConfig) -> None:
    obs = next(positions_with_voids(config, 3))
    sampler = WorldSampler(obs, config)
    assert worst_deviation(obs, sampler, naive_places(sampler)) > 10


def test_sampling_does_not_depend_on_the_order_of_the_card_classes() -> None:
    obs = next(positions_with_voids(RulesConfig(), 2))
    forward = WorldSampler(obs, RulesConfig())
    backward = WorldSampler(obs, RulesConfig())
    backward._classes.reverse()  # the DP must give the same law in any class order
    backward._memo.clear()
    assert backward._ways(0, backward._caps) == forward.count
    n = 3000
    law = []
    for sampler in (forward, backward):
        rng = random.Random(11)
        freq: dict[tuple[Card, int], int] = collections.Counter()
        for _ in range(n):
            for i, cards in enumerate(sampler.sample_places(rng)):
                for card in cards:
                    freq[(card, i)] += 1
        law.append(freq)
    for key in set(law[0]) | set(law[1]):
        a, b = law[0][key] / n, law[1][key] / n
        assert abs(a - b) <= 6 * (max(a, b) * (1 - min(a, b)) * 2 / n) ** 0.5 + 1e-9, key


def test_the_dealers_discard_and_the_kitty_are_places_of_their_own() -> None:
    config = RulesConfig(dealer_must_take=True)
    game = Game(config, 3)
    game.apply(game.legal_actions()[1])  # the first bidder orders it up
    game.apply(game.legal_actions()[0])  # the dealer discards
    observer = (game.hand.dealer + 1) % 4
    obs = game.observation(observer)
    cons = WorldSampler(obs, config).constraints
    sizes = {(h.kind, h.seat): (h.size, h.known) for h in cons.holders}
    dealer = game.hand.dealer
    assert sizes[(HolderKind.DEALER_DISCARD, dealer)] == (1, ())
    assert sizes[(HolderKind.KITTY, None)] == (3, ())
    assert sizes[(HolderKind.HAND, dealer)] == (5, (obs.upcard,))
    world = sample_world(obs, config, random.Random(0))
    assert obs.upcard in world.hands[dealer]
    assert world.discards[dealer][0] not in world.hands[dealer]


def test_an_impossible_observation_is_refused() -> None:
    game = Game(RulesConfig(), 1)
    obs = game.observation(0)
    extra = next(c for c in game.hand.deck if c not in obs.hand and c is not obs.upcard)
    with pytest.raises(InconsistentObservation, match="unseen cards"):
        WorldSampler(obs._replace(hand=(*obs.hand, extra)), RulesConfig())
