"""The audio feature's actors: a capture per configured source, the transcriber, their subtree.

The composition root reaches it through one module, :mod:`actors.audio.subtree` (the
subtree's children, its handles and what it publishes). The pure logic (utterances, voice
detection, the audio formats, the speech service's requests, the transcript filters) lives
in :mod:`actors.audio.core`. This package imports nothing, so that importing a pure module
loads no actor.
"""
