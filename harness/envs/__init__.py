"""Euchre for learning libraries: a PettingZoo environment (:mod:`harness.envs.euchre_v0`),
an OpenSpiel game (``import harness.envs.openspiel`` registers ``python_euchre``), and an
adapter that turns a policy over their observations into an SDK bot
(:mod:`harness.envs.adapter`). They need the ``research`` extra
(``pip install 'euchre-harness[research]'``); see docs/research.md."""
