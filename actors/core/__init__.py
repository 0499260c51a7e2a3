"""The pure core every feature shares: records, request bodies and their validation, errors,
stack traces, redaction and exclusion. The agent's and the audio feature's pure logic are
their own (:mod:`actors.agent.core`, :mod:`actors.audio.core`); what the kernel shares with
them too is in :mod:`actors.common`.
Plain functions and frozen values, taking ``now`` as an argument; it imports neither pykka nor
aiohttp."""
