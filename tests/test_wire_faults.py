"""Wire-level faults over real gRPC with real bot processes: second replies, reply floods,
messages that are too big or do not parse, and an oversized Hello.

Each misbehaviour is a mode of ``sample_bots/faulty_bot.py``; the helpers come from
``test_faults``. Where the referee ends a stream for a violation, the bot's log shows
what it received (its Fault, its GameOver) and the status the stream ended with.
"""

from __future__ import annotations

import re
from pathlib import Path

import grpc
import pytest
from test_faults import (
    RANDOM,
    ROOMY,
    STRIKES,
    TWO,
    Sent,
    arena,
    assert_carries_on,
    assert_forfeit,
    assert_game_over_sent,
    bot_subprocess,
    faulty,
    first_to_act,
    log_text,
    registry_state,
    run,
    sent,
)
from waiting import wait_until

from harness.protocol import rpb
from harness.referee.arena import Arena
from harness.referee.outcome import FaultKind, GameResult, Termination, TimeControl
from harness.referee.pool import Entrant
from harness.referee.session import FLOOD_LIMIT, MAX_NOTICES, Session
from harness.rules import Form, RulesConfig

__all__ = ["sent"]  # the fixture, imported for the tests below


async def violation_on_first_decision(a: Arena, name: str) -> GameResult:
    """Game g1 of ``name`` (seat 0, first to act) against ``random``: it must forfeit by
    a protocol violation."""
    r = await a.play("g1", TWO, first_to_act(TWO, 0), [name, "random"], time_control=ROOMY)
    assert_forfeit(r, TWO, 0, name, FaultKind.PROTOCOL_VIOLATION)
    return r


def test_second_reply_to_a_decision_is_a_protocol_violation(tmp_path: Path,
                                                             sent: Sent) -> None:
    """referee.proto: a second reply is a fault. It is charged as a protocol violation
    (under the default forfeit policy: the game is lost), never labelled a late reply."""
    async def go() -> None:
        async with arena(tmp_path, ("dup", faulty("duplicate"), 1),
                         ("random", RANDOM, 2)) as a:
            r = await violation_on_first_decision(a, "dup")
            assert re.fullmatch(r"a second reply to request 1", r.faults[0].detail), r.faults
            notices = sent.of_kind("dup", "fault")
            assert [(f.kind, f.strikes) for f in notices] == [
                (rpb.FAULT_KIND_PROTOCOL_VIOLATION, 1)], notices
            assert_game_over_sent(sent, r, {0: ("dup", 0), 1: ("random", 0)},
                                  rpb.GAME_TERMINATION_FORFEIT)
            await assert_carries_on(a, "g2", TWO, 3, ["random", "random"])
    run(go())


def test_second_replies_under_strikes_cost_strikes(tmp_path: Path, sent: Sent) -> None:
    """Under strikes:3 each second reply costs one strike (a legal action is played for
    the bot at its next decision), and the third forfeits."""
    async def go() -> None:
        async with arena(tmp_path, ("dup", faulty("duplicate"), 1),
                         ("random", RANDOM, 1)) as a:
            r = await a.play("g1", TWO, 12, ["random", "dup"], time_control=ROOMY,
                             policy=STRIKES)
            assert_forfeit(r, TWO, 1, "dup", FaultKind.PROTOCOL_VIOLATION, faults=3)
            assert all(f.detail.startswith("a second reply to request ") for f in r.faults)
            # A second reply that arrives while the bot's next request is open fails that
            # request; the bot's own answer to it then comes after the decision was
            # settled: a late reply, noticed but not charged.
            notices = sent.of_kind("dup", "fault")
            assert [(f.kind, f.strikes) for f in notices
                    if f.kind != rpb.FAULT_KIND_LATE_REPLY] == [
                (rpb.FAULT_KIND_PROTOCOL_VIOLATION, n) for n in (1, 2, 3)]
    run(go())


def test_reply_flood_is_a_protocol_violation_with_few_notices(tmp_path: Path,
                                                             sent: Sent) -> None:
    """20,000 copies of one reply: the bot loses by protocol_violation (not by timeout),
    gets a few Fault notices at most, and the referee ends its stream (reading at most
    the flood limit's worth of copies, so the flood cannot grow the referee's memory)."""
    async def go() -> None:
        async with arena(tmp_path, ("flood", faulty("flood"), 1),
                         ("random", RANDOM, 2)) as a:
            r = await violation_on_first_decision(a, "flood")
            notices = sent.of_kind("flood", "fault")
            assert 1 <= len(notices) <= MAX_NOTICES + 1, notices
            assert len(sent.to("flood")) < 100
            assert_game_over_sent(sent, r, {0: ("flood", 0), 1: ("random", 0)},
                                  rpb.GAME_TERMINATION_FORFEIT)
            await wait_until(lambda: "dropped by the referee" in log_text(a, "flood"), timeout=20,
                             what="the flooded stream to end")
            flooder = a.pool.instances("flood")[0]
            assert flooder.process is not None and flooder.process.alive
            assert not flooder.slot.live
            await assert_carries_on(a, "g2", TWO, 3, ["random", "random"])
    run(go(), timeout=90)


