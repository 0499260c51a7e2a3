"""The relay's tests.

They start child Pythons by the hundred (relays, model workers, benchmarks, capture programs),
each importing much of the relay. With bytecode caching off in the environment
(``PYTHONDONTWRITEBYTECODE``), every one of them, and every test worker, would compile all it
imports again: the tests turn caching on for themselves and the processes they start.
"""

import os
import sys

sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
