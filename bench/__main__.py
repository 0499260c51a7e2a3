"""``python3 -m bench <case> [options]``: the benchmarks' one entry point (:mod:`bench.runner`)."""

from bench.runner import main

raise SystemExit(main())
