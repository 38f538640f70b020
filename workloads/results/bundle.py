"""A run as one file to hand to someone else: a run bundle (``FILE.tbrun``), written here
(``write_bundle``) and opened into another catalog by ``workloads.results.bundle_open``.

A bundle is a zip of the run's folder as the catalog stores an ended run
(``workloads.results.run_files``) and a ``manifest.json`` saying what it holds:

    manifest.json     {"kind": "tickbench-run-bundle", "version": 1, "run_id", "origin_host",
                       "created_at", "tickbench", "members": [{"name", "size", "sha256"}...],
                       "counts": {"ops", "steps", "workers", "resources"}}
    run.json          the run: scenario, environment, layout (secrets scrubbed: ``scrub``)
    steps.json        its steps (secrets scrubbed)
    workers.json      its workers (secrets scrubbed)
    ops.parquet       every operation record in one file (the sealed file as it is; parts that a
                      full disk left unsealed are sealed into one here); absent if it has none
    resources.jsonl   the client machine's samples; absent if it has none

Nothing a run leaves while it goes is in it (``live.json``, ``.reserve``, ``.seal.lock``, Arrow
streams): a run still going is refused. Findings and figures are computed from these files, so a
bundle carries them by carrying the records.

No secret of the sender's leaves in it: every value under a key that names one (``password``,
``passwd``, ``secret``, ``token``, ``api_key``, ``auth``, ``credential``..., in any case, at any depth,
also inside the JSON text of the scenario, environment and layout) becomes ``***``, and so does the
password of a URL (``scheme://user:PASSWORD@host``) or a ``password=...`` in a message.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import zipfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from workloads.results.atomic_files import DamagedFile, _jsonable
from workloads.results.catalog_folder import StoreError
from workloads.results.run_files import (OPS_DIR, OPS_FILE, RESOURCES_FILE, RUN_FILE, STEPS_FILE, WORKERS_FILE,
                                         RunFolder, read_ops_file)
from workloads.results.run_tables import OPS_COLUMNS, plain_strings

BUNDLE_KIND = "tickbench-run-bundle"
BUNDLE_VERSION = 1
SUFFIX = ".tbrun"
MANIFEST = "manifest.json"
TABLE_MEMBERS = (RUN_FILE, STEPS_FILE, WORKERS_FILE, RESOURCES_FILE)    # read whole, checked in memory
MEMBERS = (*TABLE_MEMBERS, OPS_FILE)                                   # the only names a bundle may hold
COUNTS = ("ops", "steps", "workers", "resources")
SECRET_WORDS = ("password", "passwd", "secret", "token", "api_key", "apikey", "auth", "credential",
                "private_key")
REDACTED = "***"
_URL_PASSWORD = re.compile(r"(?i)([a-z][a-z0-9+.-]*://[^/\s:@]*:)[^/\s@]+@")
_TYPED_SECRETS = ("password", "passwd", "pass", "pwd", "secret", "token", "api[_-]?key")
_SECRET_NAME = rf"[\w.-]*(?:{'|'.join(_TYPED_SECRETS)})[\w.-]*"
# "password=X", "pass: X", "pwd:X" (an assignment) and "--password X" (a flag): the X, in any text
_ASSIGNED = re.compile(rf"(?i)((?:\b{_SECRET_NAME}\s*[=:]\s*)|(?:(?<![\w-])--?{_SECRET_NAME}\s+))[^\s;&,'\"]+")


class BundleError(ValueError):
    """A run that cannot leave as a bundle, or a bundle refused: one line saying what is wrong."""

    def __init__(self, message: str):
        super().__init__(one_line(message))


def one_line(text: Any, limit: int = 400) -> str:
    """``text`` on one line (a hostile name's newlines and controls as spaces), at most ``limit`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


def is_secret_key(key: Any) -> bool:
    """A key whose value is a secret: ``password``, ``db_password``, ``agent_token``, ``Auth``, ``api-key``..."""
    return isinstance(key, str) and any(word in key.lower().replace("-", "_") for word in SECRET_WORDS)


def scrub(value: Any) -> tuple[Any, bool]:
    """``value`` without secrets, and whether any was found: a secret key's value becomes ``***``
    at any depth of dicts and lists, JSON text (a run's scenario, environment, layout) is scrubbed
    as what it holds, and a URL's or a ``password=`` assignment's secret in any other text too."""
    if isinstance(value, dict):
        out, changed = {}, False
        for key, item in value.items():
            if is_secret_key(key) and item not in (None, "", REDACTED):
                out[key], changed = REDACTED, True
            else:
                out[key], found = scrub(item)
                changed |= found
        return out, changed
    if isinstance(value, list):
        items = [scrub(item) for item in value]
        return [item for item, _ in items], any(found for _, found in items)
    if isinstance(value, str):
        if value[:1] in ("{", "["):
            try:
                parsed = json.loads(value)
            except ValueError:
                parsed = None
            if isinstance(parsed, (dict, list)):
                clean, changed = scrub(parsed)
                return (json.dumps(clean, default=_jsonable), True) if changed else (value, False)
        clean = _ASSIGNED.sub(rf"\g<1>{REDACTED}", _URL_PASSWORD.sub(rf"\g<1>{REDACTED}@", value))
        return clean, clean != value
    return value, False


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for chunk in iter(lambda: file.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def content_digest(members: list[dict[str, Any]]) -> str:
    """What a bundle holds, in one hash (its members' names and hashes): the same run bundled twice
    the same way has the same digest."""
    text = "\n".join(f"{m['name']}:{m['sha256']}" for m in sorted(members, key=lambda m: m["name"]))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def origin_host(run: dict[str, Any]) -> str:
    """The machine a run was measured on: its environment's host, else the host that ran it."""
    try:
        environment = json.loads(run.get("environment") or "{}")
    except (TypeError, ValueError):
        environment = {}
    host = environment.get("host") if isinstance(environment, dict) else None
    return str(host or run.get("host") or "")


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value, default=_jsonable).encode("utf-8")


def write_bundle(store, run_id: str, path: Path | str) -> Path:
    """The ended run ``run_id`` (a unique prefix is enough) as one file at ``path``, written whole
    (a temporary name, then a rename). ``BundleError`` if there is no such run, it is damaged or
    still going, or the file cannot be written."""
    path = Path(path)
    try:
        run_id = store.run(run_id)["run_id"]
        folder = RunFolder(store.run_folder(run_id))
        found = folder.checked()
    except (StoreError, DamagedFile, ValueError) as exc:
        raise BundleError(f"run {run_id}: {exc}") from None
    run, rows = found["run"], found["rows"]
    if run.get("status") == "running":
        raise BundleError(f"run {run_id} is still going: only a run that has ended leaves as a bundle")
    members: dict[str, bytes] = {RUN_FILE: _json_bytes(scrub(run)[0]),
                                 STEPS_FILE: _json_bytes(scrub(rows["steps"])[0]),
                                 WORKERS_FILE: _json_bytes(scrub(rows["workers"])[0])}
    if rows["resources"]:
        members[RESOURCES_FILE] = "".join(json.dumps(r, default=_jsonable) + "\n" for r in rows["resources"]).encode()
    counts = {"ops": 0, "steps": len(rows["steps"]), "workers": len(rows["workers"]),
              "resources": len(rows["resources"])}
    with tempfile.TemporaryDirectory(prefix="tickbench-bundle-") as scratch:
        ops = _ops_file(found["ops_files"], Path(scratch))
        listed = [{"name": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
                  for name, data in members.items()]
        if ops is not None:
            counts["ops"] = pq.read_metadata(ops).num_rows
            listed.append({"name": OPS_FILE, "size": ops.stat().st_size, "sha256": sha256_file(ops)})
        manifest = {"kind": BUNDLE_KIND, "version": BUNDLE_VERSION, "run_id": run_id, "origin_host": origin_host(run),
                    "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                    "tickbench": _tickbench_version(), "members": listed, "counts": counts}
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(3).hex()}.tmp")
        try:
            with zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as bundle:
                bundle.writestr(MANIFEST, json.dumps(manifest, indent=1))
                for name, data in members.items():
                    bundle.writestr(name, data)
                if ops is not None:        # Parquet is compressed already: stored as it is
                    bundle.write(ops, OPS_FILE, compress_type=zipfile.ZIP_STORED)
            os.replace(temporary, path)
        except OSError as exc:
            temporary.unlink(missing_ok=True)
            raise BundleError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path


def _ops_file(files: list[Path], scratch: Path) -> Path | None:
    """The run's records as one Parquet file: the sealed file, or its parts sealed into one in
    ``scratch`` (a disk that was full at the run's end left them as parts); None if it has none."""
    if not files:
        return None
    if len(files) == 1 and files[0].name == OPS_FILE and files[0].parent.name != OPS_DIR:
        return files[0]
    whole = pa.concat_tables([plain_strings(read_ops_file(p)) for p in files] + [pa.schema(OPS_COLUMNS).empty_table()],
                             promote_options="default").select(list(OPS_COLUMNS))
    sealed = scratch / OPS_FILE
    pq.write_table(whole, sealed, compression="zstd")
    return sealed


def _tickbench_version() -> str:
    from workloads.run.environment import version_of
    return version_of("tickbench")
