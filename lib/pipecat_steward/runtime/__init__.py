"""The runtime of one conversation: session, run loop, supervision, transactions, checkpoints."""
