"""A standing ladder: registered bots that come and go, games that keep flowing, and
standings that are always current (see ``docs/ladder.md``). A sibling of the tournament
(:mod:`harness.tournament`), which it never imports: what both need is in
:mod:`harness.competition`.

* :mod:`harness.storage.ladder`: the ladder's tables, in the results store's SQLite file;
* :mod:`harness.ladder.registry`: entrants, their tokens (hashed), retirement, versions;
* :mod:`harness.ladder.matchmaking`: which game to play next (pure);
* :mod:`harness.ladder.ratings`: Elo refreshed as games finish, with its history;
* :mod:`harness.ladder.quarantine`: benching bots that fault too often.
"""
