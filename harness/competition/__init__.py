"""What the tournament and the ladder share, below both: :mod:`harness.tournament`
reads its configuration schema from here and :mod:`harness.ladder` plays by it, so
neither package imports the other for it.

* :mod:`harness.competition.policies`: the ladder's matchmaking and quarantine knobs
  (:class:`Policy`, :class:`QuarantinePolicy`) and the cluster retry period, with their
  defaults and checks.
* :mod:`harness.competition.storing`: how both store a finished game
  (:class:`GameWriter`: in order, on a thread of its own, off the loop that times the
  bots).
"""
