"""Where everything is kept: SQLite files, one writing process per file.

* :mod:`~harness.storage.sqlite`: what every store file shares (the connection and its
  lock, WAL journaling, transactions, schema versions and migration steps);
* :mod:`~harness.storage.results`: the results store, tournaments and their finished
  games (every command's ``results.sqlite``, and the ladder's games);
* :mod:`~harness.storage.ladder`: the ladder's own tables in the same file (bots and
  tokens, deal sets, benches, hosted bots);
* :mod:`~harness.storage.lock`: one writing process per store file.
"""
