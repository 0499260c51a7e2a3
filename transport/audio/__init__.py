"""The audio feature over HTTP: ``POST /audio``, ``/health.audio``, the ``relay_audio_*`` and
``relay_stt_*`` metric families, the overlay's audio switches.

This package imports nothing, so that importing one of its modules loads no more than it needs.
"""
