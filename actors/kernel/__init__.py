"""The supervision kernel: actor base and stable handles, supervisor, clock, published cells,
durable actors and their storage. It knows nothing of feeds, screens or LLMs."""
