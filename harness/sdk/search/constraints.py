"""What one seat's observation says about where the unseen cards are.

:func:`constraints_from` turns an :class:`~harness.rules.Observation` (and the rules) into
a list of *holders*: the places an unseen card may be (another seat's hand, the kitty
under the upcard, the dealer's discard, the cutthroat dummy or the maker's dummy
discards), each with its size, the cards already known to be there, and the suits it
cannot hold (a player who did not follow suit is void in the led suit, the bowers and
the Joker counted in trump's suit). Sampling from these is :mod:`harness.sdk.search.worlds`.
"""

from __future__ import annotations

import dataclasses
import enum

from harness.errors import InconsistentObservation
from harness.rules import Card, Form, Observation, Phase, RulesConfig, Suit, deck_cards
from harness.rules.cards import effective_suit

HAND_SIZE = 5
DUMMY_SIZE = 5


class HolderKind(enum.Enum):
    HAND = "hand"  # a seat's cards now
    KITTY = "kitty"  # the undealt cards under the upcard
    DEALER_DISCARD = "dealer_discard"  # the card the dealer put away for the upcard
    DUMMY = "dummy"  # cutthroat: the dummy nobody took
    DUMMY_DISCARDS = "dummy_discards"  # cutthroat: what the maker put away from ten cards


@dataclasses.dataclass(frozen=True, slots=True)
class Holder:
    """One place unseen cards may be: ``size`` cards in all, of which ``known`` are
    already known; a card whose suit (as played, under trump) is in ``void`` is never
    here."""

    kind: HolderKind
    seat: int | None
    size: int
    known: tuple[Card, ...] = ()
    void: frozenset[Suit | None] = frozenset()

    @property
    def free(self) -> int:
        return self.size - len(self.known)


@dataclasses.dataclass(frozen=True, slots=True)
class Constraints:
    """Everything the sampler needs: the holders, the unseen cards, and per unseen card
    the holders (indices) it may be in."""

    config: RulesConfig
    observation: Observation
    holders: tuple[Holder, ...]
    unseen: tuple[Card, ...]
    allowed: tuple[tuple[int, ...], ...]  # per unseen card
    played: tuple[tuple[Card, ...], ...]  # per seat, in order
    dummy_taken: bool
    dealer_discarded: bool

    def holder(self, kind: HolderKind, seat: int | None = None) -> int | None:
        for i, h in enumerate(self.holders):
            if h.kind is kind and h.seat == seat:
                return i
        return None


def voids(obs: Observation, players: int) -> list[set[Suit | None]]:
    """Per seat, the suits (under trump) it has shown it holds none of."""
    out: list[set[Suit | None]] = [set() for _ in range(players)]
    trump = obs.trump
    for plays in [*(t.plays for t in obs.tricks), obs.current_trick]:
        if not plays:
            continue
        led = effective_suit(plays[0][1], trump)
        for seat, card in plays[1:]:
            if effective_suit(card, trump) is not led:
                out[seat].add(led)
    return out


def constraints_from(obs: Observation, config: RulesConfig) -> Constraints:
    """The holders and unseen cards of ``obs`` (see the module docstring). Raises
    :class:`InconsistentObservation` if the counts do not add up."""
    n = config.players
    me = obs.seat
    phase = obs.phase
    cutthroat = config.form is Form.CUTTHROAT
    played: list[list[Card]] = [[] for _ in range(n)]
    for plays in [*(t.plays for t in obs.tricks), obs.current_trick]:
        for seat, card in plays:
            played[seat].append(card)
    seen_played = {c for p in played for c in p}
    blind = phase is Phase.NAME_TRUMP and me == obs.dealer
    dealer_discarded = bool(obs.dealer_took_upcard) and phase is not Phase.DEALER_DISCARD
    maker = obs.maker
    dummy_taken = (cutthroat and maker is not None and maker not in obs.alone
                   and phase in (Phase.DUMMY_DISCARD, Phase.PLAY, Phase.HAND_OVER))
    # The upcard's place is public, except when the cutthroat dealer made trump, took the
    # dummy too and may have put the upcard away among the dummy discards.
    upcard = obs.upcard
    upcard_hidden = (dealer_discarded and dummy_taken and maker == obs.dealer
                     and me != obs.dealer and upcard not in seen_played)
    up_in_dealer_hand = (dealer_discarded and not upcard_hidden and upcard not in seen_played)
    own_dummy_discards = max(0, len(obs.discards) - (1 if me == obs.dealer and dealer_discarded
                                                     else 0))
    shown_void = voids(obs, n)

    holders: list[Holder] = []
    for s in range(n):
        if s == me and not blind:
            continue
        size = HAND_SIZE - len(played[s])
        if dummy_taken and s == maker and phase is Phase.DUMMY_DISCARD:
            size += DUMMY_SIZE - (own_dummy_discards if s == me else 0)
        known = (upcard,) if up_in_dealer_hand and s == obs.dealer else ()
        holders.append(Holder(HolderKind.HAND, s, size, known, frozenset(shown_void[s])))
    dealt = n * HAND_SIZE + (DUMMY_SIZE if cutthroat else 0)
    holders.append(Holder(HolderKind.KITTY, None, config.deck.size - dealt - 1))
    if dealer_discarded and obs.dealer != me:
        holders.append(Holder(HolderKind.DEALER_DISCARD, obs.dealer, 1))
    if cutthroat and not dummy_taken:
        holders.append(Holder(HolderKind.DUMMY, None, DUMMY_SIZE))
    if dummy_taken and maker != me:
        made = 0 if phase is Phase.DUMMY_DISCARD else DUMMY_SIZE
        holders.append(Holder(HolderKind.DUMMY_DISCARDS, maker, made))

    seen = set(obs.hand) | seen_played | set(obs.discards) | set(obs.dummy)
    if not upcard_hidden:
        seen.add(upcard)
    unseen = tuple(c for c in deck_cards(config.deck) if c not in seen)
    free = sum(h.free for h in holders)
    if free != len(unseen):
        raise InconsistentObservation(
            f"{len(unseen)} unseen cards but {free} places for them (seat {me}, "
            f"phase {phase.value})")
    allowed: list[tuple[int, ...]] = []
    for card in unseen:
        if card is upcard:  # upcard_hidden: in the dealer's hand or put away with the dummy
            ok = tuple(i for i, h in enumerate(holders)
                       if (h.kind is HolderKind.HAND and h.seat == obs.dealer
                           and effective_suit(card, obs.trump) not in h.void)
                       or h.kind is HolderKind.DUMMY_DISCARDS)
        else:
            suit = effective_suit(card, obs.trump)
            ok = tuple(i for i, h in enumerate(holders) if suit not in h.void)
        allowed.append(ok)
    return Constraints(config, obs, tuple(holders), unseen, tuple(allowed),
                       tuple(map(tuple, played)), dummy_taken, dealer_discarded)
