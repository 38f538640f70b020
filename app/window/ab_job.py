"""An A/B session for the window: ``tickbench ab --scenario-stdin --json`` as a child process
(``QProcess``, never blocking the GUI thread), the command line's own code path.

Both sides go in on standard input (a password in them is never written anywhere nor put on a
command line); its progress lines come from stderr as they are written, its answer as one JSON
line on stdout at the end. Stop sends SIGINT, as Ctrl-C in a terminal: the run under way is
cancelled, every completed one stays in the catalog and the answer so far is printed (exit 130).
An end without an answer (the input refused, a target unreachable, a crash) is one line."""
from __future__ import annotations

import json
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, Signal

from workloads.scenario import Scenario

PROJECT_ROOT = Path(__file__).resolve().parent.parent
PROGRESS_PREFIX = "A/B "
ERROR_PREFIX = "tickbench: error: "
KEPT_LINES = 40             # stderr lines kept to explain an end without an answer


@dataclass
class AbOutcome:
    data: dict[str, Any] | None      # the session (AbResult.to_dict()), or None: no answer
    exit_code: int
    line: str = ""                   # why there is no answer, in one line


def ab_command(results: Path, max_pairs: int = 20, smallest: float = 5.0, figure: str = "p50",
               extra: tuple[str, ...] = ()) -> list[str]:
    entry = [sys.executable] if getattr(sys, "frozen", False) else [sys.executable, "-m", "app"]
    return [*entry, "--results", str(results), "ab", "--scenario-stdin", "--json", "--max-pairs", str(max_pairs),
            "--smallest", f"{smallest:g}", "--figure", figure, *extra]


def outcome_of(exit_code: int, crashed: bool, stdout: str, stderr_lines: list[str]) -> AbOutcome:
    """The session's answer from what the process printed, or the one line that says why none."""
    for text in reversed(stdout.strip().splitlines()):
        try:
            data = json.loads(text)
        except ValueError:
            continue
        if isinstance(data, dict) and "verdicts" in data:
            return AbOutcome(data, exit_code)
        break
    said = [line for line in stderr_lines if line.strip() and not line.startswith(PROGRESS_PREFIX)]
    last = said[-1].strip() if said else ""
    if last.startswith(ERROR_PREFIX):
        return AbOutcome(None, exit_code, last[len(ERROR_PREFIX):])
    if crashed:
        return AbOutcome(None, exit_code, "the comparison's process crashed" + (f": {last}" if last else ""))
    return AbOutcome(None, exit_code, f"the comparison ended without an answer (exit {exit_code})"
                     + (f": {last}" if last else ""))


class AbJob(QObject):
    progressed = Signal(str)         # a progress line, as the session writes it
    finished = Signal(object)        # AbOutcome

    def __init__(self, results: Path, parent: QObject | None = None):
        super().__init__(parent)
        self.results = Path(results)
        self.process: QProcess | None = None
        self.stopping = False
        self._stdin = b""
        self._stderr = b""
        self._lines: list[str] = []

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.state() != QProcess.ProcessState.NotRunning

    def start(self, a: Scenario, b: Scenario, *, max_pairs: int = 20, smallest: float = 5.0,
              figure: str = "p50", extra: tuple[str, ...] = ()) -> None:
        if self.running:
            raise RuntimeError("a comparison is already running")
        self.stopping = False
        self._stderr, self._lines = b"", []
        self._stdin = json.dumps({"a": a.to_dict(), "b": b.to_dict()}, default=str).encode()
        process = QProcess(self)
        command = ab_command(self.results, max_pairs, smallest, figure, extra)
        process.setProgram(command[0])
        process.setArguments(command[1:])
        process.setWorkingDirectory(str(PROJECT_ROOT))
        env = QProcessEnvironment.systemEnvironment()
        env.insert("PYTHONUNBUFFERED", "1")
        process.setProcessEnvironment(env)
        process.started.connect(self._send_sides)
        process.readyReadStandardError.connect(self._read_stderr)
        process.finished.connect(self._finished)
        process.errorOccurred.connect(self._error)
        self.process = process
        process.start()

    def stop(self) -> bool:
        """SIGINT, as Ctrl-C: the session keeps what was measured and prints it. False: not running."""
        if not self.running:
            return False
        self.stopping = True
        pid = self.process.processId()
        if pid and hasattr(signal, "SIGINT") and os.name == "posix":
            os.kill(pid, signal.SIGINT)
        else:
            self.process.terminate()
        return True

    def wait(self, msecs: int) -> bool:
        """At closing time only: wait for the process to end (it does within a second of a stop)."""
        return self.process is None or self.process.waitForFinished(msecs)

    # ---- the process's events ---------------------------------------------------------------
    def _send_sides(self) -> None:
        self.process.write(self._stdin)
        self.process.closeWriteChannel()
        self._stdin = b""

    def _read_stderr(self) -> None:
        self._stderr += bytes(self.process.readAllStandardError())
        *complete, self._stderr = self._stderr.split(b"\n")
        for raw in complete:
            line = raw.decode(errors="replace").rstrip("\r")
            self._lines = (self._lines + [line])[-KEPT_LINES:]
            if line.startswith(PROGRESS_PREFIX):
                self.progressed.emit(line[len(PROGRESS_PREFIX):])

    def _finished(self, exit_code: int, status: QProcess.ExitStatus) -> None:
        self._read_stderr()
        if self._stderr:
            self._lines.append(self._stderr.decode(errors="replace"))
            self._stderr = b""
        stdout = bytes(self.process.readAllStandardOutput()).decode(errors="replace")
        crashed = status == QProcess.ExitStatus.CrashExit
        self.finished.emit(outcome_of(exit_code, crashed, stdout, self._lines))

    def _error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            self.finished.emit(AbOutcome(None, -1, f"could not start tickbench ab: {self.process.errorString()}"))
