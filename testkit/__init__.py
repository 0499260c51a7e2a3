"""Clients that check a running relay from outside, as its real clients talk to it.

``overlay_client``: the overlay's WebSocket, read as the Flutter overlay reads it.
``openapi_contract``: answers checked against ``/openapi.json``, requests fuzzed from it.
The tests and the benches both use them; neither imports the other for them.
"""
