"""Helpers for the transaction and checkpoint tests: an order-desk intent catalog, a fake clock
and a throwaway redis-server."""
