"""The docs' trades suite run on a table where it lives, through ``verify``: each query's fingerprint
(shared by the tests of tables in place and of sessions in other zones)."""
from __future__ import annotations

from pathlib import Path

from workloads.datasets.schema import Scale


def table_suite_answers(tmp_path: Path, name: str, config: dict) -> dict[str, str]:
    """The docs' five-query trades suite on table:NAME through ``verify``: each query's fingerprint."""
    from tests.test_user_suites import docs_suite
    from workloads.queries import load_suite
    from workloads.queries.verify import verify
    suite = load_suite(str(docs_suite(tmp_path)))
    verdicts = verify(f"tbl_{name}", Scale(), [(name, "table", {"name": name, **config})], [suite])
    answers = {qid: verdicts.answers[(suite.name, qid)][name] for _, qid in verdicts.answers}
    errors = {qid: a.error for qid, a in answers.items() if a.error}
    assert not errors, errors
    return {qid: a.fingerprint for qid, a in answers.items()}
