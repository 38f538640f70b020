"""A test-only server speaking DolphinDB's API wire protocol, so the real ``dolphindb`` client (and
the Tickbench DolphinDB target) can be exercised without a DolphinDB server.

It lives in tests/: the app never ships or starts it, and nothing measured against it is a
DolphinDB figure. Run it with ``python -m tests.ddbserver --help``.
"""
