"""What the tournament and the ladder share, below both, so that neither package imports
the other and each rule they share is written once.

* :mod:`harness.competition.options`: the configuration schema (every key of a
  tournament's or a ladder's file, its default and its checks).
* :mod:`harness.competition.policies`: the ladder's matchmaking and quarantine knobs
  (:class:`Policy`, :class:`QuarantinePolicy`) and the cluster retry period, with their
  defaults and checks.
* :mod:`harness.competition.deals`: deal seeds.
* :mod:`harness.competition.seatings`: seats, rotations, rating sides, duplicate groups
  and game keys (:class:`ScheduledGame`).
* :mod:`harness.competition.loop`: the loop both play on (:class:`PlayLoop`).
* :mod:`harness.competition.storing`: how both store a finished game
  (:class:`GameWriter`: in order, on a thread of its own, off the loop that times the
  bots).
"""
