"""Everything computed from stored games, each in one place.

* :mod:`~harness.results.counting`: which games count, place-to-score, seats to teams;
* :mod:`~harness.results.rows`: a played game (the referee's ``GameResult``) to its stored
  row, and a stored row back to the scheduled game it was played for;
* :mod:`~harness.results.stats`: per-bot Euchre statistics and fault counts;
* :mod:`~harness.results.head_to_head`: placements and Elo of one bot against another;
* :mod:`~harness.results.rating`: the inputs to the Elo fit, standings, clean sweeps and
  the rating history;
* :mod:`~harness.results.tables`: the text and Markdown tables;
* :mod:`~harness.results.summary`: ``summary.json`` and the output files;
* :mod:`~harness.results.game_text`: a stored game as text, hand by hand.

The package sits above the referee and the store and below the command line: it imports
the rules, the referee's outcome types, :mod:`harness.results.elo`, :mod:`harness.results.sprt` and
:mod:`harness.storage.results`, never :mod:`harness.tournament` (which uses it).
"""
