"""``python -m bench <case> [options]``: the one entry point of the benchmarks
(:mod:`bench.runner` declares the cases and builds the command line)."""

from bench.runner import main

raise SystemExit(main())
