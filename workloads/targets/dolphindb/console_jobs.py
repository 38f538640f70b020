"""Scripts about a session's console jobs (DolphinDB's job-management tutorial): find the jobs a
session runs, read back what the server granted the job asking, cancel another session's jobs."""
from __future__ import annotations

from workloads.targets.dolphindb import quote as q


def console_jobs(session_id: int) -> str:
    """The rootJobIds of the interactive jobs session ``session_id`` runs on this node."""
    return f"exec rootJobId from getConsoleJobs() where sessionId = {int(session_id)}"


def job_settings(session_id: int) -> str:
    """The priority and parallelism the server granted the job running this (its own session's)."""
    return f"select priority, parallelism from getConsoleJobs() where sessionId = {int(session_id)}"


def cancel_console_job(job_ids: list[str]) -> str:
    """Cancel interactive jobs of another session (DolphinDB's ``cancelConsoleJob``)."""
    return f"cancelConsoleJob({q.string_vector([str(j) for j in job_ids])})"
