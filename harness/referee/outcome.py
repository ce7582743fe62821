"""How a game ended, as data: faults, terminations, time controls and fault policies."""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Mapping
from typing import Any

from harness.errors import ConfigError


class FaultKind(enum.Enum):
    """Every way a bot can misbehave."""

    TIMEOUT = "timeout"  # no answer before its clock ran out
    ILLEGAL_ACTION = "illegal_action"  # a well-formed action outside the legal list
    PROTOCOL_VIOLATION = "protocol_violation"  # wrong request id, malformed, oversized
    DISCONNECT = "disconnect"  # the stream closed while the bot was seated
    CRASH = "crash"  # a local bot process exited while seated
    STARTUP_FAILURE = "startup_failure"  # a local bot never completed the handshake


class Termination(enum.Enum):
    """Every way a game can end."""

    NORMAL = "normal"  # a side reached the target
    FORFEIT = "forfeit"  # a bot forfeited by a fault (see the game's faults)
    INTERRUPTED = "interrupted"  # the referee shut down; the game has no result


@dataclasses.dataclass(frozen=True, slots=True)
class Fault:
    """One fault of one seat. ``detail`` says what happened (a start-up failure: why the
    bot did not start, without its name); ``log_tail`` is what a start-up failure quotes
    of the bot's log (``its log PATH ends: WORDS``), kept apart from ``detail`` because a
    bot's output may hold anything: operators see it, public pages never do."""

    seat: int
    bot: str
    kind: FaultKind
    detail: str
    hand: int = 0
    decision: int = 0  # index of the decision within the game
    log_tail: str = ""

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"seat": self.seat, "bot": self.bot, "kind": self.kind.value,
                                "detail": self.detail, "hand": self.hand,
                                "decision": self.decision}
        if self.log_tail:
            data["log_tail"] = self.log_tail
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Fault:
        """The inverse of :meth:`to_dict`."""
        return cls(data["seat"], data["bot"], FaultKind(data["kind"]), data["detail"],
                   data.get("hand", 0), data.get("decision", 0), data.get("log_tail", ""))

    def explained(self) -> str:
        """``detail``'s first line and the quote of the bot's log, on one line: what an
        operator is told (e.g. "exited with code 1 before the handshake; its log PATH
        ends: ModuleNotFoundError: No module named 'grpc'")."""
        first = self.detail.split("\n", 1)[0]
        return f"{first}; {self.log_tail}" if self.log_tail else first

    def forfeit_detail(self) -> str:
        """The detail of the game this fault forfeited: "seat S (BOT) forfeits: KIND:
        DETAIL" (never the log's quote: a game's detail is public)."""
        return f"seat {self.seat} ({self.bot}) forfeits: {self.kind.value}: {self.detail}"


FATAL = frozenset({FaultKind.DISCONNECT, FaultKind.CRASH, FaultKind.STARTUP_FAILURE})
"""Faults after which nobody is left to answer: they forfeit under every policy, and the
bot is not seated again until it is back."""


class PolicyKind(enum.Enum):
    FORFEIT = "forfeit"  # the first fault forfeits the game (default)
    STRIKES = "strikes"  # substitute a legal action and count a strike; forfeit at N


@dataclasses.dataclass(frozen=True, slots=True)
class FaultPolicy:
    """What a timeout, illegal action or protocol violation costs. A disconnect, crash or
    start-up failure always forfeits: nobody is left to answer."""

    kind: PolicyKind = PolicyKind.FORFEIT
    max_strikes: int = 3

    @classmethod
    def parse(cls, text: str) -> FaultPolicy:
        """``forfeit`` or ``strikes`` or ``strikes:N``."""
        t = text.strip().lower()
        if t == "forfeit":
            return cls()
        m = re.fullmatch(r"strikes(?::(\d+))?", t)
        if not m:
            raise ConfigError("fault_policy", f"must be 'forfeit' or 'strikes[:N]'; got {text!r}")
        n = int(m.group(1) or 3)
        if n < 1:
            raise ConfigError("fault_policy", "strikes must be at least 1")
        return cls(PolicyKind.STRIKES, n)

    def __str__(self) -> str:
        return "forfeit" if self.kind is PolicyKind.FORFEIT else f"strikes:{self.max_strikes}"


CLOCKS = ("wall", "cpu")
CPU_WALL_FACTOR = 4.0
"""Under ``clock = "cpu"``, a decision's wall time is still limited, generously: to this
many times its CPU budget, plus :data:`CPU_WALL_GRACE` seconds."""
CPU_WALL_GRACE = 1.0


@dataclasses.dataclass(frozen=True, slots=True)
class TimeControl:
    """``tc = "PER+BANK"`` in seconds, like a chess clock with a delay: each decision may
    take up to PER seconds for free; time beyond that is drawn from a bank of BANK
    seconds for the whole game. A decision that outlasts both is a timeout. ``"2"`` means
    2 seconds per decision and no bank. The referee's clock is the one that counts.

    ``clock`` says what a decision is charged: ``"wall"`` (default) the time from the
    request to the reply; ``"cpu"`` the CPU time the bot's box used in that interval
    (boxed bots only), with the wall time limited to :meth:`wall_limit`. Written
    ``"PER+BANK/cpu"`` in a game's record."""

    per_decision: float = 1.0
    bank: float = 10.0
    clock: str = "wall"

    @classmethod
    def parse(cls, text: str | float | int) -> TimeControl:
        if isinstance(text, (int, float)):
            return cls._checked(float(text), 0.0)
        m = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*(?:\+\s*(\d+(?:\.\d*)?))?\s*"
                         r"(?:/\s*(wall|cpu)\s*)?", str(text))
        if not m:
            raise ConfigError("tc", f"must look like '1.0+10' (seconds per decision + bank); "
                                    f"got {text!r}")
        return cls._checked(float(m.group(1)), float(m.group(2) or 0.0), m.group(3) or "wall")

    @classmethod
    def _checked(cls, per: float, bank: float, clock: str = "wall") -> TimeControl:
        if per <= 0:
            raise ConfigError("tc", "the time per decision must be positive")
        return cls(per, bank, clock)

    def with_clock(self, clock: str) -> TimeControl:
        """This time control charged by ``clock`` (``"wall"`` or ``"cpu"``)."""
        if clock not in CLOCKS:
            raise ConfigError("clock", f"must be one of {', '.join(CLOCKS)}; got {clock!r}")
        return dataclasses.replace(self, clock=clock)

    @staticmethod
    def wall_limit(budget: float) -> float:
        """The wall-time limit of a decision with ``budget`` CPU seconds (clock "cpu")."""
        return CPU_WALL_FACTOR * budget + CPU_WALL_GRACE

    def __str__(self) -> str:
        text = f"{self.per_decision:g}+{self.bank:g}"
        return text if self.clock == "wall" else f"{text}/{self.clock}"


@dataclasses.dataclass(frozen=True, slots=True)
class GameResult:
    """A finished (or interrupted) game as the referee saw it."""

    game_id: str
    seats: tuple[str, ...]  # entrant name per seat
    termination: Termination
    scores: tuple[int, ...]  # per team
    places: tuple[int, ...]  # per seat, 1 = first; all 0 when interrupted
    winner: int | None  # winning team
    hands: int
    faults: tuple[Fault, ...]
    record: dict[str, Any]  # the engine record plus seats, times and faults
    duration_s: float
    detail: str = ""

    @property
    def forfeited_by(self) -> int | None:
        if self.termination is not Termination.FORFEIT or not self.faults:
            return None
        return self.faults[-1].seat
