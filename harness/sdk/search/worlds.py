"""Sampling hidden worlds: full deals consistent with what one seat has observed.

A *world* gives every unseen card a place (:mod:`harness.sdk.search.constraints` lists the
places and what each may hold). :class:`WorldSampler` draws worlds **uniformly** among
all consistent ones, so each unseen card reaches each possible holder with exactly its
probability. Naive sequential dealing (deal the cards in some order, each to a random
holder that may take it) is biased when voids restrict the holders; instead the sampler
counts exactly: the unseen cards fall into a few classes (cards that may go to the same
holders, which depends only on their suit under trump), the number of consistent worlds
is a sum over how many cards of each class each holder gets, of products of multinomial
coefficients, and the sampler draws those counts in proportion to the number of worlds
they allow (dynamic programming over the classes), then shuffles each class's cards
among the chosen counts.

A :class:`World` can be turned back into a :class:`~harness.rules.Hand` the engine
continues from: :meth:`World.to_hand` builds the deck order that deals those cards and
replays the public history (and the world's discards) on it. Its observation for the
observing seat equals the one sampled from.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import random
from collections.abc import Callable, Iterator

from harness.errors import InconsistentObservation
from harness.rules import Action, Card, Form, Hand, Observation, Phase, RulesConfig, deck_cards
from harness.rules.actions import discard
from harness.rules.hand import deal
from harness.sdk.search.constraints import Constraints, HolderKind, constraints_from

_DISCARD_PHASES = (Phase.DEALER_DISCARD, Phase.DUMMY_DISCARD)
Check = Callable[[Hand, int, Action], bool]


class WorldRejected(InconsistentObservation):
    """A world's replay was refused by the caller's check (see :meth:`World.to_hand`)."""


@dataclasses.dataclass(frozen=True, slots=True)
class World:
    """One full deal consistent with an observation, and where every card is now.

    ``hands`` are each seat's cards at the moment observed; ``dealt`` the five each was
    dealt; ``kitty`` the undealt cards, upcard first; ``dummy`` the dealt cutthroat dummy
    (``None`` in other forms); ``discards`` each seat's discards in the order made."""

    config: RulesConfig
    observation: Observation
    dealer: int
    hands: tuple[tuple[Card, ...], ...]
    dealt: tuple[tuple[Card, ...], ...]
    kitty: tuple[Card, ...]
    dummy: tuple[Card, ...] | None
    discards: tuple[tuple[Card, ...], ...]

    def deck(self) -> tuple[Card, ...]:
        """The deck order whose deal (docs/rules.md, the engine's dealing) is this world."""
        slots = _deal_slots(self.config, self.dealer)
        order: list[Card | None] = [None] * self.config.deck.size
        piles = [*self.dealt, *([self.dummy] if self.dummy is not None else [])]
        for pile, positions in zip(piles, slots[0], strict=True):
            for card, pos in zip(pile, positions, strict=True):
                order[pos] = card
        for card, pos in zip(self.kitty, slots[1], strict=True):
            order[pos] = card
        assert all(c is not None for c in order)
        return tuple(order)  # type: ignore[arg-type]

    def to_hand(self, check: Check | None = None) -> Hand:
        """A Hand dealt from :meth:`deck` with the public history (and this world's
        discards) replayed: the engine can play on from the observed moment.

        ``check(hand, seat, action)``, if given, is asked before each public action is
        replayed; when it returns false the world is refused with :class:`WorldRejected`
        (a search uses it to keep only worlds in which a model of the other players
        would have acted as they did)."""
        hand = Hand(self.config, self.dealer, self.deck())
        pending = [list(d) for d in self.discards]

        def discard_due() -> bool:
            seat = hand.current
            return hand.phase in _DISCARD_PHASES and seat is not None and bool(pending[seat])

        for seat, action in self.observation.public_actions:
            while discard_due():
                hand.apply(discard(pending[hand.current].pop(0)))  # type: ignore[index]
            if hand.current != seat:
                raise InconsistentObservation(
                    f"replaying the public actions: {action} by seat {seat}, but it is "
                    f"seat {hand.current}'s turn")
            if check is not None and not check(hand, seat, action):
                raise WorldRejected(f"seat {seat} would not have chosen {action} here")
            hand.apply(action)
        while discard_due():
            hand.apply(discard(pending[hand.current].pop(0)))  # type: ignore[index]
        return hand


