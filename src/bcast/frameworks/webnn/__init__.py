"""WebNN: its op table, from the W3C WebNN specification; spec only (no WebNN implementation runs here;
web-platform-tests' WebNN cases are data in the tests)."""

#: The lint and rewrite targets this package holds: :func:`bcast.frameworks.targets` reads it.
TARGETS = {"webnn": "webnn"}
