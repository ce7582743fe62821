"""A game: hands until a side reaches the target, with seeded dealing and full records.

The deals come from :mod:`harness.rules.dealing` (seeded, documented there).

A record (:meth:`Game.to_record`) holds the rules, the seed, and per hand the dealer, the
deck order and every action with its seat; :meth:`Game.from_record` replays it exactly.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from harness.errors import IllegalActionError, ReplayError
from harness.rules.actions import Action
from harness.rules.cards import Card, parse_cards
from harness.rules.config import RulesConfig
from harness.rules.dealing import derive, seeded_deck, seeded_first_dealer
from harness.rules.hand import Event, Hand, Phase
from harness.rules.observation import Observation, observe
from harness.rules.scoring import team_count, team_of

# Re-exported: dealing moved to harness.rules.dealing.
__all__ = ["RECORD_FORMAT", "RECORD_VERSION", "DeckSource", "Game", "GameOutcome", "derive",
           "play_random_game", "seeded_deck", "seeded_first_dealer"]

RECORD_FORMAT = "euchre-harness/game"
RECORD_VERSION = 1


@dataclasses.dataclass(frozen=True, slots=True)
class GameOutcome:
    """How a finished game stands: final score per team, the winning team, and each
    seat's place (1 = first; equal scores share a place)."""

    scores: tuple[int, ...]
    winner: int
    places: tuple[int, ...]
    hands: int

    def to_dict(self) -> dict[str, Any]:
        return {"scores": list(self.scores), "winner": self.winner,
                "places": list(self.places), "hands": self.hands}


DeckSource = Callable[[int], Sequence[Card]]


class Game:
    """Hands until a team reaches the target. Mirrors :class:`Hand`'s interface
    (``phase``, ``current``, ``legal_actions``, ``apply``) and deals the next hand itself
    when one ends."""

    def __init__(self, config: RulesConfig | None = None, seed: int = 0, *,
                 first_dealer: int | None = None, decks: DeckSource | None = None) -> None:
        self.config = config or RulesConfig()
        self.seed = seed
        self._decks: DeckSource = decks or (lambda i: seeded_deck(self.config, seed, i))
        self.first_dealer = (seeded_first_dealer(self.config, seed) if first_dealer is None
                             else first_dealer)
        self.scores = [0] * team_count(self.config.form)
        self.hands: list[Hand] = []
        self.outcome: GameOutcome | None = None
        self._deal_next()

    def _deal_next(self) -> None:
        i = len(self.hands)
        dealer = (self.first_dealer + i) % self.config.players
        self.hand = Hand(self.config, dealer, self._decks(i))
        self.hands.append(self.hand)

    # ------------------------------------------------------------------ interface
    @property
    def phase(self) -> Phase:
        return Phase.GAME_OVER if self.outcome is not None else self.hand.phase

    @property
    def current(self) -> int | None:
        return self.hand.current

    @property
    def is_over(self) -> bool:
        return self.outcome is not None

    def legal_actions(self) -> tuple[Action, ...]:
        return () if self.outcome is not None else self.hand.legal_actions()

    def apply(self, action: Action) -> None:
        if self.outcome is not None:
            raise IllegalActionError(action, None, "game over", [])
        hand = self.hand
        hand.apply(action)
        if hand.result is not None:
            self._hand_over(hand)

    def _hand_over(self, hand: Hand) -> None:
        assert hand.result is not None
        for t, p in enumerate(hand.result.points):
            self.scores[t] += p
        target = self.config.target
        best = max(self.scores)
        if best >= target and self.scores.count(best) == 1:
            self.outcome = self._make_outcome()
        else:
            self._deal_next()

    def _make_outcome(self) -> GameOutcome:
        form = self.config.form
        team_scores = self.scores
        places = []
        for seat in range(self.config.players):
            own = team_scores[team_of(form, seat)]
            places.append(1 + sum(1 for s in team_scores if s > own))
        winner = team_scores.index(max(team_scores))
        return GameOutcome(tuple(team_scores), winner, tuple(places), len(self.hands))

    def observation(self, seat: int) -> Observation:
        return observe(self.hand, seat, tuple(self.scores), len(self.hands) - 1)

    def new_events(self, cursor: tuple[int, int]) -> tuple[list[tuple[int, Event]],
                                                          tuple[int, int]]:
        """Events since ``cursor`` (start with ``(0, 0)``) as (hand index, event) pairs,
        and the cursor to pass next time."""
        hi, ei = cursor
        out: list[tuple[int, Event]] = []
        while hi < len(self.hands):
            evs = self.hands[hi].events
            out.extend((hi, e) for e in evs[ei:])
            if hi == len(self.hands) - 1:
                return out, (hi, len(evs))
            hi, ei = hi + 1, 0
        return out, (hi, ei)

    # ------------------------------------------------------------------ records
    def to_record(self) -> dict[str, Any]:
        return {
            "format": RECORD_FORMAT,
            "version": RECORD_VERSION,
            "rules": self.config.to_dict(),
            "seed": self.seed,
            "first_dealer": self.first_dealer,
            "hands": [h.to_record() for h in self.hands],
            "scores": list(self.scores),
            "outcome": self.outcome.to_dict() if self.outcome is not None else None,
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Game:
        """Replay a record action by action. Raises ReplayError if any step disagrees."""
        try:
            if record.get("format") != RECORD_FORMAT or record.get("version") != RECORD_VERSION:
                raise ReplayError(f"not a version-{RECORD_VERSION} game record")
            config = RulesConfig.from_dict(record["rules"])
            hands = record["hands"]
            decks = [tuple(parse_cards(h["deck"])) for h in hands]
            game = cls(config, int(record["seed"]), first_dealer=int(record["first_dealer"]),
                       decks=lambda i: decks[i])
            for i, h in enumerate(hands):
                if game.hand.dealer != h["dealer"]:
                    raise ReplayError(f"hand {i}: dealer {h['dealer']} but rules give "
                                      f"{game.hand.dealer}")
                for seat, text in h["actions"]:
                    if game.current != seat:
                        raise ReplayError(f"hand {i}: action {text!r} recorded for seat "
                                          f"{seat}, but it is seat {game.current}'s turn")
                    game.apply(Action.parse(text))
        except ReplayError:
            raise
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise ReplayError(f"cannot replay record: {e}") from e
        if "scores" in record and list(record["scores"]) != game.scores:
            raise ReplayError(f"the record's scores {record['scores']} differ from the "
                              f"replay's {game.scores}")
        outcome = record.get("outcome")
        replayed = game.outcome.to_dict() if game.outcome is not None else None
        if "outcome" in record and outcome != replayed:
            raise ReplayError(f"the record's outcome {outcome} differs from the replay's "
                              f"{replayed}")
        return game


def play_random_game(config: RulesConfig, seed: int, rng: random.Random) -> Game:
    """Play a whole game with uniformly random legal actions (tests and benchmarks)."""
    game = Game(config, seed)
    choice = rng.choice
    while game.outcome is None:
        game.apply(choice(game.legal_actions()))
    return game

