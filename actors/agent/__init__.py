"""The agent feature's actors: its schedule, the context builder, the LLM caller, the digest
store and the SITUATION.md writer."""
