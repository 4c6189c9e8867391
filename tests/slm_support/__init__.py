"""Test helpers for the logic_slm substrate: a local fake provider server and fixtures."""
