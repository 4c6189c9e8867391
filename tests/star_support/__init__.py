"""Support for the STAR replay's fuzzer: generated task flowcharts, API schemas and dialogues."""
