"""The base every part stands on: locations, the clock, fast JSON, digests, the file lock,
the error hierarchy, TOML reading and the crash-test fault points (standard library only)."""
