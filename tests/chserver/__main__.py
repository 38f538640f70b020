"""``python -m tests.chserver --data DIR [--timezone ZONE]``: serve; prints ``PORT <n>`` when ready,
stops on SIGTERM."""
from __future__ import annotations

import argparse
import signal
import sys
import threading

from tests.chserver.server import serve


def parse_users(text: str) -> dict[str, str]:
    users = {}
    for item in filter(None, text.split(",")):
        user, sep, password = item.partition(":")
        if not sep or not user:
            raise argparse.ArgumentTypeError(f"user {item!r} is not of the form name:password")
        users[user] = password
    return users


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.chserver",
                                     description="ClickHouse HTTP interface stand-in over chDB (test-only)")
    parser.add_argument("--data", required=True, help="the chDB data folder the server keeps its tables in")
    parser.add_argument("--port", type=int, default=0, help="0: a free port (printed)")
    parser.add_argument("--users", type=parse_users, default={"default": ""},
                        help="comma-separated name:password pairs (default: default with no password)")
    parser.add_argument("--timezone", default="",
                        help="the server's time zone, as <timezone> in a server's config (default: the machine's)")
    args = parser.parse_args(argv)
    httpd = serve(args.data, args.users, args.port, timezone=args.timezone)       # binds 127.0.0.1 only
    print(f"PORT {httpd.server_address[1]}", flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    done.wait()
    httpd.shutdown()
    httpd.engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
