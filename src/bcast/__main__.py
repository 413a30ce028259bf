"""``python -m bcast``: the same as the ``bcast`` command."""

import sys

from .cli import main

sys.exit(main())
