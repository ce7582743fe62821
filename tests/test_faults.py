"""Every way a bot can misbehave gets the documented result, and the referee carries on.

Each test runs a real referee (:class:`~harness.referee.arena.Arena`: gRPC server, bot
pool) with real bot processes: ``sample_bots/faulty_bot.py`` in one mode against
``sample_bots.random_bot`` opponents. For a fault in a game it checks

* the result: termination FORFEIT, the fault's kind, seat and bot name, the places and
  the winner giving the game to the other side;
* that the fault is in ``result.faults`` and in ``result.record["faults"]``, and that
  the seats still connected were sent a GameOver saying so;
* that the referee carries on: a second game in the same Arena completes (between
  well-behaved bots, or with the same entrant where the pool restarts it).

Refusals are checked outside a game too: the faulty bot runs as a subprocess against
the Arena's server, and the test checks its exit status and stderr, and that the token
registry did not change.

Tests marked ``xfail(strict=True)`` document referee bugs (see their reasons); they fail
(and so pass as xfail) until the bug is fixed, then XPASS and must be unmarked.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import grpc
import pytest
from waiting import wait_until

from harness._generated.euchre.v1 import referee_pb2 as rpb
from harness._generated.euchre.v1 import referee_pb2_grpc as rpc
from harness.protocol import convert, messages
from harness.referee.arena import Arena
from harness.referee.outcome import (
    FaultKind,
    FaultPolicy,
    GameResult,
    Termination,
    TimeControl,
)
from harness.referee.pool import Entrant, Instance
from harness.referee.process import BotCommand
from harness.referee.session import Session, SlotState
from harness.rules.actions import Action
from harness.rules.config import Form, RulesConfig
from harness.rules.game import Game, seeded_first_dealer
from harness.rules.scoring import team_of

T = TypeVar("T")
REPO = Path(__file__).resolve().parent.parent
PY = sys.executable
RANDOM = BotCommand((PY, "-m", "sample_bots.random_bot"), cwd=str(REPO))
TWO = RulesConfig(form=Form.TWO_HANDED)
FOUR = RulesConfig()
FAST = TimeControl(per_decision=1.0, bank=0.0)  # for hang and late
ROOMY = TimeControl(per_decision=5.0, bank=0.0)  # nobody well-behaved times out
STRIKES = FaultPolicy.parse("strikes:3")

_FAULT_PB = {
    FaultKind.TIMEOUT: rpb.FAULT_KIND_TIMEOUT,
    FaultKind.ILLEGAL_ACTION: rpb.FAULT_KIND_ILLEGAL_ACTION,
    FaultKind.PROTOCOL_VIOLATION: rpb.FAULT_KIND_PROTOCOL_VIOLATION,
}


def faulty(mode: str, *args: str) -> BotCommand:
    return BotCommand((PY, "-m", "sample_bots.faulty_bot", "--mode", mode, *args),
                      cwd=str(REPO))


def run(coro: Coroutine[Any, Any, T], timeout: float = 120.0) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coro, timeout)
    return asyncio.run(bounded())


@contextlib.asynccontextmanager
async def arena(tmp_path: Path, *entrants: tuple[str, BotCommand, int],
                handshake_timeout: float | None = None,
                shutdown_grace: float = 5.0) -> AsyncIterator[Arena]:
    a = Arena(log_dir=tmp_path / "logs", startup_timeout=60.0,
              shutdown_grace=shutdown_grace)
    if handshake_timeout is not None:
        a.server.handshake_timeout = handshake_timeout
    async with a:
        for name, command, instances in entrants:
            a.add(Entrant(name, command), instances)
        yield a


# --------------------------------------------------------------------------- recording


class Sent:
    """Every message the referee sends on a session (Session.send is wrapped), by seat
    instance: ``by_slot[(entrant, instance)]``."""

    def __init__(self) -> None:
        self.by_slot: dict[tuple[str, int], list[rpb.ConnectResponse]] = {}

    def to(self, name: str, instance: int = 0) -> list[rpb.ConnectResponse]:
        return self.by_slot.get((name, instance), [])

    def of_kind(self, name: str, kind: str, instance: int = 0) -> list[Any]:
        return [getattr(m, kind) for m in self.to(name, instance)
                if m.WhichOneof("payload") == kind]


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> Iterator[Sent]:
    rec = Sent()
    original = Session.send

    async def send(self: Session, data: messages.Outgoing) -> None:
        # A Bundle (to bots that take them) is recorded as the messages it holds; the
        # handshake's Welcome is not recorded (only what games send). A message written
        # as its wire bytes is recorded as the bot reads it.
        message = messages.decode(data)
        kind = message.WhichOneof("payload")
        inner = (list(message.bundle.messages) if kind == "bundle"
                 else [] if kind == "welcome" else [message])
        rec.by_slot.setdefault((self.slot.name, self.slot.instance), []).extend(inner)
        await original(self, data)

    monkeypatch.setattr(Session, "send", send)
    yield rec


# --------------------------------------------------------------------------- checks


def expected_places(config: RulesConfig, loser: int) -> tuple[tuple[int, ...], int]:
    """Places and winning team when ``loser`` forfeits (two sides: the other one wins)."""
    assert config.form is not Form.CUTTHROAT
    lose = team_of(config.form, loser)
    places = tuple(2 if team_of(config.form, s) == lose else 1 for s in range(config.players))
    return places, 1 - lose


def assert_forfeit(result: GameResult, config: RulesConfig, seat: int, bot: str,
                   kind: FaultKind, *, faults: int = 1) -> None:
    assert result.termination is Termination.FORFEIT, result.detail
    assert len(result.faults) == faults, result.faults
    fault = result.faults[-1]
    assert (fault.seat, fault.bot, fault.kind) == (seat, bot, kind), fault
    assert result.forfeited_by == seat
    assert fault.detail in result.detail
    if kind is not FaultKind.STARTUP_FAILURE:  # a no-show's detail is the pool's error
        assert result.detail.startswith(f"seat {seat} ({bot}) forfeits: {kind.value}: ")
    places, winner = expected_places(config, seat)
    assert result.places == places
    assert result.winner == winner
    rec = result.record
    assert rec["termination"] == "forfeit"
    assert rec["places"] == list(places) and rec["winner"] == winner
    assert rec["faults"] == [f.to_dict() for f in result.faults]
    assert rec["faults"][-1]["kind"] == kind.value and rec["faults"][-1]["seat"] == seat
    assert rec["faults"][-1]["bot"] == bot


def assert_game_over_sent(sent: Sent, result: GameResult, names: dict[int, tuple[str, int]],
                          termination: int) -> None:
    """Every live seat got a GameOver for this game with the result's places."""
    for seat, (name, instance) in names.items():
        overs = [g for g in sent.of_kind(name, "game_over", instance)
                 if g.game_id == result.game_id]
        assert len(overs) == 1, (seat, overs)
        g = overs[0]
        assert g.termination == termination
        assert tuple(g.places) == result.places and g.your_place == result.places[seat]
        if result.termination is Termination.FORFEIT:
            assert g.forfeit_seat == result.forfeited_by
            assert g.winner_team == result.winner
            loser = result.forfeited_by
            assert loser is not None
            if seat == loser:
                assert g.detail == result.detail
            else:  # the fault's detail may name the loser's cards: others get a summary
                kind = result.faults[-1].kind.value
                assert g.detail == f"seat {loser} ({result.seats[loser]}) forfeits: {kind}"
        else:
            assert not g.HasField("forfeit_seat")


