"""Euchre statistics per entrant, computed from stored games (pure; no I/O).

:func:`compute_stats` reads each :class:`~harness.store.GameRow`'s record (the engine's
per-hand ``result`` and ``actions``) and its faults, and returns one :class:`BotStats`
per entrant name. :func:`head_to_head` tallies who placed above whom.

Which games count. Games whose termination is ``"interrupted"`` have no result and are
skipped entirely (their faults too). Forfeited games count in full: for ``games``,
``wins`` (by the recorded places), ``forfeits`` and the fault counts, and their finished
hands like any others.

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
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from harness.rules.config import Form
from harness.rules.scoring import team_of
from harness.store import GameRow

__all__ = [
    "FAULT_FIELDS",
    "BotStats",
    "HeadToHead",
    "compute_stats",
    "counted_games",
    "fault_counts",
    "form_of",
    "head_to_head",
]

FAULT_FIELDS: Mapping[str, str] = {
    "timeout": "timeouts",
    "illegal_action": "illegal_actions",
    "protocol_violation": "protocol_violations",
    "disconnect": "crashes",
    "crash": "crashes",
    "startup_failure": "startup_failures",
}
"""Fault kind (as stored) -> the :class:`BotStats` field that counts it."""

_FORMS = {form.players: form for form in Form}
_MADE = frozenset({"made", "march"})
_EUCHRED = frozenset({"euchred", "lone_defence", "lone_defence_march"})
_LONE_DEFENCE_WON = frozenset({"lone_defence", "lone_defence_march"})


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
    timeouts: int = 0
    illegal_actions: int = 0
    protocol_violations: int = 0
    crashes: int = 0  # disconnects and crashes
    startup_failures: int = 0

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

    @property
    def faults(self) -> int:
        return (self.timeouts + self.illegal_actions + self.protocol_violations
                + self.crashes + self.startup_failures)

    def to_dict(self) -> dict[str, Any]:
        """Every count plus the derived rates, JSON-serialisable."""
        data = dataclasses.asdict(self)
        data.update(points_per_hand=self.points_per_hand, win_rate=self.win_rate,
                    make_rate=self.make_rate, faults=self.faults)
        return data


_Getter = Callable[[str], BotStats]


class HeadToHead(NamedTuple):
    """How one entrant fared against another: ``points`` (1 per game placed above, 0.5
    per game placed level) out of ``games``."""

    points: float
    games: int

    @property
    def score(self) -> float:
        return self.points / self.games if self.games else 0.0


def form_of(row: GameRow) -> Form:
    """The game's form, from its number of seats (2, 3 or 4)."""
    try:
        return _FORMS[len(row.seats)]
    except KeyError:
        raise ValueError(f"game {row.game_key!r} has {len(row.seats)} seats") from None


def counted_games(games: Iterable[GameRow]) -> list[GameRow]:
    """The games statistics are computed over: all but the interrupted ones."""
    return [g for g in games if g.termination != "interrupted"]


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
        form = form_of(row)
        for hand in row.record.get("hands") or ():
            if hand.get("result") is not None:
                _count_hand(form, row.seats, hand, get)
    return dict(sorted(stats.items()))


def _count_game(row: GameRow, get: _Getter) -> None:
    form = form_of(row)
    for name in dict.fromkeys(row.seats):
        s = get(name)
        s.games += 1
        seats = [seat for seat, n in enumerate(row.seats) if n == name]
        teams = {team_of(form, seat) for seat in seats}
        if len(teams) == 1 and any(row.ranking[seat] == 1 for seat in seats):
            s.wins += 1
    if row.termination == "forfeit" and row.faults:
        get(row.seats[row.faults[-1].seat]).forfeits += 1
    for fault in row.faults:
        field = FAULT_FIELDS.get(fault.kind)
        if field is not None:
            s = get(fault.bot)
            setattr(s, field, getattr(s, field) + 1)


def _teams_by_name(form: Form, seats: Sequence[str]) -> dict[str, set[int]]:
    teams: dict[str, set[int]] = {}
    for seat, name in enumerate(seats):
        teams.setdefault(name, set()).add(team_of(form, seat))
    return teams


def _count_hand(form: Form, seats: Sequence[str], hand: Mapping[str, Any],
                get: _Getter) -> None:
    result = hand["result"]
    points: list[int] = result["points"]
    teams = _teams_by_name(form, seats)
    for name, held in teams.items():
        s = get(name)
        s.hands += len(held)
        s.points += sum(points[t] for t in held)
    kind: str = result["kind"]
    maker = result["maker"]
    if kind == "thrown_in" or maker is None:
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
        if kind == "march" and maker_team in held:
            s.marches += 1
        if euchred:
            s.euchres_inflicted += len(held - {maker_team})
    for seat, text in hand["actions"]:
        if text != "alone":
            continue
        s = get(seats[seat])
        if team_of(form, seat) == maker_team:
            s.alone_attempts += 1
            s.alone_successes += int(made)
        else:
            s.lone_defence_attempts += 1
            s.lone_defence_successes += int(kind in _LONE_DEFENCE_WON)


def head_to_head(games: Iterable[GameRow]) -> dict[str, dict[str, HeadToHead]]:
    """``h[a][b]``: how ``a`` scored against ``b`` over the counted games with a result.

    In each game, every pair of distinct teams is compared by place (1 point to the team
    placed higher, 0.5 each when level), and that result goes to every pair of distinct
    entrant names across the two teams, once per game and team pair. So a same-bot
    partnership meets the other partnership once per game, each member of a mixed
    partnership meets each opponent once, and in cutthroat each of the three pairs of
    seats is one pairwise result. ``h[b][a]`` mirrors ``h[a][b]``.
    """
    tally: dict[tuple[str, str], list[float]] = {}
    for row in counted_games(games):
        if not row.ranking or 0 in row.ranking:
            continue
        form = form_of(row)
        members: dict[int, set[str]] = {}
        place: dict[int, int] = {}
        for seat, name in enumerate(row.seats):
            team = team_of(form, seat)
            members.setdefault(team, set()).add(name)
            place[team] = row.ranking[seat]
        ordered = sorted(members)
        for i, ta in enumerate(ordered):
            for tb in ordered[i + 1:]:
                score = 1.0 if place[ta] < place[tb] else 0.5 if place[ta] == place[tb] else 0.0
                for a in members[ta]:
                    for b in members[tb] - {a}:
                        for key, pts in (((a, b), score), ((b, a), 1.0 - score)):
                            cell = tally.setdefault(key, [0.0, 0.0])
                            cell[0] += pts
                            cell[1] += 1
    out: dict[str, dict[str, HeadToHead]] = {}
    for (a, b), (pts, n) in sorted(tally.items()):
        out.setdefault(a, {})[b] = HeadToHead(pts, int(n))
    return out


def fault_counts(games: Iterable[GameRow]) -> dict[str, dict[str, int]]:
    """``{bot: {fault kind: count}}`` over the counted games, every stored kind as is."""
    counts: dict[str, dict[str, int]] = {}
    for row in counted_games(games):
        for fault in row.faults:
            per_bot = counts.setdefault(fault.bot, {})
            per_bot[fault.kind] = per_bot.get(fault.kind, 0) + 1
    return {bot: dict(sorted(kinds.items())) for bot, kinds in sorted(counts.items())}
