"""``python -m harness`` is ``euchre-harness``."""

import sys

from harness.cli import main

sys.exit(main())
