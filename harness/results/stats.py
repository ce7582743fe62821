"""Euchre statistics per entrant, computed from stored games (pure; no I/O).

:func:`compute_stats` reads each :class:`~harness.storage.results.GameRow`'s record (the engine's
per-hand ``result`` and ``actions``) and its faults, and returns one :class:`BotStats`
per entrant name.

Which games count: see :mod:`harness.results.counting`. Interrupted games are skipped
entirely (their faults too). Forfeited games count in full: for ``games``, ``wins`` (by
the recorded places), ``forfeits`` and the fault counts, and their finished hands like
any others.

Which hands count. Only finished hands, i.e. those with a ``result``. The hand that was
in progress when a game was forfeited (or, after a start-up failure, the hand that was
dealt but never bid) is ignored: nobody scored it and its decisions were cut short.
Throw-ins (everybody passed twice) *are* finished hands: they count in ``hands`` and
score 0 points, and nobody made trump in them.

Seats and teams. A team is ``seat % 2`` in four-handed play and the seat itself
otherwise. An entrant may hold more than one seat (a same-bot partnership, or two copies
at one table). Two kinds of count follow:

* seat-level events count once per seat at which they happen: ``makes``, ``makes_won``,
  ``euchres_suffered`` (the maker's seat), ``alone_attempts`` and ``alone_successes``
  (the seat that went alone on the makers' side: the maker or, if allowed, its partner),
  ``lone_defence_attempts`` and ``lone_defence_successes`` (the seat that defended
  alone). One hand has one maker, so a partnership's ``makes`` is the number of hands
  in which *either* of its seats chose trump.
* team-level outcomes count once per distinct team the entrant holds a seat in:
  ``hands``, ``points``, ``marches`` and ``euchres_inflicted``. A same-bot partnership
  (seats 0 and 2) is one team: a hand counts once, its points once, a euchre it
  inflicted once. Copies on *different* teams (seats 0 and 1, or two cutthroat seats)
  count once for each of those teams, so ``points_per_hand`` stays a per-team average.

Per game: ``games`` counts a game once however many seats the entrant had; ``wins``
counts it if its seats placed first, but never when the entrant sat on more than one
team (possible with mixed partnerships of two or three bots, or several copies in
cutthroat): such a game is won by it whatever happens; ``forfeits`` if the forfeiting
seat (the seat of the game's last fault) was one of its seats.

Faults are counted once, by kind, in :attr:`BotStats.fault_kinds`; the per-kind
properties (``timeouts``, ``crashes``...) and :func:`fault_counts` read that count.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from harness.referee.outcome import FaultKind, Termination
from harness.results.counting import counted_games, form_of
from harness.rules.actions import Action, ActionKind
from harness.rules.config import Form
from harness.rules.scoring import HandKind, team_of
from harness.storage.results import GameRow

__all__ = ["BotStats", "compute_stats", "fault_counts"]

_MADE = frozenset({HandKind.MADE, HandKind.MARCH})
_EUCHRED = frozenset({HandKind.EUCHRED, HandKind.LONE_DEFENCE, HandKind.LONE_DEFENCE_MARCH})
_LONE_DEFENCE_WON = frozenset({HandKind.LONE_DEFENCE, HandKind.LONE_DEFENCE_MARCH})


@dataclasses.dataclass
class BotStats:
    """Counts for one entrant over the counted games (see the module docstring)."""

    name: str
    games: int = 0
    wins: int = 0
    forfeits: int = 0
    hands: int = 0  # finished hands (throw-ins included), once per team held
    points: int = 0  # its team's points over those hands
    makes: int = 0  # hands in which one of its seats chose trump
    makes_won: int = 0  # ... and the makers took 3 or more tricks
    euchres_suffered: int = 0  # ... and the makers took fewer than 3
    euchres_inflicted: int = 0  # its team defended and the makers took fewer than 3
    marches: int = 0  # its team made trump and took all 5 tricks
    alone_attempts: int = 0  # one of its seats went alone on the makers' side
    alone_successes: int = 0  # ... and the makers took 3 or more tricks
    lone_defence_attempts: int = 0  # one of its seats defended alone
    lone_defence_successes: int = 0  # ... and the makers took fewer than 3
    fault_kinds: dict[FaultKind, int] = dataclasses.field(default_factory=dict)

    def _faults_of(self, *kinds: FaultKind) -> int:
        return sum(self.fault_kinds.get(kind, 0) for kind in kinds)

    @property
    def timeouts(self) -> int:
        return self._faults_of(FaultKind.TIMEOUT)

    @property
    def illegal_actions(self) -> int:
        return self._faults_of(FaultKind.ILLEGAL_ACTION)

    @property
    def protocol_violations(self) -> int:
        return self._faults_of(FaultKind.PROTOCOL_VIOLATION)

    @property
    def crashes(self) -> int:
        """Disconnects and crashes."""
        return self._faults_of(FaultKind.DISCONNECT, FaultKind.CRASH)

    @property
    def startup_failures(self) -> int:
        return self._faults_of(FaultKind.STARTUP_FAILURE)

    @property
    def faults(self) -> int:
        return sum(self.fault_kinds.values())

    @property
    def points_per_hand(self) -> float:
        return self.points / self.hands if self.hands else 0.0

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    @property
    def make_rate(self) -> float:
        """The fraction of its makes that its side won."""
        return self.makes_won / self.makes if self.makes else 0.0

    def to_dict(self) -> dict[str, Any]:
        """Every count plus the derived rates and fault counts, JSON-serialisable."""
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.name != "fault_kinds"}
        data.update(timeouts=self.timeouts, illegal_actions=self.illegal_actions,
                    protocol_violations=self.protocol_violations, crashes=self.crashes,
                    startup_failures=self.startup_failures,
                    points_per_hand=self.points_per_hand, win_rate=self.win_rate,
                    make_rate=self.make_rate, faults=self.faults)
        return data


_Getter = Callable[[str], BotStats]


def compute_stats(games: Iterable[GameRow]) -> dict[str, BotStats]:
    """Statistics per entrant name, sorted by name. See the module docstring."""
    stats: dict[str, BotStats] = {}

    def get(name: str) -> BotStats:
        found = stats.get(name)
        if found is None:
            found = stats[name] = BotStats(name)
        return found

    for row in counted_games(games):
        _count_game(row, get)
        form = form_of(row.seats)
        for hand in row.record.get("hands") or ():
            if hand.get("result") is not None:
                _count_hand(form, row.seats, hand, get)
    return dict(sorted(stats.items()))


def fault_counts(stats: Mapping[str, BotStats]) -> dict[str, dict[str, int]]:
    """``{bot: {fault kind: count}}`` for the bots with faults, kinds by name."""
    return {name: {kind.value: n for kind, n in sorted(s.fault_kinds.items(),
                                                       key=lambda item: item[0].value)}
            for name, s in stats.items() if s.fault_kinds}


def _count_game(row: GameRow, get: _Getter) -> None:
    form = form_of(row.seats)
    for name in dict.fromkeys(row.seats):
        s = get(name)
        s.games += 1
        seats = [seat for seat, n in enumerate(row.seats) if n == name]
        teams = {team_of(form, seat) for seat in seats}
        if len(teams) == 1 and any(row.ranking[seat] == 1 for seat in seats):
            s.wins += 1
    if row.termination is Termination.FORFEIT and row.faults:
        get(row.seats[row.faults[-1].seat]).forfeits += 1
    for fault in row.faults:
        kinds = get(fault.bot).fault_kinds
        kinds[fault.kind] = kinds.get(fault.kind, 0) + 1


def _teams_by_name(form: Form, seats: Sequence[str]) -> dict[str, set[int]]:
    teams: dict[str, set[int]] = {}
    for seat, name in enumerate(seats):
        teams.setdefault(name, set()).add(team_of(form, seat))
    return teams


@functools.cache
def _action_kind(text: str) -> ActionKind:
    """The kind of a recorded action (a record holds few distinct texts)."""
    return Action.parse(text).kind


def _count_hand(form: Form, seats: Sequence[str], hand: Mapping[str, Any],
                get: _Getter) -> None:
    result = hand["result"]
    points: list[int] = result["points"]
    teams = _teams_by_name(form, seats)
    for name, held in teams.items():
        s = get(name)
        s.hands += len(held)
        s.points += sum(points[t] for t in held)
    kind = HandKind(result["kind"])
    maker = result["maker"]
    if kind is HandKind.THROWN_IN or maker is None:
        return
    maker_team = team_of(form, maker)
    euchred = kind in _EUCHRED
    made = kind in _MADE
    s = get(seats[maker])
    s.makes += 1
    s.makes_won += int(made)
    s.euchres_suffered += int(euchred)
    for name, held in teams.items():
        s = get(name)
        if kind is HandKind.MARCH and maker_team in held:
            s.marches += 1
        if euchred:
            s.euchres_inflicted += len(held - {maker_team})
    for seat, text in hand["actions"]:
        if _action_kind(text) is not ActionKind.GO_ALONE:
            continue
        s = get(seats[seat])
        if team_of(form, seat) == maker_team:
            s.alone_attempts += 1
            s.alone_successes += int(made)
        else:
            s.lone_defence_attempts += 1
            s.lone_defence_successes += int(kind in _LONE_DEFENCE_WON)