async def assert_carries_on(a: Arena, game_id: str, config: RulesConfig, seed: int,
                            seats: list[str]) -> GameResult:
    """Another game in the same Arena between well-behaved bots completes normally."""
    result = await a.play(game_id, config, seed, seats, time_control=ROOMY)
    assert result.termination is Termination.NORMAL, result.detail
    assert result.faults == () and result.record["faults"] == []
    assert max(result.scores) >= config.target
    return result


def pid(inst: Instance) -> int | None:
    assert inst.process is not None
    return inst.process.pid


def log_text(a: Arena, name: str, instance: int = 0) -> str:
    return (a.pool.log_dir / f"{name}-{instance}.log").read_text()


# --------------------------------------------------------------------------- decisions


def test_crash_forfeits_and_the_pool_restarts_the_bot(tmp_path: Path, sent: Sent) -> None:
    async def go() -> None:
        async with arena(tmp_path, ("crash", faulty("crash", "--after", "3"), 1),
                         ("random", RANDOM, 2)) as a:
            crash = a.pool.instances("crash")[0]
            rnd = a.pool.instances("random")[0]
            r1 = await a.play("g1", TWO, 1, ["crash", "random"], time_control=ROOMY)
            assert_forfeit(r1, TWO, 0, "crash", FaultKind.CRASH)
            assert crash.process is not None and crash.process.returncode == 3
            assert crash.slot.faults == 1 and rnd.slot.faults == 0
            assert_game_over_sent(sent, r1, {1: ("random", 0)}, rpb.GAME_TERMINATION_FORFEIT)
            first_pid, random_pid = pid(crash), pid(rnd)
            random_session = rnd.slot.session

            # Same entrants again: the crashed bot is restarted (a new process) and ends
            # the game in its own fault again; the random bot keeps its process and stream.
            r2 = await a.play("g2", TWO, 2, ["random", "crash"], time_control=ROOMY)
            assert pid(crash) != first_pid
            assert_forfeit(r2, TWO, 1, "crash", FaultKind.CRASH)
            assert crash.slot.faults == 2 and rnd.slot.faults == 0
            assert pid(rnd) == random_pid and rnd.slot.session is random_session
            assert rnd.slot.live and rnd.slot.games_played == 2
            assert log_text(a, "crash").count("crashing at decision 3") == 2

            await assert_carries_on(a, "g3", TWO, 3, ["random", "random"])
    run(go())


