"""``python -m bench.soak``: see :mod:`bench.soak.run`."""

from __future__ import annotations

from bench.soak.run import main

if __name__ == "__main__":
    raise SystemExit(main())
