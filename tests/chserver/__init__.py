"""A test stand-in for a ClickHouse server: chDB behind a small HTTP front (``server``), run as
its own process by the fixtures of ``fixture``."""
