"""pipecat-steward: deterministic control flow for Pipecat voice agents."""
