"""``python -m harness`` is ``euchre-harness``."""

from harness.cli import main

main()
