"""`olympus.experimental.compilation_cache`: the persistent compilation cache's controls."""
