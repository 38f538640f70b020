"""The command line: one module per command (``app.cli.main`` parses and dispatches)."""