def test_reply_flood_under_strikes_ends_the_stream(tmp_path: Path, sent: Sent) -> None:
    """Under strikes the flood cannot buy time either: past the flood limit the stream is
    ended, and the game is forfeited as a protocol violation."""
    async def go() -> None:
        async with arena(tmp_path, ("flood", faulty("flood"), 1),
                         ("random", RANDOM, 1)) as a:
            r = await a.play("g1", TWO, first_to_act(TWO, 0), ["flood", "random"],
                             time_control=ROOMY, policy=STRIKES)
            assert r.termination is Termination.FORFEIT, r.detail
            assert {f.kind for f in r.faults} == {FaultKind.PROTOCOL_VIOLATION}
            assert r.forfeited_by == 0
            assert len(r.faults) == STRIKES.max_strikes
            assert any("a flood of messages" in f.detail for f in r.faults), r.faults
            assert len(sent.of_kind("flood", "fault")) <= STRIKES.max_strikes + MAX_NOTICES
            (over,) = sent.of_kind("flood", "game_over")
            assert over.termination == rpb.GAME_TERMINATION_FORFEIT
    run(go(), timeout=90)


def assert_ended_as_flood(session: Session | None) -> None:
    """The referee ended ``session`` as a flood. (The bot, still writing its flood when
    the stream ends, sees its own write fail; gRPC then reports INTERNAL to it, not the
    referee's status.)"""
    assert session is not None and session.closed.is_set() and session.violated
    assert session.end_status is not None
    assert session.end_status.code is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert session.end_status.detail == (
        f"protocol violation: a flood of messages that answer no open request "
        f"({FLOOD_LIMIT + 1} since the last decision request)")  # it stopped reading there


def test_flood_of_other_messages_in_a_game_ends_the_stream(tmp_path: Path,
                                                          sent: Sent) -> None:
    """Not only replies count toward the flood limit: a bot that answers its decision,
    then sends Hello after Hello while it waits for its turn, forfeits by
    protocol_violation and its stream is ended as a flood (RESOURCE_EXHAUSTED) once its
    Fault and GameOver are sent; the referee stops reading long before the flood is
    through."""
    async def go() -> None:
        async with arena(tmp_path, ("hflood", faulty("flood", "--flood-with", "hello"), 1),
                         ("random", RANDOM, 2)) as a:
            r = await violation_on_first_decision(a, "hflood")
            assert_game_over_sent(sent, r, {0: ("hflood", 0), 1: ("random", 0)},
                                  rpb.GAME_TERMINATION_FORFEIT)
            await wait_until(lambda: "dropped by the referee" in log_text(a, "hflood"), timeout=30,
                             what="the flooded stream to end")
            flooder = a.pool.instances("hflood")[0]
            assert flooder.process is not None and flooder.process.alive
            assert not flooder.slot.live
            assert_ended_as_flood(flooder.slot.session)
            await assert_carries_on(a, "g2", TWO, 3, ["random", "random"])
    run(go(), timeout=90)


def test_idle_bot_flooding_is_cut_off_at_once(tmp_path: Path) -> None:
    """A bot seated in no game (so with no decision to charge) that floods Hellos after
    its handshake: its stream is ended as a flood right away, not left open."""
    async def go() -> None:
        async with arena(tmp_path, ("random", RANDOM, 2)) as a:
            a.add(Entrant("remote", tokens=("remote-token-0",)), 1)
            remote = a.pool.instances("remote")[0]
            async with bot_subprocess("idle-flood", a.server.address, "remote-token-0",
                                      "--copies", "5000") as bot:
                await bot.go()
                code, err, _ = await bot.result()
            assert code == 4, err
            assert remote.slot.ever_connected and not remote.slot.live
            assert_ended_as_flood(remote.slot.session)
            await assert_carries_on(a, "g1", TWO, 3, ["random", "random"])
    run(go(), timeout=90)


