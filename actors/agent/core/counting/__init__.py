"""What the agent counts: each tick's outcome, tokens and cost by model and by hour, the huds
withheld, what was taken out of the model's words (:mod:`.counters`), what a call cost
(:mod:`.cost`, :mod:`.model_stats`), and the counters as ``/health.agent`` shows them
(:mod:`.health_stats`). Nothing else of the agent's core imports it: the digest store keeps
the counters."""