def test_hang_times_out_and_the_other_partnership_wins(tmp_path: Path, sent: Sent) -> None:
    async def go() -> None:
        async with arena(tmp_path, ("hang", faulty("hang"), 1), ("random", RANDOM, 4)) as a:
            # The hanging seat acts first: no well-behaved bot plays under the short clock.
            seats = ["random", "hang", "random", "random"]
            r = await a.play("g1", FOUR, first_to_act(FOUR, 1), seats, time_control=FAST)
            assert_forfeit(r, FOUR, 1, "hang", FaultKind.TIMEOUT)
            assert r.places == (1, 2, 1, 2) and r.winner == 0
            fault = r.faults[0]
            assert "no reply within 1.000s" in fault.detail
            # the referee waited for the whole clock (and, on a loaded machine, maybe more)
            assert 1000 <= r.record["decision_ms"][fault.decision] < 30_000
            faults = sent.of_kind("hang", "fault")
            assert [(f.kind, f.strikes) for f in faults] == [(rpb.FAULT_KIND_TIMEOUT, 1)]
            assert_game_over_sent(sent, r, {1: ("hang", 0), 0: ("random", 0)},
                                  rpb.GAME_TERMINATION_FORFEIT)
            hang = a.pool.instances("hang")[0]
            assert hang.slot.live and hang.slot.state is SlotState.IDLE
            await assert_carries_on(a, "g2", FOUR, 6, ["random"] * 4)
    run(go())


def test_late_reply_times_out_and_is_then_ignored(tmp_path: Path, sent: Sent) -> None:
    async def go() -> None:
        async with arena(tmp_path, ("late", faulty("late", "--delay", "2"), 1),
                         ("random", RANDOM, 2)) as a:
            r = await a.play("g1", TWO, first_to_act(TWO, 1), ["random", "late"],
                             time_control=FAST)
            assert_forfeit(r, TWO, 1, "late", FaultKind.TIMEOUT)
            late = a.pool.instances("late")[0]
            session = late.slot.session
            assert session is not None
            # The reply arrives ~1 s after the timeout: it is ignored, and it is not a
            # protocol violation waiting to be charged at the bot's next decision.
            (timeout,) = sent.of_kind("late", "fault")
            assert (timeout.kind, timeout.strikes) == (rpb.FAULT_KIND_TIMEOUT, 1)
            await wait_until(lambda: f"answered request {timeout.request_id} 2s late"
                             in log_text(a, "late"), timeout=30, what="the late reply")
            await asyncio.sleep(0.2)
            assert session.violation is None and late.slot.live
            assert "game over: g1 GAME_TERMINATION_FORFEIT place=2" in log_text(a, "late")
            await assert_carries_on(a, "g2", TWO, 8, ["random", "random"])
    run(go())


def test_late_replies_under_strikes_are_timeouts_only(tmp_path: Path, sent: Sent) -> None:
    async def go() -> None:
        # The random seat decides between the late bot's strikes: a clock that no stall
        # of a loaded machine reaches for it, and a delay past it for the late bot.
        async with arena(tmp_path, ("late", faulty("late", "--delay", "3"), 1),
                         ("random", RANDOM, 1)) as a:
            r = await a.play("g1", TWO, 9, ["late", "random"],
                             time_control=TimeControl(per_decision=2.5, bank=0.0),
                             policy=STRIKES)
            # Every late answer costs a strike; the stale replies that arrive during later
            # decisions are ignored (never charged as protocol violations).
            assert_forfeit(r, TWO, 0, "late", FaultKind.TIMEOUT, faults=3)
            assert {f.kind for f in r.faults} == {FaultKind.TIMEOUT}
            notices = sent.of_kind("late", "fault")
            assert [f.strikes for f in notices if f.kind == rpb.FAULT_KIND_TIMEOUT] == [1, 2, 3]
            late = [f for f in notices if f.kind != rpb.FAULT_KIND_TIMEOUT]
            assert late and {f.kind for f in late} == {rpb.FAULT_KIND_LATE_REPLY}
    run(go())