@functools.cache
def _deal_slots(config: RulesConfig, dealer: int
                ) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
    """Deck positions of each seat's cards (then the dummy's), and of the kitty."""
    pack = deck_cards(config.deck)
    where = {c: i for i, c in enumerate(pack)}
    hands, dummy, kitty = deal(config, dealer, pack)
    piles = [*hands, *([dummy] if dummy is not None else [])]
    return (tuple(tuple(where[c] for c in p) for p in piles),
            tuple(where[c] for c in kitty))


class WorldSampler:
    """Draws worlds uniformly among those consistent with one observation. Build once
    per decision; :meth:`sample` is then cheap. :attr:`count` is the number of
    consistent assignments of the unseen cards to their places."""

    def __init__(self, obs: Observation, config: RulesConfig) -> None:
        self.constraints: Constraints = constraints_from(obs, config)
        cons = self.constraints
        groups: dict[tuple[int, ...], list[Card]] = {}
        for card, ok in zip(cons.unseen, cons.allowed, strict=True):
            groups.setdefault(ok, []).append(card)
        # Fewest choices first keeps the table of partial counts small.
        self._classes = sorted(groups.items(), key=lambda kv: (len(kv[0]), len(kv[1])))
        self._caps = tuple(h.free for h in cons.holders)
        self._memo: dict[tuple[int, tuple[int, ...]], int] = {}
        self.count = self._ways(0, self._caps)
        if self.count == 0:
            raise InconsistentObservation(
                f"no deal is consistent with seat {obs.seat}'s observation (the voids "
                f"shown leave no place for some card)")

    # ------------------------------------------------------------------ counting
    def _splits(self, k: int, allowed: tuple[int, ...], caps: tuple[int, ...]
                ) -> Iterator[tuple[int, ...]]:
        """Every way to put ``k`` cards in the ``allowed`` holders within ``caps``, as
        counts per holder (in ``allowed`` order)."""
        if not allowed:
            if k == 0:
                yield ()
            return
        head, rest = allowed[0], allowed[1:]
        room = sum(caps[h] for h in rest)
        for c in range(max(0, k - room), min(k, caps[head]) + 1):
            for tail in self._splits(k - c, rest, caps):
                yield (c, *tail)

    def _options(self, i: int, caps: tuple[int, ...]
                 ) -> list[tuple[int, tuple[int, ...], tuple[int, ...]]]:
        """(weight, split, caps after) for class ``i``: weight is the number of
        worlds with that split."""
        allowed, cards = self._classes[i]
        k = len(cards)
        out = []
        for split in self._splits(k, allowed, caps):
            after = list(caps)
            ways = math.factorial(k)
            for h, c in zip(allowed, split, strict=True):
                after[h] -= c
                ways //= math.factorial(c)
            rest = self._ways(i + 1, tuple(after))
            if rest:
                out.append((ways * rest, split, tuple(after)))
        return out

    def _ways(self, i: int, caps: tuple[int, ...]) -> int:
        if i == len(self._classes):
            return 1 if not any(caps) else 0
        key = (i, caps)
        got = self._memo.get(key)
        if got is None:
            got = sum(w for w, _, _ in self._options(i, caps))
            self._memo[key] = got
        return got

    # ------------------------------------------------------------------ sampling
    def sample_places(self, rng: random.Random) -> list[list[Card]]:
        """The unseen cards of one uniform world, per holder (see :attr:`constraints`)."""
        places: list[list[Card]] = [[] for _ in self._caps]
        caps = self._caps
        for i, (allowed, cards) in enumerate(self._classes):
            split, after = _pick(self._options(i, caps), rng)
            shuffled = list(cards)
            rng.shuffle(shuffled)
            pos = 0
            for h, c in zip(allowed, split, strict=True):
                places[h] += shuffled[pos:pos + c]
                pos += c
            caps = after
        return places

    def sample(self, rng: random.Random) -> World:
        """One world, uniform among the consistent ones."""
        return build_world(self.constraints, self.sample_places(rng), rng)


