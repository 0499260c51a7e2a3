"""What the kernel and the features share, pure: the backoff every retry and restart waits by,
the circuit breaker, the remedy a failure points at, the latency buckets of outside calls,
httpx without its command-line client, a check's verdict.

Below the kernel and every feature: its modules import nothing of the product but each other,
neither pykka nor aiohttp, so any layer may use them. This package imports nothing.
"""