@pytest.mark.parametrize(("mode", "kind", "detail"), [
    ("illegal", FaultKind.ILLEGAL_ACTION, r"^take is not legal; legal: pass, order$"),
    ("wrong-id", FaultKind.PROTOCOL_VIOLATION,
     r"^reply to request (\d+), but the open request is (\d+)$"),
])
def test_bad_reply_forfeits(tmp_path: Path, sent: Sent, mode: str, kind: FaultKind,
                            detail: str) -> None:
    seed = first_to_act(TWO, 0)

    async def go() -> None:
        async with arena(tmp_path, (mode, faulty(mode), 1), ("random", RANDOM, 2)) as a:
            r = await a.play("g1", TWO, seed, [mode, "random"], time_control=ROOMY)
            assert_forfeit(r, TWO, 0, mode, kind)
            m = re.match(detail, r.faults[0].detail)
            assert m, r.faults[0].detail
            if mode == "wrong-id":
                assert int(m.group(1)) == int(m.group(2)) + 1000
            (f,) = sent.of_kind(mode, "fault")
            assert (f.kind, f.strikes, f.detail) == (_FAULT_PB[kind], 1, r.faults[0].detail)
            assert f.request_id == 1  # the game's first decision was this seat's
            assert r.hands == 1 and r.record["hands"][0]["actions"] == []
            assert_game_over_sent(sent, r, {0: (mode, 0), 1: ("random", 0)},
                                  rpb.GAME_TERMINATION_FORFEIT)
            await assert_carries_on(a, "g2", TWO, 11, ["random", "random"])
    run(go())


@pytest.mark.parametrize(("mode", "kind"), [
    ("illegal", FaultKind.ILLEGAL_ACTION),
    ("wrong-id", FaultKind.PROTOCOL_VIOLATION),
])
def test_strikes_substitute_then_forfeit(tmp_path: Path, sent: Sent, mode: str,
                                         kind: FaultKind) -> None:
    """Under strikes:3 the first two faults are charged and a legal action (the first of
    the list) is played for the bot, and the Fault says which; the third forfeits."""
    async def go() -> None:
        async with arena(tmp_path, (mode, faulty(mode), 1), ("random", RANDOM, 2)) as a:
            r = await a.play("g1", TWO, 12, ["random", mode], time_control=ROOMY,
                             policy=STRIKES)
            assert_forfeit(r, TWO, 1, mode, kind, faults=3)
            assert all((f.seat, f.kind) == (1, kind) for f in r.faults)
            assert r.record["fault_policy"] == "strikes:3"
            notices = sent.of_kind(mode, "fault")
            assert [(f.kind, f.strikes) for f in notices] == [
                (_FAULT_PB[kind], n) for n in (1, 2, 3)]
            # The record replays, and each action recorded for the faulty seat is the
            # substitute: the first legal action at that point. There are exactly two,
            # and the strike notices name them; the forfeit plays nothing.
            substituted: list[Action] = []
            game = Game(TWO, 12, first_dealer=r.record["first_dealer"])
            for hand in r.record["hands"]:
                for seat, text in hand["actions"]:
                    action = Action.parse(text)
                    if seat == 1:
                        assert action == game.legal_actions()[0]
                        substituted.append(action)
                    game.apply(action)
            assert len(substituted) == 2
            for notice, action in zip(notices, substituted, strict=False):
                assert notice.HasField("played_action")
                assert convert.action_from_pb(notice.played_action) == action
            assert not notices[2].HasField("played_action")
            Game.from_record(r.record)
            await assert_carries_on(a, "g2", TWO, 13, ["random", "random"])
    run(go())


# --------------------------------------------------------------------------- bad bytes


@pytest.mark.parametrize("mode", ["garbage", "huge"])
def test_unreadable_message_forfeits_and_the_bot_is_restarted(tmp_path: Path, sent: Sent,
                                                              mode: str) -> None:
    """Bytes that are not a ConnectRequest, or a reply far above the 64 KiB limit (which
    would otherwise be a valid, legal answer): the referee drops the stream and the seat
    forfeits; the bot process stays alive, so it is not a crash. The pool replaces the
    bot for the next game."""
    async def go() -> None:
        async with arena(tmp_path, (mode, faulty(mode, "--after", "2"), 1),
                         ("random", RANDOM, 2)) as a:
            r = await a.play("g1", TWO, 14, [mode, "random"], time_control=ROOMY)
            assert r.termination is Termination.FORFEIT, r.detail
            kind = r.faults[-1].kind
            assert kind is FaultKind.PROTOCOL_VIOLATION
            assert_forfeit(r, TWO, 0, mode, kind)
            bad = a.pool.instances(mode)[0]
            assert bad.process is not None and bad.process.alive
            assert not bad.slot.live
            assert "at decision 2" in log_text(a, mode)
            first = pid(bad)
            r2 = await a.play("g2", TWO, 15, ["random", mode], time_control=ROOMY)
            assert pid(bad) != first
            assert_forfeit(r2, TWO, 1, mode, kind)
            await assert_carries_on(a, "g3", TWO, 16, ["random", "random"])
    run(go())


