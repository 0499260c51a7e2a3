"""What the tests run against and the benchmarks build on: the process harness (a relay or a
stand-in as a subprocess on loopback), stand-ins only tests need (the overlay, the capture
program, the chaos drills), and loaders of the data in ``tests/data``. It never imports
``bench``; ``bench`` imports it.
"""
