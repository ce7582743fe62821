"""``euchre-harness ladder CONFIG ACTION``: register prints the token once and the store
keeps only its hash; rotate, retire, restore and standings work on the store."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import build_parser
from harness.errors import ConfigError
from harness.ladder.registry import Registry
from harness.ladder.store import LadderStore

HOUSE = ("random_bot", "heuristic_bot")
CONFIG = 'name = "test-ladder"\noutput = "{output}"\nconcurrency = 1\n' + "".join(
    f'[[bot]]\nname = "{bot}"\ncommand = "{{{{python}}}} -m sample_bots.{bot}"\n'
    for bot in HOUSE)


def _ladder(tmp_path: Path, *words: str) -> int:
    config = tmp_path / "ladder.toml"
    if not config.exists():
        config.write_text(CONFIG.format(output=tmp_path / "out"))
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
    assert token.split("_")[2].encode() not in store_path.read_bytes()
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
    config.write_text(CONFIG.format(output=tmp_path / "out")
                      + '[[bot]]\nname = "far"\ntokens = ["t1", "t2"]\n')
    with pytest.raises(ConfigError) as info:
        _ladder(tmp_path, "standings")
    assert info.value.option == "bot"