def _pick(options: list[tuple[int, tuple[int, ...], tuple[int, ...]]], rng: random.Random
          ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """One (split, caps after) drawn in proportion to its weight."""
    r = rng.randrange(sum(w for w, _, _ in options))
    for weight, split, after in options:
        if r < weight:
            return split, after
        r -= weight
    raise AssertionError("weights do not add up")


def build_world(cons: Constraints, places: list[list[Card]], rng: random.Random) -> World:
    """The :class:`World` in which the unseen cards are at ``places`` (per holder)."""
    obs = cons.observation
    config = cons.config
    n = config.players
    contents = [[*h.known, *p] for h, p in zip(cons.holders, places, strict=True)]

    def held(kind: HolderKind, seat: int | None = None) -> list[Card]:
        i = cons.holder(kind, seat)
        return contents[i] if i is not None else []

    me = obs.seat
    hands = [list(obs.hand) if s == me and obs.hand else held(HolderKind.HAND, s)
             for s in range(n)]
    discards: list[list[Card]] = [[] for _ in range(n)]
    discards[me] = list(obs.discards)
    if obs.dealer != me:
        discards[obs.dealer] += held(HolderKind.DEALER_DISCARD, obs.dealer)
    maker = obs.maker
    if cons.dummy_taken and maker is not None and maker != me:
        discards[maker] += held(HolderKind.DUMMY_DISCARDS, maker)
    dealt: list[tuple[Card, ...]] = []
    dummy: tuple[Card, ...] | None = None
    for s in range(n):
        pool = [*hands[s], *cons.played[s], *discards[s]]
        if s == obs.dealer and cons.dealer_discarded:
            pool.remove(obs.upcard)
        if cons.dummy_taken and s == maker:
            pool, dummy = _split_dummy(pool, obs, s, discards[s], cons.dealer_discarded, rng)
        dealt.append(tuple(pool))
    if config.form is Form.CUTTHROAT and dummy is None:
        dummy = tuple(held(HolderKind.DUMMY))
    kitty = (obs.upcard, *held(HolderKind.KITTY))
    return World(config, obs, obs.dealer, tuple(map(tuple, hands)), tuple(dealt), kitty,
                 dummy, tuple(map(tuple, discards)))


def _split_dummy(pool: list[Card], obs: Observation, maker: int, discards: list[Card],
                 dealer_discarded: bool, rng: random.Random
                 ) -> tuple[list[Card], tuple[Card, ...]]:
    """Split a cutthroat maker's ten cards into the five dealt and the dummy: known for
    the observing maker; for anyone else every split is equally consistent."""
    if maker == obs.seat:
        dummy = tuple(obs.dummy)
        return [c for c in pool if c not in dummy], dummy
    first = discards[:1] if maker == obs.dealer and dealer_discarded else []
    rest = [c for c in pool if c not in first]
    rng.shuffle(rest)
    take = 5 - len(first)
    return [*first, *rest[:take]], tuple(rest[take:])


def sample_world(obs: Observation, config: RulesConfig, rng: random.Random) -> World:
    """One world consistent with ``obs``, uniform among all such (a convenience over
    :class:`WorldSampler`, which should be reused for many samples)."""
    return WorldSampler(obs, config).sample(rng)


__all__ = ["InconsistentObservation", "World", "WorldRejected", "WorldSampler", "build_world",
           "sample_world"]
