"""The pure core: state in, decision out. No IO, clock or global randomness."""