@pytest.mark.parametrize("mode", ["garbage", "huge"])
def test_unreadable_message_is_a_protocol_violation(tmp_path: Path, mode: str) -> None:
    """docs/protocol.md: bytes that are not a message, or a message over 64 KiB, are a
    protocol violation (not a disconnect)."""
    async def go() -> None:
        async with arena(tmp_path, (mode, faulty(mode, "--after", "2"), 1),
                         ("random", RANDOM, 1)) as a:
            r = await a.play("g1", TWO, 14, [mode, "random"], time_control=ROOMY)
            assert_forfeit(r, TWO, 0, mode, FaultKind.PROTOCOL_VIOLATION)
            assert "protocol violation" in r.faults[-1].detail
    run(go())


def first_to_act(config: RulesConfig, seat: int) -> int:
    """A seed whose first hand is bid first by ``seat``."""
    return next(s for s in range(1000)
                if (seeded_first_dealer(config, s) + 1) % config.players == seat)


def test_request_ids_increase_on_a_stream_across_games(tmp_path: Path, sent: Sent) -> None:
    async def go() -> None:
        async with arena(tmp_path, ("random", RANDOM, 2)) as a:
            for g in range(2):
                await a.play(f"g{g}", TWO, 25 + g, ["random", "random"], time_control=ROOMY)
            for i in range(2):
                ids = [d.request_id for d in sent.of_kind("random", "decision_request", i)]
                assert len(ids) > 10
                assert all(x < y for x, y in itertools.pairwise(ids)), ids
    run(go())


def test_late_reply_from_a_previous_game_is_not_an_answer(tmp_path: Path) -> None:
    seed = first_to_act(TWO, 0)

    async def go() -> None:
        async with arena(tmp_path, ("late", faulty("late", "--delay", "1.5"), 1),
                         ("random", RANDOM, 1)) as a:
            tc = TimeControl(1.0, 0.0)
            r1 = await a.play("g1", TWO, seed, ["late", "random"], time_control=tc)
            assert_forfeit(r1, TWO, 0, "late", FaultKind.TIMEOUT)
            assert r1.faults[0].decision == 0
            # Game 2 starts at once; the late seat again bids first. Its answer to game 1
            # arrives ~0.5 s into game 2's first request and must not count for it.
            r2 = await a.play("g2", TWO, seed, ["late", "random"], time_control=tc)
            assert_forfeit(r2, TWO, 0, "late", FaultKind.TIMEOUT)
            assert r2.faults[0].decision == 0, r2.record["hands"][0]["actions"]
    run(go())


def test_late_reply_notice_after_a_game_does_not_open_the_next(tmp_path: Path,
                                                               sent: Sent) -> None:
    async def go() -> None:
        async with arena(tmp_path, ("late", faulty("late", "--delay", "1.5"), 1),
                         ("random", RANDOM, 1)) as a:
            r1 = await a.play("g1", TWO, first_to_act(TWO, 0), ["late", "random"],
                              time_control=FAST)
            assert_forfeit(r1, TWO, 0, "late", FaultKind.TIMEOUT)
            # (On a loaded machine the reply may come before game 1 is over, with a
            # late-reply notice of its own: take the timeout's.)
            timeout = next(f for f in sent.of_kind("late", "fault")
                           if f.kind == rpb.FAULT_KIND_TIMEOUT)
            session = a.pool.instances("late")[0].slot.session
            assert session is not None
            # The referee has read the late reply (between games, so it is dropped).
            await wait_until(lambda: session.fate_of(timeout.request_id) == "late",
                             timeout=30, what="the late reply")
            before = len(sent.to("late"))
            await a.play("g2", TWO, 2, ["late", "random"], time_control=FAST)
            first = sent.to("late")[before]
            assert first.WhichOneof("payload") == "game_start", first
    run(go())


