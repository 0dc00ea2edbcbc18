"""The bad-input corpus (`cases`), its per-case subprocess (`child`) and runner (`runner`)."""
