"""``python -m mjrefresh``: the command line (see :mod:`mjrefresh.cli`)."""

from mjrefresh.cli import main

raise SystemExit(main())