def test_faulty_bot_rejects_unknown_mode() -> None:
    """The faulty bot's own command line: an unknown mode is a usage error."""
    p = subprocess.run([PY, "-m", "sample_bots.faulty_bot", "--mode", "nonsense",
                        "--address", "127.0.0.1:1"], cwd=REPO, capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == 2 and "invalid choice" in p.stderr



# --------------------------------------------------------------------------- handshakes


# Runs the faulty bot's own main() after its imports are done and a line arrives on
# stdin: the test decides when the Hello goes out (within milliseconds of ``go``).
_GATED = ("import sys; from sample_bots import faulty_bot; print('ready', flush=True); "
          "sys.stdin.readline(); faulty_bot.main(sys.argv[1:])")


class BotRun:
    """The faulty bot as a plain subprocess pointed at a referee (not started by a pool),
    held back until :meth:`go`."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.released = 0.0

    async def go(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"go\n")
        await self.proc.stdin.drain()
        self.released = time.monotonic()

    async def result(self, timeout: float = 60.0) -> tuple[int, str, float]:
        """Exit status, stderr, and seconds from :meth:`go` to the exit."""
        _, err = await asyncio.wait_for(self.proc.communicate(), timeout)
        assert self.proc.returncode is not None
        return self.proc.returncode, err.decode(), time.monotonic() - self.released


@contextlib.asynccontextmanager
async def bot_subprocess(mode: str, address: str, token: str,
                         *args: str) -> AsyncIterator[BotRun]:
    proc = await asyncio.create_subprocess_exec(
        PY, "-c", _GATED, "--mode", mode, "--address", address, f"--token={token}", *args,
        cwd=REPO, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    try:
        assert proc.stdout is not None
        assert await asyncio.wait_for(proc.stdout.readline(), 60) == b"ready\n"
        yield BotRun(proc)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def registry_state(a: Arena) -> list[tuple[str, str, int, SlotState, Session | None, int]]:
    """What the token registry holds: every slot with its state and live session."""
    return [(s.token, s.name, s.instance, s.state, s.session if s.live else None, s.faults)
            for s in a.server.registry]


async def list_bots(a: Arena) -> list[rpb.BotInfo]:
    async with grpc.aio.insecure_channel(a.server.address) as channel:
        response = await rpc.OperatorServiceStub(channel).ListBots(rpb.ListBotsRequest())
    return list(response.bots)


def game_messages(sent: Sent, name: str, game_id: str, instance: int = 0) -> list[str]:
    """The GameStart and GameOver messages for ``game_id`` sent to a seat instance."""
    return [kind for kind in ("game_start", "game_over")
            for m in sent.of_kind(name, kind, instance) if m.game_id == game_id]


def test_exit_early_is_a_startup_failure_and_the_arena_carries_on(tmp_path: Path,
                                                                  sent: Sent) -> None:
    async def go() -> None:
        async with arena(tmp_path, ("early", faulty("exit-early"), 1),
                         ("random", RANDOM, 2)) as a:
            a.pool.startup_timeout = 60.0
            early = a.pool.instances("early")[0]
            t0 = time.monotonic()
            r = await a.play("g1", TWO, 1, ["random", "early"], time_control=ROOMY)
            # The pool notices the exit; it does not wait out the start-up timeout.
            assert time.monotonic() - t0 < 30
            assert_forfeit(r, TWO, 1, "early", FaultKind.STARTUP_FAILURE)
            assert "(early) forfeits: startup_failure: exited with code 1 before the " \
                   "handshake" in r.detail
            # The end of its log is the fault's own field, never in the (public) detail.
            tail = r.faults[0].log_tail
            assert tail.startswith(f"its log {a.pool.log_dir / 'early-0.log'} ends: ")
            assert "exit-early: exiting before connecting" in tail  # the bot's stderr
            assert "exiting before connecting" not in r.detail
            assert early.process is not None and early.process.returncode == 1
            assert early.slot.faults == 1 and not early.slot.live
            assert early.slot.state is SlotState.WAITING
            # The game never started: the seat that was ready was not left mid-game.
            assert game_messages(sent, "random", "g1") == []
            first = pid(early)

            # The same entrant again: started afresh, and a no-show again.
            r2 = await a.play("g2", TWO, 2, ["early", "random"], time_control=ROOMY)
            assert pid(early) != first
            assert_forfeit(r2, TWO, 0, "early", FaultKind.STARTUP_FAILURE)
            assert "exited with code 1" in r2.detail and early.slot.faults == 2
            assert log_text(a, "early").count("exit-early: exiting before connecting") == 2

            await assert_carries_on(a, "g3", TWO, 3, ["random", "random"])
    run(go())


def test_no_handshake_entrant_is_a_startup_failure(tmp_path: Path, sent: Sent) -> None:
    async def go() -> None:
        async with arena(tmp_path, ("silent", faulty("no-handshake"), 1),
                         ("random", RANDOM, 2), handshake_timeout=1.0) as a:
            a.pool.startup_timeout = 60.0
            silent = a.pool.instances("silent")[0]
            t0 = time.monotonic()
            r = await a.play("g1", TWO, 4, ["random", "silent"], time_control=ROOMY)
            elapsed = time.monotonic() - t0
            assert_forfeit(r, TWO, 1, "silent", FaultKind.STARTUP_FAILURE)
            # The referee dropped the silent stream after its 1 s handshake timeout (the
            # bot then exits 4), well before the pool's 60 s start-up timeout.
            assert 0.9 <= elapsed < 30, elapsed
            assert "(silent) forfeits: startup_failure: exited with code 4 before the " \
                   "handshake" in r.detail
            assert re.search(r"dropped by the referee after \d+\.\d+s: DEADLINE_EXCEEDED",
                             r.faults[0].log_tail), r.faults[0].log_tail
            assert silent.process is not None and silent.process.returncode == 4
            assert silent.slot.faults == 1 and not silent.slot.live
            assert game_messages(sent, "random", "g1") == []
            await assert_carries_on(a, "g2", TWO, 5, ["random", "random"])
    run(go())


def test_silent_stream_is_dropped_after_the_handshake_timeout(tmp_path: Path) -> None:
    async def go() -> None:
        async with arena(tmp_path, ("random", RANDOM, 2), handshake_timeout=1.0) as a:
            a.add(Entrant("remote", tokens=("remote-token-0",)), 1)
            await a.play("g1", TWO, 6, ["random", "random"], time_control=ROOMY)
            remote = a.pool.instances("remote")[0]
            before, bots_before = registry_state(a), await list_bots(a)
            assert len(before) == 3 and len(bots_before) == 3
            async with bot_subprocess("no-handshake", a.server.address,
                                      "remote-token-0") as bot:
                await bot.go()
                code, err, elapsed = await bot.result()
            assert code == 4, err
            m = re.search(r"dropped by the referee after (\d+\.\d+)s: DEADLINE_EXCEEDED", err)
            assert m, err
            # not before the 1 s handshake timeout (and not after the 60 s bound above)
            assert 1.0 <= float(m.group(1)) < 30, err
            assert 1.0 <= elapsed < 30
            assert registry_state(a) == before and await list_bots(a) == bots_before
            assert not remote.slot.live and remote.slot.state is SlotState.WAITING
            await assert_carries_on(a, "g2", TWO, 7, ["random", "random"])
    run(go())


def test_bad_token_is_refused(tmp_path: Path) -> None:
    async def go() -> None:
        async with arena(tmp_path, ("random", RANDOM, 2)) as a:
            a.add(Entrant("remote", tokens=("remote-token-0",)), 1)
            await a.play("g1", TWO, 8, ["random", "random"], time_control=ROOMY)
            before, bots_before = registry_state(a), await list_bots(a)
            async with bot_subprocess("bad-token", a.server.address, "remote-token-0") as bot:
                await bot.go()
                code, err, _ = await bot.result()
            assert code == 2, err
            assert "refused: REFUSAL_REASON_BAD_TOKEN: unknown token" in err
            assert "ACCEPTED" not in err
            assert registry_state(a) == before and await list_bots(a) == bots_before
            assert not a.pool.instances("remote")[0].slot.live
            await assert_carries_on(a, "g2", TWO, 9, ["random", "random"])
    run(go())


def test_stolen_token_is_refused_and_the_victim_plays_on(tmp_path: Path, sent: Sent) -> None:
    async def go() -> None:
        # The opponent answers legally after 20 ms: the game lasts long enough to be
        # under way when the thief says Hello.
        async with arena(tmp_path, ("random", RANDOM, 1),
                         ("slow", faulty("late", "--delay", "0.02"), 1)) as a:
            victim = a.pool.instances("random")[0]
            async with bot_subprocess("steal-token", a.server.address, "",
                                      f"--other-token={victim.slot.token}") as thief:
                game = asyncio.ensure_future(
                    a.play("g1", TWO, 10, ["random", "slow"], time_control=ROOMY))
                await wait_until(lambda: victim.slot.state is SlotState.PLAYING, timeout=10,
                                 what="the game to start")
                await wait_until(lambda: len(sent.of_kind("random", "decision_request")) >= 2,
                                 timeout=10, what="the game to be under way")
                session = victim.slot.session
                assert session is not None
                await thief.go()
                code, err, _ = await thief.result()
                assert not game.done(), "the game ended before the theft was settled"
            assert code == 2, err
            assert "refused: REFUSAL_REASON_TOKEN_IN_USE" in err and "ACCEPTED" not in err
            assert victim.slot.session is session and not session.closed.is_set()
            r = await game
            assert r.termination is Termination.NORMAL, r.detail
            assert r.faults == () and r.record["faults"] == []
            assert victim.slot.session is session and victim.slot.live
            assert victim.slot.faults == 0 and victim.slot.games_played == 1
            assert_game_over_sent(sent, r, {0: ("random", 0), 1: ("slow", 0)},
                                  rpb.GAME_TERMINATION_NORMAL)

            # A token nobody issued is not "in use": it is a bad token.
            before = registry_state(a)
            async with bot_subprocess("steal-token", a.server.address, "",
                                      "--other-token=t-never-issued") as thief:
                await thief.go()
                code, err, _ = await thief.result()
            assert code == 2, err
            assert "refused: REFUSAL_REASON_BAD_TOKEN" in err
            assert registry_state(a) == before and victim.slot.session is session
    run(go())


def test_second_stream_is_refused_and_the_first_plays_on(tmp_path: Path, sent: Sent) -> None:
    async def go() -> None:
        async with arena(tmp_path, ("two", faulty("two-streams"), 1),
                         ("random", RANDOM, 1)) as a:
            two = a.pool.instances("two")[0]
            r = await a.play("g1", TWO, 11, ["two", "random"], time_control=ROOMY)
            assert r.termination is Termination.NORMAL, r.detail
            assert r.faults == () and r.record["faults"] == []
            assert max(r.scores) >= TWO.target
            assert_game_over_sent(sent, r, {0: ("two", 0), 1: ("random", 0)},
                                  rpb.GAME_TERMINATION_NORMAL)
            text = log_text(a, "two")
            assert "second stream refused: REFUSAL_REASON_TOKEN_IN_USE" in text, text
            assert "ACCEPTED" not in text and "without a refusal" not in text
            # One Welcome, and it is the session that played the game.
            session = two.slot.session
            assert session is not None and two.slot.live
            assert re.findall(r"welcome: session (\S+)", text) == [session.id]
            await wait_until(lambda: "game over: g1 GAME_TERMINATION_NORMAL"
                             in log_text(a, "two"), timeout=30, what="the bot to see its game over")
            assert two.slot.faults == 0
            first = pid(two)
            r2 = await a.play("g2", TWO, 12, ["random", "two"], time_control=ROOMY)
            assert r2.termination is Termination.NORMAL and r2.faults == ()
            assert pid(two) == first and two.slot.session is session
    run(go())


# --------------------------------------------------------------------------- shutdown


def test_shutdown_interrupts_a_running_game(tmp_path: Path, sent: Sent) -> None:
    """The referee stops during a game of slow but legal bots: the game gets the grace
    period, then ends INTERRUPTED; the bots are told (GameOver, then Shutdown) and exit
    0; a Hello during the grace period is refused with SHUTTING_DOWN."""
    async def go() -> None:
        async with arena(tmp_path, ("slow", faulty("late", "--delay", "0.2"), 2),
                         shutdown_grace=0.3) as a:
            a.add(Entrant("latecomer", tokens=("latecomer-token",)), 1)
            slow = a.pool.instances("slow")
            async with bot_subprocess("late", a.server.address, "latecomer-token") as bot:
                game = asyncio.ensure_future(a.play("g1", TWO, 13, ["slow", "slow"],
                                                    time_control=TimeControl(2.0, 0.0)))
                await wait_until(lambda: sum(len(sent.of_kind("slow", "decision_request", i))
                                             for i in range(2)) >= 2, timeout=10,
                                 what="the game to be under way")
                t0 = time.monotonic()
                stopping = asyncio.ensure_future(a.server.stop())
                await wait_until(lambda: a.server.shutting_down, timeout=10,
                                 what="the shutdown to begin")
                await bot.go()
                code, err, _ = await bot.result()
                await asyncio.wait_for(stopping, 60)
                stopped = time.monotonic() - t0
            assert code == 2, err
            assert "refused: REFUSAL_REASON_SHUTTING_DOWN" in err
            # the running game had its grace period; that it was then cut short (not played
            # out) is what its result below shows
            assert 0.3 <= stopped < 30, stopped
            assert game.done()
            r = game.result()
            assert r.termination is Termination.INTERRUPTED, r.detail
            assert r.places == (0, 0) and r.winner is None and r.faults == ()
            assert r.record["termination"] == "interrupted"
            assert r.record["places"] == [0, 0] and r.record["winner"] is None
            assert max(r.scores) < TWO.target
            for i in range(2):
                kinds = [m.WhichOneof("payload") for m in sent.to("slow", i)]
                assert kinds[0] == "game_start" and kinds[-2:] == ["game_over", "shutdown"]
                (over,) = sent.of_kind("slow", "game_over", i)
                assert over.game_id == "g1"
                assert over.termination == rpb.GAME_TERMINATION_INTERRUPTED
                assert tuple(over.places) == (0, 0) and over.your_place == 0
                assert not over.HasField("winner_team")
                proc = slow[i].process
                assert proc is not None
                assert await asyncio.wait_for(proc.wait(), 30) == 0
                text = log_text(a, "slow", i)
                assert "game over: g1 GAME_TERMINATION_INTERRUPTED place=0" in text
                assert "shutdown: the referee is shutting down" in text
            assert not a.pool.instances("latecomer")[0].slot.ever_connected
    run(go())
