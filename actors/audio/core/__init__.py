"""The audio feature's pure core: utterances, voice detection, the audio formats, the capture
sources, the speech service's requests and answers, the transcript filters.

Plain functions and frozen values; it imports neither pykka nor aiohttp.
"""
