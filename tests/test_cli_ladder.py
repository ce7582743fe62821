"""``euchre-harness ladder CONFIG ACTION``: register prints the token once and the store
keeps only its hash; rotate, retire, restore and standings work on the store; the
standings show ratings, sweeps and why a bot is not playing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from configs import HEURISTIC, RANDOM, Bot, bot, remote, toml_config

from harness.cli import build_parser
from harness.errors import ConfigError
from harness.ladder.quarantine import Quarantine
from harness.ladder.registry import Registry
from harness.referee.outcome import Termination
from harness.storage.ladder import LadderStore
from harness.storage.results import GameRow, ResultsStore

HOUSE = (bot("random_bot", RANDOM), bot("heuristic_bot", HEURISTIC))


def config_text(output: Path, *more: Bot) -> str:
    return toml_config("test-ladder", output=output, concurrency=1, bots=(*HOUSE, *more))


def _ladder(tmp_path: Path, *words: str) -> int:
    config = tmp_path / "ladder.toml"
    if not config.exists():
        config.write_text(config_text(tmp_path / "out"))
    args = build_parser().parse_args(["ladder", str(config), *words])
    code: int = args.handler(args)
    return code


def test_register_prints_the_token_once_and_stores_only_its_hash(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _ladder(tmp_path, "register", "mybot", "--owner", "me") == 0
    out = capsys.readouterr().out
    name, token = out.split()
    assert name == "mybot:" and token.startswith("eh_")
    store_path = tmp_path / "out" / "ladder.sqlite"
    assert token.split("_", 2)[2].encode() not in store_path.read_bytes()
    with LadderStore(store_path) as store:
        entrant = Registry(store).authenticate(token)
    assert entrant is not None and entrant.concurrency == 2  # same-bot partnerships


def test_rotate_retire_restore_and_standings(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    _ladder(tmp_path, "register", "mybot", "--owner", "me", "--concurrency", "3")
    old = capsys.readouterr().out.split()[1]
    assert _ladder(tmp_path, "rotate", "mybot") == 0
    new = capsys.readouterr().out.split()[1]
    assert _ladder(tmp_path, "retire", "mybot") == 0
    _ladder(tmp_path, "standings")
    assert "retired" in capsys.readouterr().out
    assert _ladder(tmp_path, "restore", "mybot") == 0
    with LadderStore(tmp_path / "out" / "ladder.sqlite") as store:
        registry = Registry(store)
        assert registry.authenticate(old) is None and registry.authenticate(new) is not None


def test_a_ladder_config_with_remote_tokens_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "ladder.toml"
    config.write_text(config_text(tmp_path / "out", remote("far", "t1", "t2")))
    with pytest.raises(ConfigError) as info:
        _ladder(tmp_path, "standings")
    assert info.value.option == "bot"


def _store_games(path: Path, games: list[tuple[str, str, bool]]) -> None:
    """Store ``(a, b, a_won)`` games, each the only table of a complete deal set."""
    with LadderStore(path) as store, ResultsStore(path) as results:
        results.ensure_tournament("test-ladder", "ladder", {"kind": "ladder"})
        for i, (a, b, a_won) in enumerate(games):
            store.start_set(f"s{i}", i, json.dumps([a, b, a, b]), "complete", "")
            record = {"tournament": {"id": "test-ladder", "key": f"s{i}/t0",
                                     "group": f"s{i}", "table": 0, "sides": [[a], [b]]}}
            results.record_game(GameRow(
                "test-ladder", f"s{i}/t0", "four-handed", i, (a, b, a, b),
                Termination.NORMAL, (10, 4), (1, 2, 1, 2) if a_won else (2, 1, 2, 1), 5,
                "", "", 1.0, record))


def test_standings_from_the_store_show_ratings_sweeps_and_every_note(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("ace", "bob", "cat", "dan", "eve"):
        _ladder(tmp_path, "register", name, "--owner", "me")
    store_path = tmp_path / "out" / "ladder.sqlite"
    _store_games(store_path, [("ace", "bob", i % 4 != 0) for i in range(8)]
                 + [("ace", "cat", True)] * 3)
    with LadderStore(store_path) as store:
        quarantine = Quarantine(store)
        for _ in range(3):
            quarantine.record("dan", ["timeout"])
    _ladder(tmp_path, "retire", "eve")
    _ladder(tmp_path, "new-version", "bob")
    capsys.readouterr()
    assert _ladder(tmp_path, "standings") == 0
    lines = {line.split()[0]: line.split(None, 2)[2]
             for line in capsys.readouterr().out.splitlines()[2:]}
    assert set(lines) == {"ace", "bob", "bob@2", "cat", "dan", "eve"}
    assert re.fullmatch(r"\+\d+ ± \d+ +11", lines["ace"])
    assert re.fullmatch(r"-\d+ ± \d+ +0 +rating of bob", lines["bob@2"])
    assert re.fullmatch(r"-\d+ ± \d+ +8 +retired", lines["bob"])
    assert re.fullmatch(r"all games lost: below [-+]\d+ +3", lines["cat"])
    assert re.fullmatch(r"- +0 +benched: 3 faulted games in the last 3: timeout x3",
                        lines["dan"])
    assert re.fullmatch(r"- +0 +retired", lines["eve"])


def test_a_bot_with_too_few_seats_for_one_game_is_refused_at_registration(
        tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="needs a concurrency of at least 2; got 1"):
        _ladder(tmp_path, "register", "lonely", "--owner", "me", "--concurrency", "1")
    with LadderStore(tmp_path / "out" / "ladder.sqlite") as store:
        assert [e.name for e in Registry(store).entrants()] == []


def test_ctl_takes_json_before_or_after_its_command() -> None:
    parser = build_parser()
    assert parser.parse_args(["ctl", "games", "--limit", "3", "--json"]).json
    assert parser.parse_args(["ctl", "--json", "standings"]).json
    assert not parser.parse_args(["ctl", "standings"]).json
