"""Ladder entrants: registration, secret tokens, retirement and versions.

Tokens. :meth:`Registry.register` returns a :class:`Token` once; the store keeps only a
random per-token salt and ``sha256(salt || secret)``. A token reads
``eh_<key id>_<secret>``: the key id (public, random) finds the entrant's row, the secret
(256 random bits) is hashed with that row's salt and compared with
:func:`hmac.compare_digest`. A high-entropy secret needs no slow hash: guessing it is
hopeless, and a stolen store holds nothing that dials in. An unknown key id costs the
same hash and comparison as a known one. :class:`Token` hides its value from ``repr``
and ``str``; only :meth:`Token.reveal` gives it, for showing once to the operator.

Versions. ``name@2`` is a new entrant linked to ``name`` (``name@3`` to ``name@2``...):
its own games and rating, with the older versions' history kept and reachable through
:meth:`Registry.lineage`. By default the previous version is retired when a new one is
registered. :meth:`Registry.entrants` with ``latest_only`` lists one version per bot.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from harness.errors import AlreadyExistsError, ConfigError, NotFoundError
from harness.storage.ladder import BotRow, LadderStore

__all__ = ["MAX_CONCURRENCY", "Also", "RegisteredBot", "Registry", "Token"]

MAX_CONCURRENCY: Final = 64
"""The most seats one entrant may hold at once."""

_BASE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,47}")
_TOKEN = re.compile(r"eh_([0-9a-f]{16})_([A-Za-z0-9_-]{43})")
_SALT_BYTES: Final = 16
_DUMMY_SALT: Final = bytes(_SALT_BYTES)
_DUMMY_HASH: Final = bytes(32)

Also = Callable[[str], None]
"""A further write made in the transaction that registers a bot version: called with the
new version's name (a hosted bot's files, say)."""


class Token:
    """A secret bot token. ``repr`` and ``str`` never show it; :meth:`reveal` does."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The token itself: show it once to whoever registered the bot, then drop it."""
        return self._value

    def __repr__(self) -> str:
        return "Token(<hidden>)"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Token) and hmac.compare_digest(self._value, other._value)

    def __hash__(self) -> int:
        return hash(self._value)


@dataclass(frozen=True, slots=True)
class RegisteredBot:
    """A registered bot version (no token material)."""

    id: int
    name: str  # "base" for version 1, "base@N" after
    base: str
    version: int
    previous: str | None  # the version this one replaced
    owner: str
    description: str
    concurrency: int
    created_at: str
    retired_at: str | None

    @property
    def retired(self) -> bool:
        return self.retired_at is not None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _digest(salt: bytes, secret: str) -> bytes:
    return hashlib.sha256(salt + secret.encode("ascii")).digest()


def _new_token() -> tuple[Token, str, bytes, bytes]:
    """A fresh token and what the store keeps of it: ``(token, key id, salt, hash)``."""
    key_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    salt = secrets.token_bytes(_SALT_BYTES)
    return Token(f"eh_{key_id}_{secret}"), key_id, salt, _digest(salt, secret)


def _check_text(option: str, value: Any, *, limit: int, empty: bool) -> str:
    if not isinstance(value, str) or (not empty and not value.strip()):
        raise ConfigError(option, f"must be a {'' if empty else 'non-empty '}string")
    if len(value) > limit or not value.isprintable():  # no Cc, Cf, Zl, Zp, ...
        raise ConfigError(option, f"at most {limit} printable characters (no control or "
                                  f"formatting characters)")
    return value


def _check_concurrency(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) \
            or not 1 <= value <= MAX_CONCURRENCY:
        raise ConfigError("concurrency", f"must be an integer from 1 to {MAX_CONCURRENCY}; "
                                         f"got {value!r}")
    return value


def _base_of(name: str) -> str:
    return name.split("@", 1)[0]


