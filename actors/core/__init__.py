"""The pure core: records, validation, the context window, the prompt and its screen budget,
the completion parser, costs, model statistics, the circuit breaker, redaction and exclusion.
The audio feature's pure logic is its own (:mod:`actors.audio.core`).
Plain functions and frozen values, taking ``now`` as an argument; it imports neither pykka nor
aiohttp."""
