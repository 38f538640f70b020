"""``tickbench run``: a scenario run in a thread under a progress bar, its figures printed after;
or, with ``--live``, as the window starts it (its own process, a viewer reading its folder).
Ctrl-C and SIGTERM cancel it cleanly: what was measured is kept."""
from __future__ import annotations

import threading
from contextlib import contextmanager

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from app.cli.common import CliError, _store, console, err_console, safe
from app.cli.hosts import print_cluster
from app.cli.results import _print_figures, _print_op_errors
from app.cli.scenario import _scenario_from_stdin, scenario_from_args
from app.window.run_process import lower_priority
from workloads.text import error_words, plural


def cmd_run(args) -> int:
    from workloads.run.limits import check_machine
    from workloads.run.runner import Runner
    if not 0 <= args.nice <= 19:
        raise CliError(f"--nice takes 0 to 19 (how much lower the run's CPU priority is), not {args.nice}")
    try:
        scenario = _scenario_from_stdin() if args.scenario_stdin else scenario_from_args(args)
        check_machine(scenario, force=args.force)
        store = _store(args)
        if args.run_id:
            store.check_new_run_id(args.run_id)     # before anything (a live view's folder) is written
        runner = Runner(scenario, store, run_id=args.run_id)
    except (ValueError, KeyError) as exc:
        raise CliError(error_words(exc)) from None
    lower_priority(args.nice)               # before any worker starts: they inherit it
    if args.live:
        return _run_live(runner, store)
    result_box: list = []
    thread = threading.Thread(target=_run_into, args=(runner, result_box), daemon=True)
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.percentage:>3.0f}%"),
                  TextColumn("{task.fields[detail]}"), TimeElapsedColumn(), console=err_console,
                  transient=False) as progress, _cancel_on_signals(runner):
        task = progress.add_task(f"{scenario.workload} on {scenario.target}", total=1.0, detail="")
        thread.start()
        shown_hosts = False
        while thread.is_alive():
            thread.join(0.25)
            snap = runner.snapshot()
            if runner.load_generators is not None and not shown_hosts:     # before the first release
                shown_hosts = True
                print_cluster(runner.load_generators, progress.console, snap.host_users or None)
            detail = f"{snap.status} · step {snap.step_index + 1}/{snap.steps_total} · " \
                     f"{plural(snap.users, 'user')} · {plural(snap.ops_done, 'op')}"
            if snap.ops_failed:
                detail += f" · {snap.ops_failed} failed"
            progress.update(task, completed=snap.progress, detail=detail)
    result = result_box[0]
    if isinstance(result, BaseException):
        from workloads.run.worker import describe_error
        raise CliError(f"run {runner.run_id}: {describe_error(result)}")
    _print_figures(store, result.run_id)
    _print_op_errors(store, result.run_id)
    style = {"completed": "green", "cancelled": "yellow"}.get(result.status, "red")
    console.print(f"run [bold]{safe(result.run_id)}[/bold]: [{style}]{result.status}[/{style}]"
                  + (f" — {safe(result.message)}" if result.message else ""), highlight=False)
    return 0 if result.status == "completed" else 1


def _run_into(runner, box: list) -> None:
    """The run in its thread; what ends it, a result or an exception, goes into ``box``."""
    try:
        box.append(runner.run())
    except BaseException as exc:  # shown as one line by the main thread, never lost
        box.append(exc)


@contextmanager
def _cancel_on_signals(runner):
    """SIGINT (Ctrl-C) and SIGTERM cancel the run as they do a ``--live`` one: the workers stop at
    an operation boundary, what was measured is kept, and the run ends "cancelled"."""
    import signal
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, lambda *_: runner.cancel()) for sig in signals}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _run_live(runner, store) -> int:
    """The run as the window starts it: its own process and session, a viewer reading its folder.
    SIGTERM or SIGINT (or a stop file) cancel it cleanly; what was measured is kept."""
    import signal
    from workloads.run.live import LivePublisher

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: runner.cancel())
    publisher = LivePublisher(store.runs_dir / runner.run_id, runner.snapshot, runner.cancel).start()
    try:
        result = runner.run()
    finally:
        publisher.close()
    print(f"run {result.run_id}: {result.status}" + (f" — {result.message}" if result.message else ""), flush=True)
    return 0 if result.status == "completed" else 1
