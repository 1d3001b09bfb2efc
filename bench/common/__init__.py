"""What only the repository's benchmark tools need: the ``python -m`` parser,
the ``--readme`` options and the generated README sections (the shared
measurement pieces are in :mod:`mjrefresh.bench`)."""
