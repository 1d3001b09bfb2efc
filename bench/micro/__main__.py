"""``python -m bench.micro``: run the microbenchmark."""

import sys

from bench.micro.cli import main

sys.exit(main())
