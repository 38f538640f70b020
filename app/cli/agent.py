"""``tickbench agent --listen HOST:PORT``: run on a database host, drop its page cache when a cold
round asks (docs/agent.md). ``tickbench agent --new-token`` prints a token for it."""
from __future__ import annotations

import os
import stat
import sys
from pathlib import Path


def add_agent_parser(sub) -> None:
    agent = sub.add_parser("agent", help="on a database host: drop its page cache when a cold round asks")
    agent.add_argument("--listen", metavar="HOST:PORT", help="the address to listen on (port 0: a free one)")
    agent.add_argument("--token-file", type=Path, metavar="FILE",
                       help="a file holding the token (default: the TICKBENCH_AGENT_TOKEN environment variable)")
    agent.add_argument("--files", type=Path, metavar="DIR",
                       help="drop only the files under DIR (posix_fadvise; no root needed) instead of the "
                            "whole page cache")
    agent.add_argument("--log", type=Path, metavar="FILE", help="one JSON line per request (default: stderr)")
    agent.add_argument("--new-token", action="store_true", help="print a new random token and exit")


def cmd_agent(args, error) -> int:
    from workloads.agent.client import new_token, split_address
    from workloads.agent.droppers import DropperError, make_dropper
    from workloads.agent.protocol import TOKEN_ENV, Verifier, token_problem
    from workloads.agent.server import Agent, AgentLog, open_log, serve_until_signalled

    if args.new_token:
        print(new_token())
        return 0
    if not args.listen:
        error("agent needs --listen HOST:PORT (or --new-token)")
    try:
        address = split_address(args.listen)
    except ValueError as exc:
        error(f"--listen {exc}")
    token = _token(args, TOKEN_ENV, error)
    if problem := token_problem(token):
        error(problem)
    try:
        dropper = make_dropper(args.files)
    except DropperError as exc:
        error(str(exc))
    try:
        log = open_log(args.log)
    except OSError as exc:
        error(f"--log {args.log}: {exc.strerror or exc}")
    try:
        agent = Agent(address, Verifier(token), dropper, AgentLog(log))
    except OSError as exc:
        error(f"cannot listen on {args.listen}: {exc.strerror or exc}")
    host, port = agent.address
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    serve_until_signalled(agent, ready=lambda: print(f"tickbench agent listening on {shown}; a drop is: "
                                                     f"{dropper.description}", flush=True))
    print("tickbench agent stopped", flush=True)
    return 0


def _token(args, variable: str, error) -> str:
    if args.token_file is None:
        token = os.environ.get(variable, "").strip()
        if not token:
            error(f"agent needs a token: --token-file FILE or the {variable} environment variable")
        return token
    try:
        mode = args.token_file.stat().st_mode
        token = args.token_file.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        error(f"--token-file {args.token_file}: {getattr(exc, 'strerror', None) or exc}")
    if mode & (stat.S_IRGRP | stat.S_IROTH):
        print(f"tickbench agent: warning: {args.token_file} is readable by other users (chmod 600 it)",
              file=sys.stderr, flush=True)
    return token