def _wire_fault_test(tmp_path: Path, sent: Sent, mode: str, status: str) -> None:
    async def go() -> None:
        async with arena(tmp_path, (mode, faulty(mode, "--after", "2"), 1),
                         ("random", RANDOM, 2)) as a:
            r = await a.play("g1", TWO, 14, [mode, "random"], time_control=ROOMY)
            assert_forfeit(r, TWO, 0, mode, FaultKind.PROTOCOL_VIOLATION)
            assert_game_over_sent(sent, r, {0: (mode, 0), 1: ("random", 0)},
                                  rpb.GAME_TERMINATION_FORFEIT)
            # What the bot itself received, in order, then how its stream ended.
            await wait_until(lambda: "dropped by the referee" in log_text(a, mode), timeout=20,
                             what="the stream to end")
            text = log_text(a, mode)
            fault = text.index("fault: FAULT_KIND_PROTOCOL_VIOLATION strikes=1")
            over = text.index("game over: g1 GAME_TERMINATION_FORFEIT place=2")
            m = re.search(r"dropped by the referee: (\w+): (.*)", text)
            assert m and fault < over < m.start(), text
            assert m.group(1) == status, text
            assert m.group(2).startswith("protocol violation: "), text
            assert m.group(2) in r.faults[0].detail
            await assert_carries_on(a, "g2", TWO, 16, ["random", "random"])
    run(go(), timeout=60)


def test_undecodable_message_sends_fault_and_game_over_then_an_error_status(
        tmp_path: Path, sent: Sent) -> None:
    _wire_fault_test(tmp_path, sent, "garbage", "INVALID_ARGUMENT")


def test_oversized_message_sends_fault_and_game_over_then_an_error_status(
        tmp_path: Path, sent: Sent) -> None:
    _wire_fault_test(tmp_path, sent, "huge", "RESOURCE_EXHAUSTED")


def test_message_over_the_transport_limit_is_a_disconnect(tmp_path: Path) -> None:
    """docs/protocol.md: a message over gRPC's own 4 MiB limit never reaches the referee;
    the transport ends the stream (RESOURCE_EXHAUSTED for the bot), which the referee
    cannot tell from a hang-up: it is stored as a disconnect."""
    async def go() -> None:
        async with arena(tmp_path, ("giant", faulty("giant", "--after", "2"), 1),
                         ("random", RANDOM, 2)) as a:
            r = await a.play("g1", TWO, 14, ["giant", "random"], time_control=ROOMY)
            assert_forfeit(r, TWO, 0, "giant", FaultKind.DISCONNECT)
            await wait_until(lambda: "dropped by the referee" in log_text(a, "giant"), timeout=20,
                             what="the bot to see its stream end")
            assert "RESOURCE_EXHAUSTED" in log_text(a, "giant")
            await assert_carries_on(a, "g2", TWO, 16, ["random", "random"])
    run(go(), timeout=60)


@pytest.mark.parametrize(("mode", "detail"), [
    ("huge-hello", r"a \d+-byte Hello \(the limit is 65536 bytes\)"),
    ("garbage-hello", r"the first message does not parse"),
])
def test_oversized_or_undecodable_hello_is_refused(tmp_path: Path, mode: str,
                                                    detail: str) -> None:
    async def go() -> None:
        async with arena(tmp_path, ("random", RANDOM, 2)) as a:
            a.add(Entrant("remote", tokens=("remote-token-0",)), 1)
            before = registry_state(a)
            async with bot_subprocess(mode, a.server.address, "remote-token-0") as bot:
                await bot.go()
                code, err, _ = await bot.result()
            assert code == 2, err
            assert re.search(r"refused: REFUSAL_REASON_MALFORMED: " + detail, err), err
            assert registry_state(a) == before
            assert not a.pool.instances("remote")[0].slot.ever_connected
    run(go())


def test_a_bot_that_holds_back_its_stream_cannot_think_off_the_clock(tmp_path: Path) -> None:
    """A bot with a receive window of a few bytes that "thinks" before it reads blocks
    the referee's write of its next request meanwhile. The decision's clock runs from
    the moment that write begins (network time is the bot's): the request, still unread
    when its time (at least 1 s) is up, is abandoned, and it loses on time instead of
    thinking for free. (It takes no bundles, so the game also waits for it
    to read its events: once that wait passes the game's free seconds, with no bank,
    its time runs out there instead, the same fault.)"""
    async def go() -> None:
        async with arena(tmp_path, ("slow", faulty("slow-read", "--delay", "1.5"), 1),
                         ("random", RANDOM, 1)) as a:
            one_point = RulesConfig(form=Form.TWO_HANDED, target=1)
            r = await a.play("g1", one_point, first_to_act(one_point, 0), ["slow", "random"],
                             time_control=TimeControl(per_decision=0.5, bank=0.0))
            assert_forfeit(r, one_point, 0, "slow", FaultKind.TIMEOUT)
            assert re.fullmatch(r"slow: no reply within 0\.500s( \(it did not read its "
                                r"request, so its stream was ended\))?|"
                                r"slow: its time ran out while "
                                r"the game waited for it to read its messages \(.*\)",
                                r.faults[0].detail), r.faults
    run(go())
