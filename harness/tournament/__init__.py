"""Tournaments: their formats and schedules (:mod:`.schedule`), their files
(:mod:`.config`, on the schema of :mod:`harness.competition.options`) and the runner
(:mod:`.runner`). The ladder is a sibling: what both need is in :mod:`harness.competition`."""
