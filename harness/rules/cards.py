"""Cards, suits, ranks and decks, and the card order with and without trump.

Cards are interned: ``Card(Rank.JACK, Suit.SPADES) is Card.parse("Js")``. A card knows
nothing of trump; the bowers and the Joker's place are computed from ``(card, trump)``
by :func:`effective_suit` and :func:`trump_rank`, from tables built once at import.

Text form: rank ``7 8 9 T J Q K A`` then suit ``c d h s`` (``"Js"``, ``"Td"``), and
``"JK"`` for the Joker.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Any, ClassVar


class Suit(enum.IntEnum):
    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3

    @property
    def letter(self) -> str:
        return "cdhs"[self]

    @property
    def is_red(self) -> bool:
        return self in (Suit.DIAMONDS, Suit.HEARTS)

    @property
    def partner(self) -> Suit:
        """The other suit of the same colour (home of the left bower)."""
        return _SAME_COLOUR[self]

    @classmethod
    def parse(cls, text: str) -> Suit:
        suit = _SUIT_NAMES.get(text.strip().lower())
        if suit is not None:
            return suit
        raise ValueError(f"not a suit: {text!r} (expected one of c, d, h, s)")


_SAME_COLOUR = {
    Suit.CLUBS: Suit.SPADES,
    Suit.SPADES: Suit.CLUBS,
    Suit.DIAMONDS: Suit.HEARTS,
    Suit.HEARTS: Suit.DIAMONDS,
}


_SUIT_NAMES = {key: suit for suit in Suit for key in (suit.letter, suit.name.lower())}


class Rank(enum.IntEnum):
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13
    ACE = 14
    JOKER = 15

    @property
    def letter(self) -> str:
        return _RANK_LETTERS[self]


_RANK_LETTERS = {
    Rank.SEVEN: "7",
    Rank.EIGHT: "8",
    Rank.NINE: "9",
    Rank.TEN: "T",
    Rank.JACK: "J",
    Rank.QUEEN: "Q",
    Rank.KING: "K",
    Rank.ACE: "A",
    Rank.JOKER: "JK",
}
_LETTER_RANKS = {v: k for k, v in _RANK_LETTERS.items() if k is not Rank.JOKER}
_LETTER_RANKS["10"] = Rank.TEN


class Card:
    """One playing card. Immutable and interned; build with ``Card(rank, suit)`` or
    :meth:`Card.parse`. The Joker is ``Card(Rank.JOKER)`` with ``suit is None``."""

    __slots__ = ("_text", "id", "rank", "suit")
    _interned: ClassVar[dict[tuple[Rank, Suit | None], Card]] = {}

    id: int
    rank: Rank
    suit: Suit | None
    _text: str

    def __new__(cls, rank: Rank, suit: Suit | None = None) -> Card:
        try:
            return cls._interned[(rank, suit)]
        except KeyError:
            raise ValueError(f"no such card: rank={rank!r} suit={suit!r}") from None

    @classmethod
    def _make(cls, rank: Rank, suit: Suit | None, card_id: int) -> Card:
        card = object.__new__(cls)
        object.__setattr__(card, "rank", rank)
        object.__setattr__(card, "suit", suit)
        object.__setattr__(card, "id", card_id)
        object.__setattr__(card, "_text", "JK" if suit is None else rank.letter + suit.letter)
        cls._interned[(rank, suit)] = card
        return card

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Card is immutable")

    def __reduce__(self) -> tuple[Any, ...]:
        return (Card, (self.rank, self.suit))

    def __repr__(self) -> str:
        return f"Card({self})"

    def __str__(self) -> str:
        return self._text  # computed once, when the card is made

    def __lt__(self, other: Card) -> bool:
        """A fixed display order (suit, then rank); not a trick-taking order."""
        return self.id < other.id

    @property
    def is_joker(self) -> bool:
        return self.suit is None

    @classmethod
    def parse(cls, text: str) -> Card:
        t = text.strip()
        if t.upper() in ("JK", "JOKER"):
            return JOKER
        if len(t) < 2:
            raise ValueError(f"not a card: {text!r} (expected e.g. 'Js', 'Td', 'JK')")
        rank = _LETTER_RANKS.get(t[:-1].upper())
        if rank is None:
            raise ValueError(f"not a card: {text!r} (unknown rank {t[:-1]!r})")
        try:
            suit = Suit.parse(t[-1])
        except ValueError:
            raise ValueError(f"not a card: {text!r} (unknown suit {t[-1]!r})") from None
        return Card(rank, suit)


ALL_CARDS: tuple[Card, ...] = (
    *(Card._make(rank, suit, suit * 8 + (rank - 7)) for suit in Suit for rank in list(Rank)[:8]),
    Card._make(Rank.JOKER, None, 32),
)
JOKER = ALL_CARDS[32]
RANK_VALUE: tuple[int, ...] = tuple(int(c.rank) for c in ALL_CARDS)


def parse_cards(text: str | Iterable[str]) -> list[Card]:
    """Parse ``"Js Jc Ah"`` (or an iterable of card texts) into cards."""
    parts = text.split() if isinstance(text, str) else list(text)
    return [Card.parse(p) for p in parts]


def format_cards(cards: Iterable[Card]) -> str:
    return " ".join(str(c) for c in cards)


class DeckKind(enum.Enum):
    """Which pack is used: 24 (9 to A), 32 (7 to A) or 25 (24 plus the Joker)."""

    D24 = "24"
    D32 = "32"
    D25 = "25"

    @property
    def size(self) -> int:
        return int(self.value)

    @classmethod
    def parse(cls, value: str | int | DeckKind) -> DeckKind:
        if isinstance(value, DeckKind):
            return value
        for kind in cls:
            if str(value) == kind.value:
                return kind
        raise ValueError(f"deck must be one of 24, 32, 25; got {value!r}")


def _pack(kind: DeckKind) -> tuple[Card, ...]:
    low = Rank.SEVEN if kind is DeckKind.D32 else Rank.NINE
    cards = tuple(c for c in ALL_CARDS[:32] if c.rank >= low)
    return (*cards, JOKER) if kind is DeckKind.D25 else cards


_PACKS = {kind: _pack(kind) for kind in DeckKind}
PACK_SETS = {kind: frozenset(cards) for kind, cards in _PACKS.items()}


def deck_cards(kind: DeckKind) -> tuple[Card, ...]:
    """The cards of a pack in its canonical order: suits clubs, diamonds, hearts, spades,
    each from the lowest rank up, then the Joker (25-card deck)."""
    return _PACKS[kind]


# ---------------------------------------------------------------------------
# Card order. Tables indexed [trump][card.id]; trump may be None (no trump yet).

NO_TRUMP_INDEX = 4


def _effective_suit(card: Card, trump: Suit | None) -> Suit | None:
    if card.suit is None:  # Joker: always a trump (suitless before trump exists)
        return trump
    if trump is not None and card.rank is Rank.JACK and card.suit is trump.partner:
        return trump
    return card.suit


def _trump_rank(card: Card, trump: Suit) -> int:
    """Order within trump: Joker 100 > right 99 > left 98 > A..7 by rank."""
    if card.suit is None:
        return 100
    if card.rank is Rank.JACK:
        if card.suit is trump:
            return 99
        if card.suit is trump.partner:
            return 98
    return int(card.rank)


def _power(card: Card, trump: Suit | None) -> int:
    if trump is None or _effective_suit(card, trump) is not trump:
        return 0
    return _trump_rank(card, trump)


def _tables() -> tuple[list[list[Suit | None]], list[list[int]]]:
    eff: list[list[Suit | None]] = []
    power: list[list[int]] = []
    for t in [*Suit, None]:
        eff.append([_effective_suit(c, t) for c in ALL_CARDS])
        power.append([_power(c, t) for c in ALL_CARDS])
    return eff, power


# EFFECTIVE_SUIT[t][id]: the suit a card belongs to when t is trump (index 4: no trump).
# TRUMP_POWER[t][id]: its order among trumps (0 when it is not a trump).
EFFECTIVE_SUIT, TRUMP_POWER = _tables()


def effective_suit(card: Card, trump: Suit | None) -> Suit | None:
    """The suit a card belongs to for following, leading and winning: the left bower and
    the Joker belong to trump. The Joker has no suit while there is no trump."""
    return EFFECTIVE_SUIT[NO_TRUMP_INDEX if trump is None else trump][card.id]


def trick_power(card: Card, trump: Suit, led: Suit) -> int:
    """How strongly a card bids for a trick led in ``led``: trumps above the led suit,
    cards of neither worth 0. Higher wins."""
    p = TRUMP_POWER[trump][card.id]
    if p:
        return 200 + p
    return int(card.rank) if EFFECTIVE_SUIT[trump][card.id] is led else 0
