"""What runs on each load-generating host: a Dask task pinned to one Dask worker that starts the
host's users as processes of their own (the same ``worker_main`` as a local run), relays their
messages to the run through a Dask ``Queue``, and mirrors the run's Dask ``Event``s (release,
probes, stop) onto the users' local events.

The users' records keep the run's timeline: the release time comes from the run's clock and is
moved onto this host's clock by the offset the run measured (``workloads.distributed.clock``).
"""
from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import struct
import threading
import time
from contextlib import contextmanager
from multiprocessing.connection import wait
from typing import Any

import pyarrow as pa

from workloads.run.collector import exit_description
from workloads.run.messages import Done, Failed
from workloads.run.worker import StepEvents, WorkerSpec, describe_error, worker_main

RELAY_EVERY_S = 0.05          # messages from every user of the host go back as one put per pass
HEARTBEAT_TIMEOUT_S = 30.0    # the run's process stopped answering: stop the users
RUN_CHECK_S = 0.5             # how often a host asks the scheduler whether the run's client is still there
STOP_GRACE_S = 1.0            # users told to stop (their run is gone) that are still running then are killed


def step_names(key: str) -> dict[str, str]:
    """The Dask objects of one step, shared by the run and its hosts."""
    return {name: f"{key}-{name}" for name in ("start", "probe", "stop", "t0", "records", "heartbeat", "killed")}


def pack(messages: list[tuple[int, Any]]) -> bytes:
    """(user, message) pairs as one Dask Queue item (a Queue carries msgpack data: bytes), LZ4
    compressed: a batch's columns repeat their host, kind and name in every record, and a fast
    operation's records would otherwise send hundreds of MB a second through the scheduler."""
    data = pickle.dumps(messages, protocol=pickle.HIGHEST_PROTOCOL)
    return struct.pack("<Q", len(data)) + pa.compress(data, codec="lz4", asbytes=True)


def unpack(item: bytes) -> list[tuple[int, Any]]:
    (size,) = struct.unpack_from("<Q", item)
    return pickle.loads(pa.decompress(item[8:], decompressed_size=size, codec="lz4", asbytes=True))


@contextmanager
def _may_start_processes():
    """A Dask worker under a nanny is a daemonic process, which multiprocessing forbids to start
    children. Our users are safe to start anyway: each stops on its own when its parent goes
    (``workloads.run.worker.parent_gone``)."""
    config = mp.current_process()._config
    was = config.get("daemon")
    config["daemon"] = False
    try:
        yield
    finally:
        config["daemon"] = was


def _users_context(specs: list[WorkerSpec]):
    """The host's users start as a local run's do (``workloads.run.processes``): forked from a
    forkserver on this host that preloaded the run's target client, or spawned."""
    from workloads.run.processes import available_start, preload_for, user_context
    if not specs:
        return mp.get_context("spawn")
    start = available_start(str(specs[0].scenario.get("start", "spawn")))
    return user_context(start, preload_for(specs[0].target_kind) if start == "forkserver" else ())


def _has_client(client_id: str, dask_scheduler=None) -> bool:
    """On the scheduler: is the client ``client_id`` still connected?"""
    return client_id in dask_scheduler.clients


