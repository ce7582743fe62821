"""Ladder registration and tokens: hashed at rest, constant-time compare, rotate,
retire, restore, versions."""

from __future__ import annotations

import hmac
import sqlite3
from pathlib import Path

import pytest

from harness.errors import ConfigError
from harness.ladder.registry import Registry, Token
from harness.storage.ladder import LadderStore
from harness.storage.results import ResultsStore


@pytest.fixture
def store(tmp_path: Path) -> LadderStore:
    return LadderStore(tmp_path / "ladder.db")


def test_register_returns_a_token_that_authenticates_the_bot(store: LadderStore) -> None:
    registry = Registry(store)
    entrant, token = registry.register("alpha", "ann", description="greedy", concurrency=2)
    assert (entrant.name, entrant.owner, entrant.concurrency) == ("alpha", "ann", 2)
    found = registry.authenticate(token.reveal())
    assert found is not None and found.name == "alpha"


def test_the_store_and_reprs_never_hold_the_token(store: LadderStore, tmp_path: Path) -> None:
    entrant, token = Registry(store).register("alpha", "ann")
    secret = token.reveal()
    store.close()
    raw = (tmp_path / "ladder.db").read_bytes()
    # eh_<key id>_<secret>: the key id is public; the secret (which may itself hold "_")
    # must not be stored, whole or in part of full length.
    assert secret.split("_", 2)[2].encode() not in raw
    assert secret not in repr(token) and secret not in str(token)
    assert secret not in repr(entrant) and secret not in f"{token}"
    with sqlite3.connect(tmp_path / "ladder.db") as conn:
        (stored,) = conn.execute("SELECT token_hash FROM ladder_bots").fetchone()
    assert isinstance(stored, bytes) and len(stored) == 32


def test_token_comparison_uses_compare_digest(store: LadderStore,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    registry = Registry(store)
    _, token = registry.register("alpha", "ann")
    calls: list[int] = []
    original = hmac.compare_digest

    def counting(a: bytes, b: bytes) -> bool:
        calls.append(1)
        return original(a, b)

    monkeypatch.setattr(hmac, "compare_digest", counting)
    assert registry.authenticate(token.reveal()) is not None
    assert registry.authenticate("eh_0000000000000000_" + "A" * 43) is None  # unknown key
    assert registry.authenticate("nonsense") is None  # malformed
    assert len(calls) == 3  # the same comparison whether or not the key exists


def test_wrong_secret_with_a_real_key_id_is_refused(store: LadderStore) -> None:
    registry = Registry(store)
    _, token = registry.register("alpha", "ann")
    key = token.reveal().split("_")[1]
    assert registry.authenticate(f"eh_{key}_" + "B" * 43) is None


def test_rotate_invalidates_the_old_token(store: LadderStore) -> None:
    registry = Registry(store)
    _, old = registry.register("alpha", "ann")
    new = registry.rotate("alpha")
    assert new != old
    assert registry.authenticate(old.reveal()) is None
    found = registry.authenticate(new.reveal())
    assert found is not None and found.name == "alpha"


def test_retired_bot_cannot_authenticate_until_restored(store: LadderStore) -> None:
    registry = Registry(store)
    _, token = registry.register("alpha", "ann")
    assert registry.retire("alpha").retired
    assert registry.authenticate(token.reveal()) is None
    assert [e.name for e in registry.entrants()] == []
    assert [e.name for e in registry.entrants(include_retired=True)] == ["alpha"]
    assert not registry.restore("alpha").retired
    assert registry.authenticate(token.reveal()) is not None


def test_new_version_links_to_the_old_one_and_retires_it(store: LadderStore) -> None:
    registry = Registry(store)
    registry.register("alpha", "ann", description="v1", concurrency=3)
    registry.register("beta", "bob")
    v2, token2 = registry.new_version("alpha", description="v2")
    assert (v2.name, v2.version, v2.previous, v2.owner, v2.concurrency) == \
        ("alpha@2", 2, "alpha", "ann", 3)
    v3, _ = registry.new_version("alpha@2", retire_previous=False)
    assert v3.name == "alpha@3" and v3.previous == "alpha@2"
    assert [e.name for e in registry.lineage("alpha@3")] == ["alpha", "alpha@2", "alpha@3"]
    assert registry.get("alpha").retired
    assert [e.name for e in registry.entrants()] == ["beta", "alpha@2", "alpha@3"]
    assert [e.name for e in registry.entrants(latest_only=True)] == ["beta", "alpha@3"]
    assert registry.authenticate(token2.reveal()) is not None


@pytest.mark.parametrize(("kwargs", "option"), [
    ({"name": "a@2", "owner": "o"}, "name"),
    ({"name": "", "owner": "o"}, "name"),
    ({"name": "ok", "owner": ""}, "owner"),
    ({"name": "ok", "owner": "o", "concurrency": 0}, "concurrency"),
    ({"name": "ok", "owner": "o", "concurrency": True}, "concurrency"),
])
def test_invalid_registrations_name_the_field(store: LadderStore, kwargs: dict[str, object],
                                              option: str) -> None:
    with pytest.raises(ConfigError) as info:
        Registry(store).register(**kwargs)  # type: ignore[arg-type]
    assert info.value.option == option


def test_a_taken_name_is_refused(store: LadderStore) -> None:
    registry = Registry(store)
    registry.register("alpha", "ann")
    with pytest.raises(ConfigError, match="already registered"):
        registry.register("alpha", "bob")


def test_registrations_survive_reopening_and_share_the_results_file(tmp_path: Path) -> None:
    path = tmp_path / "ladder.db"
    with LadderStore(path) as first:
        _, token = Registry(first).register("alpha", "ann")
    with LadderStore(path) as again:
        assert Registry(again).authenticate(token.reveal()) is not None
    with ResultsStore(path) as results:  # the results store still opens the same file
        assert results.tournament_ids() == []


def test_token_equality_does_not_reveal_it() -> None:
    assert Token("x") == Token("x") and Token("x") != Token("y")
    assert "x" not in repr(Token("x"))


@pytest.mark.parametrize("text", ["del\x7f", "next\x85line", "evil\u202etxt.exe",
                                  "zero\u200bwidth", "two\u2028lines", "tab\tbed"])
def test_owner_and_description_refuse_control_and_formatting_characters(
        tmp_path: Path, text: str) -> None:
    with LadderStore(tmp_path / "l.sqlite") as store:
        registry = Registry(store)
        with pytest.raises(ConfigError, match="printable"):
            registry.register("bot", text)
        with pytest.raises(ConfigError, match="printable"):
            registry.register("bot", "ann", description=text)
        registry.register("bot", "Ann Émile", description="plays à la carte")


def test_a_taken_name_and_an_unknown_one_are_their_own_errors_and_statuses(
        tmp_path: Path) -> None:
    """The operator API answers ALREADY_EXISTS and NOT_FOUND from the error's class, never
    from its wording."""
    import grpc

    from harness.errors import AlreadyExistsError, NotFoundError
    from harness.ladder.service import status_of

    with LadderStore(tmp_path / "ladder.sqlite") as store:
        registry = Registry(store)
        registry.register("taken", "ann")
        with pytest.raises(AlreadyExistsError) as taken:
            registry.register("taken", "bob")
        with pytest.raises(NotFoundError) as unknown:
            registry.retire("nobody")
    assert status_of(taken.value) == grpc.StatusCode.ALREADY_EXISTS
    assert status_of(unknown.value) == grpc.StatusCode.NOT_FOUND
    assert status_of(ConfigError("concurrency", "no bot named x here")) == \
        grpc.StatusCode.INVALID_ARGUMENT
