"""Play one game between connected bots: drive the rules engine, send each seat what it
may see, ask for decisions under the clock, and turn every fault into a result."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from harness.errors import (
    BotTerminatedError,
    BotTimeoutError,
    ProtocolViolation,
)
from harness.protocol import (
    DecisionReply,
    convert,
    messages,
)
from harness.protocol.messages import Outgoing
from harness.referee.outcome import (
    FATAL,
    Fault,
    FaultKind,
    FaultPolicy,
    GameResult,
    PolicyKind,
    Termination,
    TimeControl,
)
from harness.referee.session import MIN_WRITE_CUT, WRITE_TIMEOUT
from harness.rules.actions import Action
from harness.rules.config import Form, RulesConfig
from harness.rules.game import Game
from harness.rules.hand import EventKind
from harness.rules.observation import Observation
from harness.rules.scoring import team_of

log = logging.getLogger("euchre.match")

CPU_POLL_SECONDS = 0.005  # how often a decision on the CPU clock reads the bot's CPU time
# The game's waits for a bot without bundles to read its events (_flush_events): what
# passes the grace of each wait counts; the first READ_ALLOWANCE seconds so counted in a
# game are free, the rest comes off the bank. A blocked write is cut no sooner than
# MIN_WRITE_CUT seconds.
WRITE_GRACE = 0.1  # a turn of a busy event loop must not count
READ_ALLOWANCE = 2.0


class Seat(Protocol):
    """What a game needs of a seat: a bot's live stream (:class:`~harness.referee.session.
    Session`) or a bot in this process (:mod:`harness.referee.inprocess`)."""

    bundles: bool  # queued messages go out with the next decision request or game over
    violated: bool  # the seat's stream ends because of a protocol violation

    def new_request_id(self) -> int: ...

    def post(self, message: Outgoing) -> None: ...

    async def flush(self, last: Outgoing | None = None, *,
                    timeout: float = WRITE_TIMEOUT) -> None:
        """Send what is queued; a bot that does not read it for ``timeout`` seconds is
        disconnected."""
        ...

    async def decide(self, request_id: int, request: Outgoing,
                     timeout: float) -> DecisionReply:
        """``request``: the ConnectResponse carrying the DecisionRequest ``request_id``
        (:func:`~harness.protocol.messages.decision_request_bytes`)."""
        ...


@runtime_checkable
class ObservingSeat(Protocol):
    """A seat that can be handed the engine's Observation itself (a bot in this process
    that decides from it): no DecisionRequest is built for it, and with
    ``wants_events`` false no event messages either."""

    observes: bool  # act() may stand for decide()
    wants_events: bool  # the bot does something with HandStart and GameEvent messages

    async def act(self, obs: Observation) -> Action: ...


def forfeit_places(config: RulesConfig, scores: Sequence[int], loser: int) -> tuple[
        tuple[int, ...], int]:
    """Places per seat and the winning team when ``loser`` (a seat) forfeits: its team
    comes last; in cutthroat the other two are placed by score."""
    form = config.form
    n = config.players
    lose_team = team_of(form, loser)
    if form is not Form.CUTTHROAT:
        win_team = 1 - lose_team
        return tuple(1 if team_of(form, s) == win_team else 2 for s in range(n)), win_team
    others = [s for s in range(n) if s != loser]
    places = [0] * n
    places[loser] = 3
    for s in others:
        places[s] = 1 + sum(1 for o in others if scores[o] > scores[s])
    winner = max(others, key=lambda s: (scores[s], -s))
    return tuple(places), winner


class GameRunner:
    """One game. ``seats`` are live sessions in seat order; ``names`` the entrant names."""

    def __init__(self, game_id: str, config: RulesConfig, seed: int,
                 seats: Sequence[Seat], names: Sequence[str], *,
                 time_control: TimeControl | None = None,
                 policy: FaultPolicy | None = None,
                 stop: asyncio.Event | None = None,
                 crashed: Callable[[int], Awaitable[str | None]] | None = None,
                 cpu_ns: Callable[[int], int | None] | None = None,
                 turn: Callable[[int, bool], None] | None = None) -> None:
        """``crashed(seat)``, asked when a seat's stream closed: None if its process
        still runs (a disconnect), else why it ended ("" if unknown): a crash.
        ``cpu_ns(seat)``: the CPU time its box has used (None: not measured; such a
        seat is charged wall time even under ``clock = "cpu"``). ``turn(seat, on)`` is
        called as a decision is asked of a seat (``on``) and once it is settled: a boxed
        bot's box gets the CPU only in its turns."""
        if len(seats) != config.players or len(names) != config.players:
            raise ValueError(f"{config.form.value} needs {config.players} seats")
        self.game_id = game_id
        self.config = config
        self.seed = seed
        self.seats = list(seats)
        self.names = tuple(names)
        self.tc = time_control or TimeControl()
        self.policy = policy or FaultPolicy()
        self.stop = stop
        self.crashed = crashed
        self.cpu_ns = cpu_ns
        self.turn = turn
        self.game = Game(config, seed)
        self.faults: list[Fault] = []
        self.decision_ms: list[float] = []
        self._banks = [self.tc.bank] * config.players
        # On the CPU clock, each seat's CPU time at its last reply (at first, at the
        # game's start): a decision is charged all the CPU its box used since, so that
        # CPU used between its decisions (thinking ahead while the others play, which
        # also takes the CPU the boxes share from them) is not free.
        self._cpu_since: list[int | None] = [None] * config.players
        self._strikes = [0] * config.players
        # Why a seat's time ran out while the game waited for it to read its messages
        # (charged as a timeout at its next decision), per seat.
        self._overdrawn: list[str | None] = [None] * config.players
        self._free_waits = [READ_ALLOWANCE] * config.players  # what is left of them
        self._request_id = 0  # the last request's id (ids are numbered per stream)
        self._cursor = (0, 0)
        self._tricks_in_hand = 0
        # Seats handed the Observation itself, and the seats that get event messages.
        observing = [s if isinstance(s, ObservingSeat) else None for s in self.seats]
        self._observers = [s if s is not None and s.observes else None for s in observing]
        self._listening = [s is None or s.wants_events for s in observing]
        self._listeners = [i for i, on in enumerate(self._listening) if on]
        self._posts = [s.post for s in self.seats]  # bound once: called for every event

    # ------------------------------------------------------------------ sending
    def _post(self, seat: int, msg: Outgoing) -> None:
        self.seats[seat].post(msg)

    async def _flush(self, session: Seat, last: Outgoing | None = None, *,
                     timeout: float = WRITE_TIMEOUT) -> None:
        # A closed stream is noticed (and charged) when the seat is next asked to decide.
        with contextlib.suppress(BotTerminatedError):
            await session.flush(last, timeout=timeout)

    async def _flush_events(self, seat: int) -> None:
        """Send a seat that takes every message at once (no bundles) the events queued
        for it. The game waits while the bot does not read them, so that time is the
        bot's. Of each wait, what passes :data:`WRITE_GRACE` counts; a game's first
        :data:`READ_ALLOWANCE` seconds so counted are free (the referee's own pauses, a
        garbage collection or a loaded machine, also fall in them), the rest comes off
        the bot's bank, and once the bank is empty its time has run out (a timeout at
        its next decision). A write blocked for longer than the free time and bank left
        (at least :data:`MIN_WRITE_CUT`, at most :data:`WRITE_TIMEOUT`) ends its stream."""
        bank, free = self._banks[seat], self._free_waits[seat]
        t0 = time.monotonic()
        await self._flush(self.seats[seat], timeout=self._write_cut(seat))
        waited = time.monotonic() - t0 - WRITE_GRACE
        if waited <= 0:
            return
        self._free_waits[seat] = max(0.0, free - waited)
        over = waited - free
        if over <= 0:
            return
        self._banks[seat] = max(0.0, bank - over)
        if over > bank and self._overdrawn[seat] is None:
            self._overdrawn[seat] = (f"{self.names[seat]}: its time ran out while the game "
                                     f"waited for it to read its messages (the last wait "
                                     f"{waited + WRITE_GRACE:.3f}s, its bank {bank:.3f}s)")

    def _write_cut(self, seat: int) -> float:
        """How long a write to ``seat`` may stay blocked before its stream ends: the
        free waits and bank it has left, at least :data:`MIN_WRITE_CUT`, at most
        :data:`WRITE_TIMEOUT`."""
        return min(WRITE_TIMEOUT, max(MIN_WRITE_CUT, self._free_waits[seat]
                                      + self._banks[seat] + WRITE_GRACE))

    def _queue_events(self) -> None:
        """Queue every new engine event for the seats that may see it. Runs after every
        action, and one action ends at most one hand and deals the next, so
        ``game.scores`` is the score before any DEAL event queued here."""
        game = self.game
        events, self._cursor = game.new_events(self._cursor)
        listeners, listening, posts = self._listeners, self._listening, self._posts
        for hi, ev in events:
            kind = ev.kind
            to = ev.to
            if kind is EventKind.DEAL:
                assert to is not None
                self._tricks_in_hand = 0
                if listening[to]:
                    self._post(to, messages.hand_start(game.hands[hi], to, hi, game.scores))
                continue
            if kind is EventKind.TRICK:
                self._tricks_in_hand += 1
            targets = listeners if to is None else (to,) if listening[to] else ()
            if not targets:
                continue
            msg = messages.game_event_bytes(hi, ev, trick_number=self._tricks_in_hand,
                                            scores=game.scores)
            if msg is None:
                continue
            for s in targets:
                posts[s](msg)

    # ------------------------------------------------------------------ playing
    async def play(self) -> GameResult:
        """Play the game to its end. Never raises for anything a bot does; should the
        referee itself fail (a bug), the game ends INTERRUPTED with the error as its
        detail, so a tournament carries on and plays it again on resume."""
        start = time.monotonic()
        started_at = time.time()
        try:
            return await self._play(start, started_at)
        except Exception as e:
            log.exception("game %s: referee error", self.game_id)
            return await self._finish(Termination.INTERRUPTED, f"referee error: {e!r}",
                                      None, start, started_at)

    async def _play(self, start: float, started_at: float) -> GameResult:
        cfg = self.config
        rules = convert.rules_to_pb(cfg)
        self._cpu_since = [self._cpu(s) for s in range(cfg.players)]
        for s in range(cfg.players):
            partner = (s + 2) % 4 if cfg.form is Form.FOUR_HANDED else None
            self._post(s, messages.game_start(
                self.game_id, rules, s, self.names, partner_seat=partner,
                increment_ms=int(self.tc.per_decision * 1000),
                bank_ms=int(self.tc.bank * 1000)))
        termination = Termination.NORMAL
        detail = ""
        loser: int | None = None
        game = self.game
        # The seats sent every message at once (their bots take no bundles).
        eager = [i for i, s in enumerate(self.seats) if not s.bundles]
        while True:
            self._queue_events()
            for s in eager:
                await self._flush_events(s)
            if game.outcome is not None:
                break
            if self.stop is not None and self.stop.is_set():
                termination, detail = Termination.INTERRUPTED, "the referee shut down"
                break
            seat = game.current
            assert seat is not None
            action, fault = await self._ask(seat)
            if fault is not None:
                self.faults.append(fault)
                strikes = self._strikes[seat] + 1
                forfeit = (fault.kind in FATAL or self.policy.kind is PolicyKind.FORFEIT
                           or strikes >= self.policy.max_strikes)
                action = None if forfeit else game.legal_actions()[0]
                self._post(seat, messages.fault(
                    fault.kind.value, fault.detail, strikes=strikes,
                    request_id=self._request_id, played_action=action))
                if forfeit:
                    termination, detail, loser = (Termination.FORFEIT,
                                                  fault.forfeit_detail(), seat)
                    break
                self._strikes[seat] = strikes
            assert action is not None
            game.apply(action)
        return await self._finish(termination, detail, loser, start, started_at)

    async def _ask(self, seat: int) -> tuple[Action | None, Fault | None]:
        game = self.game
        session = self.seats[seat]
        if self._overdrawn[seat] is not None:
            return None, self._out_of_time(seat)
        budget = self.tc.per_decision + self._banks[seat]
        self._request_id = session.new_request_id()
        obs = game.observation(seat)
        observer = self._observers[seat]
        request = None if observer is not None else messages.decision_request_bytes(
            self._request_id, obs, int(budget * 1000), int(self._banks[seat] * 1000))
        t0 = time.monotonic()
        cpu0 = self._cpu(seat)
        if cpu0 is not None:  # charged from its last reply (or the game's start) on
            since = self._cpu_since[seat]
            cpu0 = cpu0 if since is None else min(since, cpu0)
        fault_kind: FaultKind | None = None
        detail = ""
        reply = None
        action = None
        turn = self.turn
        if turn is not None:
            turn(seat, True)
        try:
            if observer is not None:  # in process: the Observation the request would carry
                action = await observer.act(obs)
            elif request is not None:
                reply = await (session.decide(self._request_id, request, budget)
                               if cpu0 is None
                               else self._decide_on_cpu(seat, request, budget, cpu0))
        except BotTimeoutError as e:
            fault_kind, detail = FaultKind.TIMEOUT, str(e)
        except BotTerminatedError as e:
            fault_kind, detail = FaultKind.DISCONNECT, str(e)
            if session.violated:
                fault_kind = FaultKind.PROTOCOL_VIOLATION
            elif self.crashed is not None and (why := await self.crashed(seat)) is not None:
                fault_kind, detail = FaultKind.CRASH, why or detail
        except ProtocolViolation as e:
            fault_kind, detail = FaultKind.PROTOCOL_VIOLATION, str(e)
        finally:
            if turn is not None:
                turn(seat, False)
        elapsed = time.monotonic() - t0
        if cpu0 is not None:  # the CPU clock: the CPU time used since its last reply
            now = self._cpu(seat) or cpu0
            elapsed = (now - cpu0) / 1e9
            self._cpu_since[seat] = now
        self.decision_ms.append(round(elapsed * 1000, 3))
        over = elapsed - self.tc.per_decision
        if over > 0:
            self._banks[seat] = max(0.0, self._banks[seat] - over)
        if reply is not None:
            try:
                action = convert.action_from_pb(reply.action)
            except ProtocolViolation as e:
                fault_kind, detail = FaultKind.PROTOCOL_VIOLATION, str(e)
        if action is not None and action not in obs.legal_actions:
            fault_kind = FaultKind.ILLEGAL_ACTION
            detail = (f"{action} is not legal; legal: "
                      f"{', '.join(str(a) for a in obs.legal_actions)}")
            action = None
        if fault_kind is None:
            return action, None
        return None, Fault(seat, self.names[seat], fault_kind, detail,
                           len(game.hands) - 1, len(self.decision_ms) - 1)

    def _out_of_time(self, seat: int) -> Fault:
        """The timeout of a seat whose time ran out while the game waited for it to read
        its events (:meth:`_flush_events`): charged at its turn, with no request sent."""
        detail, self._overdrawn[seat] = self._overdrawn[seat], None
        assert detail is not None
        self._request_id = 0  # no request of its own to name
        self.decision_ms.append(0.0)
        return Fault(seat, self.names[seat], FaultKind.TIMEOUT, detail,
                     len(self.game.hands) - 1, len(self.decision_ms) - 1)

    def _cpu(self, seat: int) -> int | None:
        """The seat's CPU time in ns when the game is on the CPU clock and it is measured."""
        if self.tc.clock != "cpu" or self.cpu_ns is None:
            return None
        return self.cpu_ns(seat)

    async def _decide_on_cpu(self, seat: int, request: Outgoing, budget: float,
                             cpu0: int) -> DecisionReply:
        """A decision on the CPU clock: the reply must come before the bot's box has used
        ``budget`` CPU seconds since ``cpu0`` (its last reply, or the game's start;
        checked every few milliseconds), and within the generous wall limit
        (:meth:`TimeControl.wall_limit`)."""
        wall = self.tc.wall_limit(budget)
        decide = asyncio.ensure_future(self.seats[seat].decide(self._request_id, request,
                                                               wall))
        try:
            while True:
                done, _ = await asyncio.wait((decide,), timeout=CPU_POLL_SECONDS)
                if done:
                    return decide.result()
                used = ((self._cpu(seat) or cpu0) - cpu0) / 1e9
                if used > budget:
                    raise BotTimeoutError(f"{self.names[seat]}: used {used:.3f} s of CPU "
                                          f"since its last reply without replying "
                                          f"(budget {budget:.3f} s)")
        finally:
            decide.cancel()

    async def _finish(self, termination: Termination, detail: str, loser: int | None,
                      start: float, started_at: float) -> GameResult:
        game = self.game
        cfg = self.config
        scores = tuple(game.scores)
        winner: int | None
        if termination is Termination.NORMAL:
            assert game.outcome is not None
            places, winner = game.outcome.places, game.outcome.winner
        elif termination is Termination.FORFEIT:
            assert loser is not None
            places, winner = forfeit_places(cfg, scores, loser)
        else:
            places, winner = (0,) * cfg.players, None
        self._queue_events()
        # A fault's detail can name the faulting seat's cards (an illegal action lists its
        # legal ones): only that seat and the stored record get it; the others learn who
        # forfeited and why, nothing more.
        public = detail
        if loser is not None and self.faults:
            public = f"seat {loser} ({self.names[loser]}) forfeits: {self.faults[-1].kind.value}"
        # Every seat gets its GameOver at the same time, and a seat that does not read
        # it holds the game (whose result is decided) no longer than its own time left
        # would have let it think (:meth:`_write_cut`): one seat's stream must not hold
        # back the others' GameOver, nor the storing of the result, for the write
        # timeout.
        await asyncio.gather(*(self._flush(self.seats[seat], messages.game_over(
            self.game_id, termination=termination.value, scores=scores, places=places,
            seat=seat, winner_team=winner, forfeit_seat=loser,
            detail=detail if seat == loser else public, hands_played=len(game.hands)),
            timeout=self._write_cut(seat)) for seat in range(cfg.players)))
        return game_result(self.game_id, self.names, termination, detail, game=game,
                           places=places, winner=winner, tc=self.tc, policy=self.policy,
                           decision_ms=self.decision_ms, faults=self.faults,
                           started_at=started_at, duration_s=time.monotonic() - start)


def game_result(game_id: str, seats: Sequence[str], termination: Termination, detail: str,
                *, game: Game | None, places: Sequence[int] | None = None,
                winner: int | None = None, tc: TimeControl | None = None,
                policy: FaultPolicy | None = None, decision_ms: Sequence[float] = (),
                faults: Sequence[Fault] = (), started_at: float | None = None,
                duration_s: float = 0.0, hands: int | None = None) -> GameResult:
    """A game's result and its record (the engine's record of ``game`` plus who sat
    where, how it ended, the clock, the faults and the decision times): the one place a
    result is put together, for a played game, a forfeit before the first deal and a game
    cut off before it began (``game`` None: no record of play, no scores). ``hands``:
    the hands played (default: the hands ``game`` dealt)."""
    if hands is None:
        hands = len(game.hands) if game is not None else 0
    scores = tuple(game.scores) if game is not None else ()
    places = tuple(places) if places is not None else (0,) * len(seats)
    record: dict[str, Any] = game.to_record() if game is not None else {}
    record.update({
        "game_id": game_id,
        "seats": list(seats),
        "termination": termination.value,
        "detail": detail,
        "places": list(places),
        "winner": winner,
        "time_control": str(tc or TimeControl()),
        "fault_policy": str(policy or FaultPolicy()),
        "decision_ms": list(decision_ms),
        "faults": [f.to_dict() for f in faults],
        "started_at": time.time() if started_at is None else started_at,
    })
    return GameResult(game_id, tuple(seats), termination, scores, places, winner,
                      hands, tuple(faults), record,
                      duration_s, detail)
