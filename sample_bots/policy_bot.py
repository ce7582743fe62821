"""``linear-policy``: a policy over the PettingZoo environment's observations, played as a
harness bot (needs the ``research`` extra).

The policy here is a linear scorer with fixed random weights (nothing is trained): it
scores every action from the observation vector and plays the best legal one. Swap in
any policy with the same signature (for instance a trained network's forward pass).

* In the environment::

      from harness.envs import euchre_v0
      from sample_bots.policy_bot import policy
      env = euchre_v0.env(form="two-handed")
      env.reset(seed=1)
      ... env.step(policy(env.observe(env.agent_selection)))

* Over gRPC, like any bot (e.g. a ``[[bot]]`` command in a tournament file)::

      python -m sample_bots.policy_bot --address HOST:PORT --token TOKEN

* In process: ``euchre-harness run --in-process`` finds :func:`in_process_bot`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from harness.envs.adapter import PolicyBot
from harness.envs.encoding import NUM_ACTIONS, VECTOR_SIZE
from harness.sdk import run

WEIGHTS = np.random.RandomState(2024).normal(size=(NUM_ACTIONS, VECTOR_SIZE)).astype(np.float32)


def policy(observation: dict[str, Any]) -> int:
    """The legal action with the highest score."""
    scores = WEIGHTS @ observation["observation"]
    scores[observation["action_mask"] == 0] = -np.inf
    return int(np.argmax(scores))


def in_process_bot(argv: Sequence[str], env: Mapping[str, str]) -> PolicyBot:
    return PolicyBot(policy, name="linear-policy")


def main() -> None:
    run(PolicyBot(policy, name="linear-policy"))


if __name__ == "__main__":
    main()
