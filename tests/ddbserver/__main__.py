"""``python -m tests.ddbserver``: start the test server; prints ``PORTS <p0> [<p1> ...]`` when ready,
then ``ROLES <role of p0> ...`` (controller, data, compute or single)."""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading

from tests.ddbserver.faults import Faults
from tests.ddbserver.server import TestServer


def parse_users(text: str) -> dict[str, str]:
    users = {}
    for item in filter(None, text.split(",")):
        user, sep, password = item.partition(":")
        if not sep or not user:
            raise argparse.ArgumentTypeError(f"user {item!r} is not of the form name:password")
        users[user] = password
    return users


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.ddbserver",
                                     description="DolphinDB wire-protocol test server (test-only)")
    parser.add_argument("--data-nodes", type=int, default=0,
                        help="0: one single-mode node; N: a controller port plus N data-node ports")
    parser.add_argument("--users", type=parse_users, default={"admin": "123456"},
                        help="comma-separated name:password pairs (default admin:123456)")
    parser.add_argument("--version", default=None,
                        help="version() answer (default: a 3.00 or 2.00 string per --server-major)")
    parser.add_argument("--server-major", type=int, choices=(2, 3), default=3,
                        help="2: behave like DolphinDB 2.x (getClusterPerf only on the controller)")
    parser.add_argument("--replicas", type=int, default=1,
                        help="dfsReplicationFactor: copies of each tablet the footprint scripts count")
    parser.add_argument("--no-arrow-plugin", action="store_true",
                        help="answer ARROW requests in the DDB format (no formatArrow plugin)")
    parser.add_argument("--no-arrow-on", default="",
                        help="comma-separated node aliases without the formatArrow plugin (dnode2,...)")
    parser.add_argument("--compute-nodes", type=int, default=0,
                        help="compute nodes after the data nodes (3.x; needs --data-nodes)")
    parser.add_argument("--compute-group", default="cgroup1",
                        help="the compute nodes' compute group ('' : none, so they cache nothing)")
    parser.add_argument("--perf-host", default="127.0.0.1", help="getClusterPerf's host column")
    parser.add_argument("--public-name", default="", help="getClusterPerf's publicName column")
    parser.add_argument("--max-connections", type=int, default=0,
                        help="refuse a node's connections past this many (0: no limit)")
    parser.add_argument("--offline", default="",
                        help="comma-separated node aliases that are down (state 0, refusing connections)")
    parser.add_argument("--refuse-login", action="store_true")
    parser.add_argument("--not-initialised", action="store_true")
    parser.add_argument("--silent", action="store_true", help="accept connections, never answer")
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--delay-match", default="")
    parser.add_argument("--close-match", default="")
    parser.add_argument("--lose-match", default="")
    parser.add_argument("--error-match", default="")
    parser.add_argument("--error-message", default=Faults().error_message)
    parser.add_argument("--write-delay", type=float, default=0.0,
                        help="seconds each DFS write or table create holds its transaction (chunk locks)")
    parser.add_argument("--chunk-retry-s", type=float, default=Faults().chunk_retry_s,
                        help="atomic='CHUNK': seconds a locked chunk is attempted before the write fails")
    parser.add_argument("--olap-cache-rows", type=int, default=0,
                        help="the OLAP cache engine's size in rows (0: off); fresh writes stay in memory")
    parser.add_argument("--workers", type=int, default=0,
                        help="each node's workers (0: a worker per request): an ordinary job waits for "
                             "one, an urgent one (request flag bit 0) does not")
    parser.add_argument("--host-pages", default="",
                        help="a folder: each partition read from disk is a real file there, and the read log "
                             "says whether the host's page cache held it (host_pages.py)")
    args = parser.parse_args(argv)

    faults = Faults()
    faults.update(json.loads(os.environ.get("TICKBENCH_DDB_FAULTS", "{}")))
    faults.update({k: getattr(args, k) for k in Faults.SETTABLE
                   if getattr(args, k) != getattr(Faults(), k)})
    server = TestServer(data_nodes=args.data_nodes, users=args.users, version=args.version,
                        faults=faults, server_major=args.server_major,
                        arrow_plugin=not args.no_arrow_plugin, replicas=args.replicas,
                        compute_nodes=args.compute_nodes, compute_group=args.compute_group,
                        perf_host=args.perf_host, public_name=args.public_name,
                        max_connections=args.max_connections,
                        no_arrow_nodes=tuple(filter(None, args.no_arrow_on.split(","))))
    server.set_workers(args.workers)
    if args.host_pages:
        from tests.ddbserver.host_pages import HostPages
        server.dispatcher.caches.host_pages = HostPages(args.host_pages)
    server.take_offline(list(filter(None, args.offline.split(","))))
    server.start()
    roles = {0: "data", 2: "controller", 3: "single", 4: "compute"}
    print("PORTS " + " ".join(str(p) for p in server.ports), flush=True)
    print("ROLES " + " ".join(roles[n.mode] for n in server.nodes), flush=True)

    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    done.wait()
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
