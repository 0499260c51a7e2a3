"""The agent's pure logic: the window, the prompt and its screen budget, reading the model's
answer, the checks on it, its counters and its costs. No actor, no I/O."""
