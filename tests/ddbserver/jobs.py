"""Interactive (console) jobs of the test server, as DolphinDB's job-management tutorial describes
them: every script or function request is a job with the priority and parallelism its request
header asked for (what the client's ``session.run(..., priority=, parallelism=)`` sends), listed by
``getConsoleJobs()`` on its node while it runs (node, userID, rootJobId, jobType, desc, priority,
parallelism, receiveTime, sessionId) and cancelled from another session by
``cancelConsoleJob(rootJobId)``. As DolphinDB does, a job gets at most its user's caps:
priority at most ``setMaxJobPriority``'s (0-8; 8 unless set), parallelism at most
``setMaxJobParallelism``'s (1-64; unless set 64 for an administrator and 2 for any other user,
the function's reference page says); ``getConsoleJobs`` lists what was applied.

DolphinDB cancels a job between its sub-tasks; here a job held by the ``delay`` fault stands for
one waiting on its sub-tasks, so a cancel ends it before it runs (nothing it would share is shared)
and its reply is an error. Every job is logged (``log``: node, session, priority, parallelism, the
request's first line, whether it was cancelled) for tests; the test server's own control calls
(``testServer...``) are not jobs.
"""
from __future__ import annotations

import re
import threading
import time
import uuid
from dataclasses import dataclass, field

import numpy as np

from tests.ddbserver import codec as c
from tests.ddbserver.syntax import STR, ScriptError, unquote

CANCELLED_MESSAGE = "The job has been cancelled."


@dataclass
class Job:
    root_job_id: str
    node: str
    user: str
    session: int
    priority: int | None
    parallelism: int | None
    desc: str
    received_ms: int
    cancelled: threading.Event = field(default_factory=threading.Event)


MAX_PRIORITY = 8
ADMIN_PARALLELISM, USER_PARALLELISM = 64, 2


