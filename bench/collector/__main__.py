"""``python -m bench.collector``: run the collector benchmark (or, with the
internal ``--worker`` flag, one of its measurement processes)."""

import sys

from bench.collector.cli import main

sys.exit(main())
