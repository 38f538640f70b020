"""``tickbench agent``: run on a database host, it drops that host's page cache when a cold round
asks (a server engine's files stay cached on its own host otherwise). One thing only: a signed
``POST /drop`` (protocol.py) makes it do the drop its owner chose at start (droppers.py); the
listener is server.py, and what Tickbench's workers call is client.py."""
