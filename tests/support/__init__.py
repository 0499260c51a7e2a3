"""What the tests run against and the benchmarks build on: the process harness (a relay or a
stand-in as a subprocess on loopback), a relay in the test's process and the calls tests make
into it, what tests post and watch, stand-ins only tests need (the overlay, the capture program,
the chaos drills), and loaders of the data in ``tests/data``. Fixtures are in
``tests/conftest.py`` (found by name); test modules import plain functions, classes and
constants from here and never from one another. It never imports ``bench``; ``bench`` imports
it.
"""
