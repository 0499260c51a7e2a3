"""The pure core: records, validation, the context window, the prompt and its screen budget,
the completion parser, costs, model statistics, the circuit breaker, redaction and exclusion,
voice detection, the audio formats and the transcript filters.
Plain functions and frozen values, taking ``now`` as an argument; it imports neither pykka nor
aiohttp."""