class Jobs:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.running: dict[str, Job] = {}
        self.log: list[dict] = []
        self.cancels: list[dict] = []
        self.max_priority: dict[str, int] = {}         # setMaxJobPriority, per user
        self.max_parallelism: dict[str, int] = {}      # setMaxJobParallelism, per user

    def applied(self, user: str, priority: int | None, parallelism: int | None) -> tuple[int | None, int | None]:
        """What the server grants a job of ``user`` that asked for these: at most the user's caps."""
        cap_priority = self.max_priority.get(user, MAX_PRIORITY)
        cap_parallelism = self.max_parallelism.get(user, ADMIN_PARALLELISM if user == "admin" else USER_PARALLELISM)
        return (None if priority is None else min(priority, cap_priority),
                None if parallelism is None else min(parallelism, cap_parallelism))

    def start(self, node: str, user: str, session: str, priority: int | None, parallelism: int | None,
              text: str) -> Job | None:
        """A job for one request (None for the test server's own control calls)."""
        desc = text.strip().split("\n", 1)[0][:120]
        if desc.startswith("testServer"):
            return None
        with self._lock:
            granted_priority, granted_parallelism = self.applied(user, priority, parallelism)
            job = Job(str(uuid.uuid4()), node, user, int(session) if session.isdigit() else 0, granted_priority,
                      granted_parallelism, desc, int(time.time() * 1000))
            self.running[job.root_job_id] = job
            self.log.append({"seq": len(self.log), "node": node, "session": job.session, "priority": priority,
                             "parallelism": parallelism, "applied_priority": granted_priority,
                             "applied_parallelism": granted_parallelism, "desc": desc,
                             "root_job_id": job.root_job_id, "cancelled": False})
        return job

    def end(self, job: Job | None) -> None:
        if job is None:
            return
        with self._lock:
            self.running.pop(job.root_job_id, None)
            if job.cancelled.is_set():
                for entry in reversed(self.log):
                    if entry["root_job_id"] == job.root_job_id:
                        entry["cancelled"] = True
                        break

    @staticmethod
    def hold(job: Job | None, seconds: float) -> bool:
        """Wait ``seconds`` (the job's sub-tasks); True as soon as the job is cancelled."""
        if job is None:
            time.sleep(seconds)
            return False
        return job.cancelled.wait(seconds)

    # --- the functions a session calls --------------------------------------------------------
    def templates(self):
        return [
            (r"getConsoleJobs\(\)", lambda s, m: self.console_jobs(s.node.name)),
            (r"exec rootJobId from getConsoleJobs\(\) where sessionId = (\d+)",
             lambda s, m: self._ids_of(s.node.name, int(m.group(1)))),
            (rf"cancelConsoleJob\((\[[^\]]*\]|{STR})\)", self._cancel),
            (r"select priority, parallelism from getConsoleJobs\(\) where sessionId = (\d+)",
             lambda s, m: self._settings_of(s.node.name, int(m.group(1)))),
            (rf"setMaxJobPriority\({STR}, *(\d+)\)", lambda s, m: self._set_cap(s, m, self.max_priority, 0, 8)),
            (rf"setMaxJobParallelism\({STR}, *(\d+)\)",
             lambda s, m: self._set_cap(s, m, self.max_parallelism, 1, 64)),
        ]

    def _settings_of(self, node: str, session: int) -> c.Table:
        jobs = [j for j in self._jobs_on(node) if j.session == session]
        ints = lambda values: c.Vector(c.INT, np.array(values, dtype="i4"))  # noqa: E731
        return c.Table("", {"priority": ints([-1 if j.priority is None else j.priority for j in jobs]),
                            "parallelism": ints([-1 if j.parallelism is None else j.parallelism for j in jobs])})

    def _set_cap(self, s, m, caps: dict[str, int], low: int, high: int) -> c.Scalar:
        if s.user != "admin":
            raise ScriptError("Only administrators execute function " + m.group(0).split("(")[0])
        value = int(m.group(2))
        if not low <= value <= high:
            raise ScriptError(f"The value must be between {low} and {high}.")
        with self._lock:
            caps[unquote(m.group(1))] = value
        return c.Scalar(c.VOID, None)

    def _jobs_on(self, node: str) -> list[Job]:
        with self._lock:
            return [j for j in self.running.values() if j.node == node]

    def console_jobs(self, node: str) -> c.Table:
        jobs = self._jobs_on(node)
        strings = lambda values: c.Vector(c.STRING, np.array(values, dtype=object))  # noqa: E731
        ints = lambda values: c.Vector(c.INT, np.array(values, dtype="i4"))  # noqa: E731
        return c.Table("", {
            "node": strings([j.node for j in jobs]), "userID": strings([j.user for j in jobs]),
            "rootJobId": strings([j.root_job_id for j in jobs]), "jobType": strings(["unknown"] * len(jobs)),
            "desc": strings([j.desc for j in jobs]),
            "priority": ints([-1 if j.priority is None else j.priority for j in jobs]),
            "parallelism": ints([-1 if j.parallelism is None else j.parallelism for j in jobs]),
            "receiveTime": c.Vector(c.TIMESTAMP, np.array([j.received_ms for j in jobs], dtype="i8")),
            "sessionId": c.Vector(c.LONG, np.array([j.session for j in jobs], dtype="i8")),
        })

    def _ids_of(self, node: str, session: int) -> c.Vector:
        ids = [j.root_job_id for j in self._jobs_on(node) if j.session == session]
        return c.Vector(c.STRING, np.array(ids, dtype=object))

    def _cancel(self, s, m) -> c.Scalar:
        """cancelConsoleJob: the jobs of this node named; an unknown id is passed over."""
        ids = [unquote(i) for i in re.findall(STR, m.group(1))]
        with self._lock:
            for job_id in ids:
                job = self.running.get(job_id)
                if job is not None and job.node == s.node.name:
                    job.cancelled.set()
                self.cancels.append({"by_node": s.node.name, "root_job_id": job_id, "found": job is not None})
        return c.Scalar(c.VOID, None)

    def snapshot(self) -> dict:
        with self._lock:
            return {"log": [dict(e) for e in self.log], "cancels": list(self.cancels),
                    "running": len(self.running)}
