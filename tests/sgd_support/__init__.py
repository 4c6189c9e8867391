"""Support for the SGD replay's fuzzer: generated schemas and dialogues."""
