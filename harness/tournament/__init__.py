"""Tournaments: which games to play (:mod:`.schedule`) and how they are configured
(:mod:`.config`)."""
