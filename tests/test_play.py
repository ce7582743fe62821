"""The human seat: ``euchre-harness play`` and :mod:`harness.sdk.human`.

The end-to-end test runs the real command in a pseudo-terminal (pexpect), with the real
referee and the heuristic bots as processes, and answers every prompt as a person would,
including a wrong key that must be asked again. The other tests check the screen's pieces
and the input validation directly.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from harness._generated.euchre.v1 import referee_pb2 as rpb
from harness.cli.play import NO_CLOCK, clock, seat_plan
from harness.errors import HarnessError, HumanQuit
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.rules import Form, Game, RulesConfig
from harness.rules.actions import Action, ActionKind
from harness.rules.cards import Suit, parse_cards
from harness.sdk.human import HumanBot, Table, numbered, parse_choice, sorted_hand

PROMPT = re.compile(r"Your choice \[1-(\d+)\]: ")


@pytest.mark.parametrize("options", [
    [],
    ["--form", "two-handed", "--deck", "32", "--seat", "1"],
    ["--form", "cutthroat", "--deck", "25", "--seat", "2",
     "--bot", "random={python} -m sample_bots.random_bot"],
], ids=["four-handed", "two-handed", "cutthroat-random-bots"])
def test_play_runs_a_whole_game_in_a_terminal_and_asks_again_after_a_wrong_key(
        options: list[str]) -> None:
    # The bots' choices are seeded too (EUCHRE_BOT_SEED), so the game is the same every
    # run: a random bot could otherwise end it in one lone hand.
    child = pexpect.spawn(sys.executable, ["-m", "harness", "play", "--seed", "7",
                                           "--target", "3", *options],
                          env={**os.environ, "EUCHRE_BOT_SEED": "3"},
                          encoding="utf-8", timeout=90, dimensions=(50, 120))
    try:
        child.expect(PROMPT)
        # A wrong key (and a number out of range) is explained and asked again.
        child.sendline("x")
        child.expect("'x' is not one of the choices")
        child.expect(PROMPT)
        assert isinstance(child.match, re.Match)
        count = int(child.match.group(1))
        child.sendline(str(count + 1))
        child.expect("is not one of the choices")
        child.expect(PROMPT)
        decisions = 0
        while True:
            child.sendline("1")
            decisions += 1
            if child.expect([PROMPT, r"Game over\.[^\n]*"]) == 1:
                break
            assert decisions < 500, "the game does not end"
        ending = str(child.after)
        child.expect(r"Deal seed 7")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, child.before
    assert "Final score" in ending
    # A normal end (a forfeit would say "The game ended early").
    assert re.search(r"You (win!|lose\.|finish (first|second|third)\.)", ending), ending
    assert decisions >= 3


class Screen:
    """A HumanBot at the first decision of a game, writing to a buffer and reading the
    answers queued in ``answers`` (then the end of the input)."""

    def __init__(self) -> None:
        self.game = Game(RulesConfig(), 3)
        seat = self.game.current
        assert seat is not None
        self.obs = self.game.observation(seat)
        self.legal = self.game.legal_actions()
        self.out = io.StringIO()
        self.answers: list[str] = []
        self.bot = HumanBot(read=self.read, out=self.out)
        self.bot.on_game_start(RulesConfig(), seat, ["a", "b", "c", "d"])

    def read(self, prompt: str) -> str:
        self.out.write(prompt)
        if not self.answers:
            raise EOFError
        return self.answers.pop(0)

    def choose(self, *answers: str) -> Action:
        self.answers.extend(answers)
        return self.bot.choose(self.obs, self.legal)


def test_a_wrong_answer_is_asked_again_and_never_returned() -> None:
    screen = Screen()
    action = screen.choose("", "zz", "0", str(len(screen.legal) + 1), "2")
    assert action is screen.legal[1]
    text = screen.out.getvalue()
    assert text.count("is not one of the choices") == 4
    assert text.count("Your choice [1-") == 5


def test_q_or_the_end_of_input_leaves_the_game() -> None:
    screen = Screen()
    with pytest.raises(HumanQuit):
        screen.choose("q")
    with pytest.raises(HumanQuit):  # no answers left: the end of the input
        screen.choose()


def test_the_screen_shows_the_hand_the_upcard_and_numbered_choices() -> None:
    screen = Screen()
    screen.choose("1")
    text = screen.out.getvalue()
    assert f"upcard {screen.obs.upcard}" in text
    assert "Your hand:" in text
    assert all(str(c) in text for c in screen.obs.hand)
    assert {a.kind for a in screen.legal} == {ActionKind.PASS, ActionKind.ORDER_UP}
    assert f"1) pass   2) order up {screen.obs.upcard}" in text


def test_the_hand_is_sorted_by_suit_with_trumps_first_and_bowers_on_top() -> None:
    cards = parse_cards("9h Ac Js Jc Ts Ah As")
    groups = sorted_hand(cards, Suit.SPADES)
    assert [[str(c) for c in g] for g in groups] == [["Js", "Jc", "As", "Ts"], ["Ac"],
                                                      ["Ah", "9h"]]
    assert [[str(c) for c in g] for g in sorted_hand(cards, None)] == [
        ["Ac", "Jc"], ["Ah", "9h"], ["As", "Js", "Ts"]]


def test_a_choice_is_named_by_its_number_or_its_text() -> None:
    choices = ["Js*", "Ah", "pass"]
    assert parse_choice("1", choices) == 0
    assert parse_choice(" js ", choices) == 0
    assert parse_choice("PASS", choices) == 2
    for wrong in ("0", "4", "", "x", "-1"):
        assert parse_choice(wrong, choices) is None


def test_seats_are_named_from_the_persons_point_of_view() -> None:
    table = Table(RulesConfig(), 1, ["a", "you", "b", "c"])
    assert [table.who(s) for s in range(4)] == ["East", "You", "West", "North"]
    assert table.partner(3)
    assert table.does(1, "pass") == "You pass"
    assert table.does(2, "go", "alone!") == "West goes alone!"
    assert table.scores([3, 5]) == "you & North 5, West & East 3"
    cut = Table(RulesConfig(form=Form.CUTTHROAT), 0, ["you", "a", "b"])
    assert cut.scores([1, 2, 3]) == "You 1, Left 2, Right 3"


def test_seat_plan_puts_the_person_in_the_chosen_seat_and_bots_after() -> None:
    def bot(name: str) -> Entrant:
        return Entrant(name, BotCommand(("true",)))

    rules = RulesConfig()
    assert seat_plan(rules, 2, "me", [bot("a"), bot("b")]) == ["b", "a", "me", "a"]
    assert seat_plan(RulesConfig(form=Form.TWO_HANDED), 0, "me", [bot("a")]) == ["me", "a"]
    with pytest.raises(HarnessError, match="--seat"):
        seat_plan(rules, 4, "me", [bot("a")])
    with pytest.raises(HarnessError, match="--name"):
        seat_plan(rules, 0, "a", [bot("a")])


def test_a_long_list_of_choices_wraps_between_choices() -> None:
    text = numbered([f"discard {c}" for c in parse_cards("Ac Kc Qc Jc Tc 9c Ad Kd Qd Jd")])
    lines = text.splitlines()
    assert len(lines) > 1
    assert all(len(line) <= 78 for line in lines)
    assert all(re.fullmatch(r"(Your choices:)? *(\d+\) discard \w\w *)+", line)
               for line in lines)


def test_people_have_no_clock_unless_asked() -> None:
    assert clock(None) is NO_CLOCK
    assert NO_CLOCK.per_decision >= 24 * 3600
    assert NO_CLOCK.per_decision * 1000 < 2**32  # the protocol counts milliseconds in 32 bits
    assert str(clock("30+60")) == "30+60"


def test_the_end_of_the_game_says_how_it_ended() -> None:
    screen = Screen()
    screen.bot.on_game_over(rpb.GameOver(scores=[10, 4], your_place=1,
                                         termination=rpb.GAME_TERMINATION_NORMAL))
    early = Screen()
    early.bot.on_game_over(rpb.GameOver(scores=[0, 0], places=[0, 0, 0, 0], your_place=0,
                                        termination=rpb.GAME_TERMINATION_INTERRUPTED,
                                        detail="the referee shut down"))
    assert "Game over. You win!  Final score:" in screen.out.getvalue()
    assert "The game ended early: the referee shut down" in early.out.getvalue()
    assert screen.bot.over.is_set()


def test_a_bot_that_cannot_start_ends_the_game_with_the_reason(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-bot"
    done = subprocess.run([sys.executable, "-m", "harness", "play", "--bot", f"x={missing}",
                           "--log-dir", str(tmp_path)], input="", capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert "startup_failure" in done.stderr
    assert "Your choice" not in done.stdout