def run_host(specs: list[WorkerSpec], key: str, offset_s: float, run_client: str = "") -> dict[str, Any]:
    """Run this host's users for one step; a summary when every user has ended.

    ``run_client``: the id of the run's Dask client. The scheduler drops it the moment the run's
    process dies (kill -9 included: its connection closes), and the host then stops its users
    within ``RUN_CHECK_S + STOP_GRACE_S`` (killing those still running), where the heartbeat alone
    waits ``HEARTBEAT_TIMEOUT_S`` (a run too busy to beat is not a dead one)."""
    from distributed import Event, Queue, Variable, get_client

    client = get_client()
    names = step_names(key)
    queue = Queue(names["records"], client=client)
    context = _users_context(specs)
    events = StepEvents.make(context)
    step_t0 = context.RawValue("d", 0.0)   # no lock: see StopFlag
    users: dict[Any, tuple[int, Any]] = {}
    with _may_start_processes():
        for spec in specs:
            parent, child = context.Pipe(duplex=False)
            environ = dict(os.environ) if context.get_start_method() == "forkserver" else None
            process = context.Process(target=worker_main, name=f"tickbench-worker-{spec.worker}",
                                      args=(spec, child, events, step_t0, None, environ), daemon=True)
            process.start()
            child.close()
            users[parent] = (spec.worker, process)
    finished = threading.Event()

    def mirror(name: str, local, before=None) -> None:
        remote = Event(names[name], client=client)
        while not finished.is_set():
            if remote.wait(timeout=0.5):
                if before is not None:
                    before()
                local.set()
                return

    def release_time() -> None:
        step_t0.value = float(Variable(names["t0"], client=client).get(timeout=10)) + offset_s

    def run_gone() -> bool:
        if not run_client:
            return False
        try:
            return not client.run_on_scheduler(_has_client, run_client)
        except Exception:           # no answer this time: the heartbeat decides
            return False

    def stop_users() -> None:
        events.stop.set()
        deadline = time.monotonic() + STOP_GRACE_S
        while time.monotonic() < deadline and any(p.is_alive() for _, p in list(users.values())):
            time.sleep(0.05)
        for _worker, process in list(users.values()):
            if process.is_alive():
                process.kill()      # nobody collects its records any more

    def heartbeat() -> None:
        # the run counts up once a second; a count that stops moving (on this host's own clock,
        # as hosts' wall clocks may disagree) means the run's process is gone; sooner, the
        # scheduler no longer knowing the run's client means the same
        beat, killed = Variable(names["heartbeat"], client=client), Variable(names["killed"], client=client)
        seen, changed, beat_at = None, time.monotonic(), 0.0
        while not finished.wait(RUN_CHECK_S):
            if run_gone():
                stop_users()
                return
            if time.monotonic() - beat_at < 1.0:
                continue
            beat_at = time.monotonic()
            try:
                count = beat.get(timeout=5)
                doomed = set(killed.get(timeout=5) or ())
            except Exception:       # the run's client has gone, or the scheduler with it
                count, doomed = seen, set()
            for worker, process in list(users.values()):
                if worker in doomed and process.is_alive():
                    process.kill()
            if count != seen:
                seen, changed = count, time.monotonic()
            elif time.monotonic() - changed > HEARTBEAT_TIMEOUT_S:
                stop_users()        # and reap them here: the relay loop may be busy sending
                return

    threads = [threading.Thread(target=mirror, args=("start", events.start, release_time), daemon=True),
               threading.Thread(target=mirror, args=("probe", events.probe), daemon=True),
               threading.Thread(target=mirror, args=("stop", events.stop), daemon=True),
               threading.Thread(target=heartbeat, daemon=True)]
    for thread in threads:
        thread.start()
    ended: dict[int, str] = {}
    try:
        while users:
            outgoing: list[tuple[int, Any]] = []
            for conn in wait(list(users), timeout=RELAY_EVERY_S):
                worker, process = users[conn]
                try:
                    while conn.poll():
                        message = conn.recv()
                        outgoing.append((worker, message))
                        if isinstance(message, (Done, Failed)):
                            ended[worker] = type(message).__name__
                except (EOFError, OSError):
                    pass                # a user dying mid-message: the liveness check below fails it
            for conn, (worker, process) in list(users.items()):
                if worker in ended or not process.is_alive():
                    if worker not in ended and not conn.poll():
                        process.join(0.5)
                        outgoing.append((worker, Failed(worker, f"worker process {exit_description(process.exitcode)}")))
                        ended[worker] = "Failed"
                    if worker in ended:
                        conn.close()
                        del users[conn]
                        process.join(1.0)
            if outgoing:
                queue.put(pack(outgoing))
    except BaseException as exc:            # tell the run why this host's users stop
        queue.put(pack([(w, Failed(w, f"the host's relay failed: {describe_error(exc)}"))
                        for w, _ in users.values() if w not in ended]))
        raise
    finally:
        finished.set()
        events.stop.set()
        for worker, process in users.values():
            process.join(1.0)
            if process.is_alive():
                process.kill()
    return {"users": len(specs), "ended": ended}

