"""The rules of Euchre (docs/rules.md), as a pure engine: no I/O, no gRPC, no protobuf."""

from harness.rules.actions import Action, ActionKind
from harness.rules.cards import JOKER, Card, DeckKind, Rank, Suit, deck_cards, parse_cards
from harness.rules.config import Form, JokerUpcard, LonerLead, RulesConfig
from harness.rules.game import Game, GameOutcome, play_random_game
from harness.rules.hand import Event, EventKind, Hand, Phase, Transition
from harness.rules.observation import Observation
from harness.rules.records import TrickView
from harness.rules.scoring import HandKind, HandResult

__all__ = [
    "JOKER", "Action", "ActionKind", "Card", "DeckKind", "Event", "EventKind", "Form",
    "Game", "GameOutcome", "Hand", "HandKind", "HandResult", "JokerUpcard", "LonerLead",
    "Observation", "Phase", "Rank", "RulesConfig", "Suit", "Transition", "TrickView",
    "deck_cards", "parse_cards", "play_random_game",
]
