"""I/O: sources, decoding, shards. Never imports corruptions."""
