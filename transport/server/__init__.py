"""aiohttp's server as the relay runs it: what it needs of aiohttp beyond its public API."""
