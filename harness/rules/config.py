"""The game form and every rule option of docs/rules.md, in one frozen, validated object."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from typing import Any

from harness.errors import ConfigError
from harness.rules.cards import DeckKind


class Form(enum.Enum):
    """The game form: four-handed partnership, two-handed, or three-handed cutthroat."""

    FOUR_HANDED = "four-handed"
    TWO_HANDED = "two-handed"
    CUTTHROAT = "cutthroat"

    @property
    def players(self) -> int:
        return {"four-handed": 4, "two-handed": 2, "cutthroat": 3}[self.value]

    @classmethod
    def parse(cls, value: str | Form) -> Form:
        if isinstance(value, Form):
            return value
        v = str(value).strip().lower().replace("_", "-")
        aliases = {"four": "four-handed", "4": "four-handed", "two": "two-handed",
                   "2": "two-handed", "three": "cutthroat", "3": "cutthroat",
                   "three-handed": "cutthroat"}
        v = aliases.get(v, v)
        for f in cls:
            if f.value == v:
                return f
        raise ConfigError("form", f"must be four-handed, two-handed or cutthroat; got {value!r}")


class LonerLead(enum.Enum):
    """Who leads the first trick when someone goes alone (docs/rules.md section 3)."""

    LEFT_OF_LONE = "left_of_lone"
    LEFT_OF_DEALER = "left_of_dealer"


class JokerUpcard(enum.Enum):
    """What happens when the Joker is the turned-up card (docs/rules.md section 2)."""

    DEALER_NAMES = "dealer_names"
    HEARTS = "hearts"


def _parse_enum(option: str, cls: type[enum.Enum], value: Any) -> Any:
    if isinstance(value, cls):
        return value
    for member in cls:
        if member.value == value or member.name.lower() == str(value).lower():
            return member
    allowed = ", ".join(str(m.value) for m in cls)
    raise ConfigError(option, f"must be one of {allowed}; got {value!r}")


@dataclasses.dataclass(frozen=True, slots=True)
class RulesConfig:
    """Every option of docs/rules.md. Options left as ``None`` take the form's default;
    setting an option the form does not have (say ``lone_defender=True`` for two-handed)
    raises :class:`~harness.errors.ConfigError` naming the option. After construction
    every field holds its resolved value, so ``RulesConfig.from_dict(c.to_dict()) == c``.
    """

    form: Form = Form.FOUR_HANDED
    deck: DeckKind = DeckKind.D24
    target: int = 10
    dealer_must_take: bool = False
    allow_turned_down_suit: bool = False
    stick_the_dealer: bool = False
    partner_may_go_alone: bool | None = None
    lone_defender: bool | None = None
    loner_lead: LonerLead = LonerLead.LEFT_OF_LONE
    joker_upcard: JokerUpcard = JokerUpcard.DEALER_NAMES

    def __post_init__(self) -> None:
        set_ = self._set
        set_("form", Form.parse(self.form))
        try:
            set_("deck", DeckKind.parse(self.deck))
        except ValueError as e:
            raise ConfigError("deck", str(e)) from None
        set_("loner_lead", _parse_enum("loner_lead", LonerLead, self.loner_lead))
        set_("joker_upcard", _parse_enum("joker_upcard", JokerUpcard, self.joker_upcard))
        for name in ("dealer_must_take", "allow_turned_down_suit", "stick_the_dealer"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(name, f"must be true or false; got {getattr(self, name)!r}")
        for name in ("partner_may_go_alone", "lone_defender"):
            v = getattr(self, name)
            if v is not None and not isinstance(v, bool):
                raise ConfigError(name, f"must be true or false; got {v!r}")
        if isinstance(self.target, bool) or not isinstance(self.target, int) or self.target < 1:
            raise ConfigError("target", f"must be a whole number of at least 1; got "
                                        f"{self.target!r}")
        form = self.form
        if form is Form.FOUR_HANDED:
            set_("partner_may_go_alone", True if self.partner_may_go_alone is None
                 else self.partner_may_go_alone)
            set_("lone_defender", True if self.lone_defender is None else self.lone_defender)
        elif form is Form.CUTTHROAT:
            if self.partner_may_go_alone:
                raise ConfigError("partner_may_go_alone",
                                  "cutthroat has no partnerships; leave it unset")
            set_("partner_may_go_alone", False)
            set_("lone_defender", True if self.lone_defender is None else self.lone_defender)
        else:
            for name in ("partner_may_go_alone", "lone_defender"):
                if getattr(self, name):
                    raise ConfigError(name, "nobody goes alone in two-handed euchre; "
                                            "leave it unset")
                set_(name, False)
        if self.joker_upcard is JokerUpcard.HEARTS and self.deck is not DeckKind.D25:
            raise ConfigError("joker_upcard", "only applies to the 25-card deck (deck = 25)")

    def _set(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)

    @property
    def players(self) -> int:
        return self.form.players

    def to_dict(self) -> dict[str, Any]:
        return {
            "form": self.form.value,
            "deck": self.deck.value,
            "target": self.target,
            "dealer_must_take": self.dealer_must_take,
            "allow_turned_down_suit": self.allow_turned_down_suit,
            "stick_the_dealer": self.stick_the_dealer,
            "partner_may_go_alone": self.partner_may_go_alone,
            "lone_defender": self.lone_defender,
            "loner_lead": self.loner_lead.value,
            "joker_upcard": self.joker_upcard.value,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RulesConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(unknown[0], f"unknown rule option; known options: "
                                          f"{', '.join(sorted(known))}")
        return cls(**dict(data))