class Registry:
    """The entrants of a ladder, in a :class:`LadderStore`."""

    def __init__(self, store: LadderStore) -> None:
        self._store = store
        # Every entrant in id order, read again only when the table has changed.
        self._cache: tuple[int, list[RegisteredBot]] | None = None

    def __repr__(self) -> str:
        return f"Registry({self._store!r})"

    # ------------------------------------------------------------------ reads

    @staticmethod
    def _entrant(row: BotRow, previous: str | None) -> RegisteredBot:
        return RegisteredBot(id=row.id, name=row.name, base=row.base, version=row.version,
                             previous=previous, owner=row.owner, description=row.description,
                             concurrency=row.concurrency, created_at=row.created_at,
                             retired_at=row.retired_at)

    def _get(self, name: str) -> RegisteredBot:
        row = self._store.bot(name)
        if row is None:
            raise NotFoundError("name", f"no bot named {name!r} is registered")
        return self._entrant(row, self._store.bot_name(row.previous_id))

    def get(self, name: str) -> RegisteredBot:
        """The entrant called ``name``; ConfigError naming ``name`` if there is none."""
        return self._get(name)

    def _all(self) -> list[RegisteredBot]:
        """Every entrant in registration order: one indexed read of the table's change
        count, and the table itself only when that moved (the ladder asks for its
        entrants each time it looks for games to start)."""
        with self._store.reading():  # one lock: the count and the rows agree
            changes = self._store.bots_changes()
            if self._cache is None or self._cache[0] != changes:
                rows = self._store.bots()
                names = {row.id: row.name for row in rows}
                self._cache = (changes, [
                    self._entrant(r, None if r.previous_id is None else names.get(r.previous_id))
                    for r in rows])
            return self._cache[1]

    def changes(self) -> int:
        """A count that moves whenever any process writes to the entrants."""
        return self._store.bots_changes()

    def entrants(self, *, include_retired: bool = False,
                 latest_only: bool = False) -> list[RegisteredBot]:
        """Entrants in registration order; with ``latest_only``, only the newest version
        of each bot (whether or not older ones are retired)."""
        found = list(self._all())
        if latest_only:
            newest = {e.base: e.version for e in found}
            found = [e for e in found if e.version == newest[e.base]]
        if not include_retired:
            found = [e for e in found if not e.retired]
        return found

    def registered_since(self, base: str, since: datetime) -> list[datetime]:
        """When each version of the bot ``base`` registered at ``since`` or later was
        registered, oldest first."""
        times = (datetime.fromisoformat(e.created_at) for e in self._all() if e.base == base)
        return sorted(t for t in times if t >= since)

    def lineage(self, name: str) -> list[RegisteredBot]:
        """Every version of ``name``'s bot up to ``name``, oldest first."""
        every = self._all()
        entrant = next((e for e in every if e.name == name), None)
        if entrant is None:
            raise NotFoundError("name", f"no bot named {name!r} is registered")
        return [e for e in every if e.base == entrant.base and e.version <= entrant.version]

    # ------------------------------------------------------------------ writes

    def _insert(self, base: str, version: int, previous_id: int | None, owner: str,
                description: str, concurrency: int) -> Token:
        name = base if version == 1 else f"{base}@{version}"
        token, key_id, salt, digest = _new_token()
        row = BotRow(0, name, base, version, previous_id, owner, description, concurrency,
                     _now(), None)
        if not self._store.add_bot(row, key_id, salt, digest):
            raise AlreadyExistsError("name", f"a bot named {name!r} is already registered")
        return token

    def register(self, name: str, owner: str, *, description: str = "",
                 concurrency: int = 1, also: Also | None = None) -> tuple[RegisteredBot, Token]:
        """Register a new bot; returns it and its token (shown once, never stored).
        ConfigError names the offending field (a taken name included)."""
        if not isinstance(name, str) or not _BASE_NAME.fullmatch(name):
            raise ConfigError("name", "1 to 48 letters, digits, '_', '.' or '-', starting "
                                      f"with a letter or digit; got {name!r} (register a "
                                      "new version of a bot with new-version)")
        owner = _check_text("owner", owner, limit=200, empty=False)
        description = _check_text("description", description, limit=2000, empty=True)
        concurrency = _check_concurrency(concurrency)
        with self._store.writing():
            if self._store.versions(name):
                raise AlreadyExistsError("name", f"a bot named {name!r} is already registered")
            token = self._insert(name, 1, None, owner, description, concurrency)
            if also is not None:
                also(name)
            return self._get(name), token

    def new_version(self, name: str, *, owner: str | None = None,
                    description: str | None = None, concurrency: int | None = None,
                    retire_previous: bool = True,
                    also: Also | None = None) -> tuple[RegisteredBot, Token]:
        """Register the next version of ``name``'s bot (``base@N``), linked to its newest
        version, whose owner, description and concurrency it inherits unless given.
        Returns the new entrant and its token. ``also`` runs in the same transaction."""
        with self._store.writing():
            base = self._get(name).base
            latest = max(self._store.versions(base), key=lambda e: e.version)
            token = self._insert(
                base, latest.version + 1, latest.id,
                _check_text("owner", latest.owner if owner is None else owner,
                            limit=200, empty=False),
                _check_text("description",
                            latest.description if description is None else description,
                            limit=2000, empty=True),
                _check_concurrency(latest.concurrency if concurrency is None
                                   else concurrency))
            if retire_previous and latest.retired_at is None:
                self._store.set_retired(latest.id, _now())
            name = f"{base}@{latest.version + 1}"
            if also is not None:
                also(name)
            return self._get(name), token

    def rotate(self, name: str) -> Token:
        """Replace ``name``'s token; the old one stops working at once."""
        token, key_id, salt, digest = _new_token()
        with self._store.writing():
            self._store.set_token(self._get(name).id, key_id, salt, digest)
        return token

    def _set_retired(self, name: str, value: str | None) -> RegisteredBot:
        with self._store.writing():
            self._store.set_retired(self._get(name).id, value)
            return self._get(name)

    def retire(self, name: str) -> RegisteredBot:
        """Retire ``name``: its token no longer authenticates; its games and rating stay.
        Retiring a retired bot keeps its first retirement time."""
        entrant = self.get(name)
        return entrant if entrant.retired else self._set_retired(name, _now())

    def restore(self, name: str) -> RegisteredBot:
        """Bring a retired bot back; its token works again."""
        return self._set_retired(name, None)

    def update(self, name: str, *, description: str | None = None,
               concurrency: int | None = None) -> RegisteredBot:
        """Change ``name``'s description or concurrency."""
        with self._store.writing():
            entrant = self._get(name)
            self._store.set_profile(
                entrant.id,
                _check_text("description", entrant.description if description is None
                            else description, limit=2000, empty=True),
                _check_concurrency(entrant.concurrency if concurrency is None
                                   else concurrency))
            return self._get(name)

    # ------------------------------------------------------------------ tokens

    def authenticate(self, token: str) -> RegisteredBot | None:
        """The active entrant whose token this is, or None (malformed, unknown, rotated
        or retired). Takes the same work whether or not the key id exists."""
        match = _TOKEN.fullmatch(token) if isinstance(token, str) else None
        key_id, secret = match.groups() if match else ("", "")
        with self._store.reading():
            row = self._store.credentials(key_id)
            salt, stored = (row[1], row[2]) if row else (_DUMMY_SALT, _DUMMY_HASH)
            same = hmac.compare_digest(_digest(salt, secret), stored)
            if row is None or not match or not same or row[3] is not None:
                return None
            return self._get(row[0])
