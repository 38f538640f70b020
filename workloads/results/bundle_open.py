"""A run bundle (``workloads.results.bundle``) opened into this catalog: untrusted input, checked
before anything is written, then added in one rename (``open_bundle``).

Checked before anything is written (from the zip's headers first, then reading at most what they
declare): it is a zip of at most a few entries; every name is one of the bundle's plain names
(never a path: no '/', '..', '\\', no absolute path), no entry is a symlink, a folder, encrypted or
compressed by another method than deflate, no name is there twice; sizes are under the limits
(``MAX_TOTAL_BYTES`` in all, each table file its own, the manifest ``MAX_MANIFEST_BYTES``) and no
large member is compressed more than ``MAX_RATIO``:1 (a zip bomb is refused from its headers);
the manifest parses with the right types, is of a bundle version this Tickbench reads, lists
exactly the members there are with their sizes and sha256 (matched while reading); the record
counts are sane numbers and match what the files hold; run.json, steps.json, workers.json and
resources.jsonl have the types of the catalog's tables and are all of one run, whose id is a
name (``workloads.paths.check_run_id``) and which has ended.

Then the files go into a hidden folder inside the catalog's runs folder (``.incoming-<random>/``,
which no reader lists), the records are checked there (a Parquet file with the columns and types of
operation records, every one of this run, as many as counted), the folder is read back as a run
(``RunFolder.checked``) and renamed into place. Any failure: ``BundleError`` in one line naming
what is wrong, and the hidden folder removed: nothing is left behind.

The run opened is marked with where it came from: its environment's ``origin`` is
``{"bundle": true, "host", "opened_at", "file", "bundled_at", "tickbench", "content"}`` (``content``:
the bundle's ``content_digest``). Opening the same bundle again adds nothing (``added=False``); a
bundle of a run id the catalog holds with other content is refused.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import zipfile
import zlib
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from workloads.names import look_alike
from workloads.paths import check_run_id
from workloads.results.atomic_files import DamagedFile, _jsonable
from workloads.results.bundle import (BUNDLE_KIND, BUNDLE_VERSION, COUNTS, MANIFEST, MEMBERS, BundleError,
                                      content_digest, one_line)
from workloads.results.record_budget import metadata_problem, records_budget, text_problem
from workloads.results.record_checks import record_problem
from workloads.results.leftovers import INCOMING, remove_leftover_incoming
from workloads.results.run_files import (OPS_FILE, RESOURCES_FILE, RUN_FILE, RUN_JSON_FIELDS, STEPS_FILE, WORKERS_FILE,
                                         RunFolder)
from workloads.results.strict_json import json_record
from workloads.results.run_tables import (OPS_COLUMNS, RESOURCE_COLUMNS, RUN_COLUMNS, STEP_COLUMNS, WORKER_COLUMNS,
                                          table)

MAX_TOTAL_BYTES = 2 << 30             # every member together, uncompressed
MAX_MANIFEST_BYTES = 1 << 20
MAX_MEMBER_BYTES = {RUN_FILE: 16 << 20, STEPS_FILE: 64 << 20, WORKERS_FILE: 64 << 20, RESOURCES_FILE: 256 << 20,
                    OPS_FILE: MAX_TOTAL_BYTES, MANIFEST: MAX_MANIFEST_BYTES}
MAX_RATIO = 200                       # uncompressed : compressed, for a member over RATIO_FLOOR
RATIO_FLOOR = 1 << 20
MAX_ENTRIES = 16
MAX_COUNTS = {"ops": 2**31 - 1, "steps": 100_000, "workers": 1_000_000, "resources": 50_000_000}
REQUIRED_OPS_COLUMNS = ("run_id", "step", "kind", "t_start", "total_s", "ok")
_TABLES = {RUN_FILE: ("runs", RUN_COLUMNS), STEPS_FILE: ("steps", STEP_COLUMNS),
           WORKERS_FILE: ("workers", WORKER_COLUMNS), RESOURCES_FILE: ("resources", RESOURCE_COLUMNS)}
_SYMLINK, _FILE_TYPE = 0o120000, 0o170000


@dataclass(frozen=True)
class OpenedBundle:
    run_id: str
    added: bool               # False: the catalog held this run already (nothing was written)
    origin_host: str

    @property
    def message(self) -> str:
        if not self.added:
            return f"run {self.run_id} is already in the catalog"
        return f"opened run {self.run_id} from host {self.origin_host or 'unknown'}"


class _Refused(Exception):
    """Why a bundle is refused (``open_bundle`` names the file)."""


def open_bundle(store, path: Path | str) -> OpenedBundle:
    """Add the run in the bundle at ``path`` to ``store``'s catalog (see the module's docstring);
    ``BundleError`` naming the file and what is wrong if it is refused."""
    path = Path(path)
    try:
        return _open(store, path)
    except _Refused as exc:
        raise BundleError(f"{path.name}: refused: {exc}") from None
    except (pa.ArrowException, zipfile.BadZipFile, zlib.error, EOFError, RecursionError, KeyError, TypeError,
            ValueError, OverflowError) as exc:       # input no check above foresaw: refused all the same
        raise BundleError(f"{path.name}: refused: damaged or not a Tickbench bundle "
                          f"({type(exc).__name__}: {one_line(exc, 120)})") from None


def _open(store, path: Path) -> OpenedBundle:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise _Refused(f"cannot be read ({exc.strerror or exc})") from None
    if size > MAX_TOTAL_BYTES + (64 << 20):
        raise _Refused(f"{size:,} bytes: a bundle is at most {MAX_TOTAL_BYTES:,} bytes")
    try:
        bundle = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        raise _Refused(f"not a Tickbench bundle: not a zip file, or truncated ({one_line(exc, 120)})") from None
    with bundle:
        infos = _checked_entries(bundle)
        manifest = _manifest(bundle, infos)
        data = _tables(bundle, infos, manifest)
        run_id = manifest["run_id"]
        digest = content_digest(manifest["members"])
        if store._folder(run_id).exists():
            if _same_run(store._folder(run_id), data, manifest, digest):
                return OpenedBundle(run_id, False, manifest["origin_host"])
            raise _Refused(f"run {run_id} is already in the catalog with other content; remove it first "
                           f"(tickbench delete {run_id})")
        alike = look_alike(run_id, store.run_ids())
        if alike is not None:
            raise _Refused(f"run id {ascii(run_id)} looks like run {ascii(alike)} of the catalog: one would pass "
                           "for the other")
        remove_leftover_incoming(store.runs_dir)
        _add(store, bundle, infos, manifest, data, digest, path.name)
    return OpenedBundle(run_id, True, manifest["origin_host"])


# --- the zip's entries, from its headers ---------------------------------------------------------
def _checked_entries(bundle: zipfile.ZipFile) -> dict[str, zipfile.ZipInfo]:
    infos = bundle.infolist()
    if len(infos) > MAX_ENTRIES:
        raise _Refused(f"holds {len(infos):,} entries; a bundle holds at most {len(MEMBERS) + 1}")
    seen: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        name = info.filename
        _check_name(name)
        if (info.external_attr >> 16) & _FILE_TYPE == _SYMLINK:
            raise _Refused(f"member {name!r} is a symlink; a bundle holds plain files only")
        if info.is_dir():
            raise _Refused(f"member {name!r} is a folder; a bundle holds plain files only")
        if name in seen:
            raise _Refused(f"member {name!r} is there twice (duplicate names)")
        if name not in MEMBERS and name != MANIFEST:
            raise _Refused(f"unknown member {name!r}: a bundle holds only {MANIFEST}, {', '.join(MEMBERS)}")
        if info.flag_bits & 0x1:
            raise _Refused(f"member {name!r} is encrypted")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise _Refused(f"member {name!r} is compressed by method {info.compress_type}; only deflate is read")
        if info.file_size > MAX_MEMBER_BYTES[name]:
            raise _Refused(f"member {name} is {info.file_size:,} bytes; at most {MAX_MEMBER_BYTES[name]:,}")
        if info.file_size > RATIO_FLOOR and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise _Refused(f"member {name} would expand {info.file_size / max(info.compress_size, 1):,.0f}:1 "
                           f"({info.file_size:,} bytes from {info.compress_size:,}; at most {MAX_RATIO}:1): a zip bomb")
        seen[name] = info
    total = sum(info.file_size for info in infos)
    if total > MAX_TOTAL_BYTES:
        raise _Refused(f"its members are {total:,} bytes together; at most {MAX_TOTAL_BYTES:,}")
    if MANIFEST not in seen:
        raise _Refused(f"no {MANIFEST}: not a Tickbench bundle")
    return seen


def _check_name(name: str) -> None:
    if "\\" in name:
        raise _Refused(f"member {name!r} has a backslash: a path, not a name")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise _Refused(f"member {name!r} is an absolute path: it would escape the catalog")
    if ".." in name.split("/"):
        raise _Refused(f"member {name!r} climbs out with '..': it would escape the catalog")
    if "/" in name or not name.isprintable():
        raise _Refused(f"member {name!r} is a path, not one of the bundle's plain names")


def _read(bundle: zipfile.ZipFile, info: zipfile.ZipInfo, out=None) -> tuple[bytes, str]:
    """The member's bytes (or written to ``out``) and their sha256, reading never more than its header
    declares; a member longer, shorter or damaged is refused."""
    digest, chunks, read = hashlib.sha256(), [], 0
    try:
        with bundle.open(info) as member:
            while True:
                chunk = member.read(min(1 << 20, info.file_size - read + 1))
                if not chunk:
                    break
                read += len(chunk)
                if read > info.file_size:
                    raise _Refused(f"member {info.filename} holds more than the {info.file_size:,} bytes it declares")
                digest.update(chunk)
                if out is None:
                    chunks.append(chunk)
                else:
                    out.write(chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, NotImplementedError) as exc:
        raise _Refused(f"member {info.filename} is damaged ({one_line(exc, 120)})") from None
    if read != info.file_size:
        raise _Refused(f"member {info.filename} holds {read:,} bytes, not the {info.file_size:,} it declares")
    return b"".join(chunks), digest.hexdigest()


# --- the manifest ------------------------------------------------------------------------------
def _manifest(bundle: zipfile.ZipFile, infos: dict[str, zipfile.ZipInfo]) -> dict[str, Any]:
    raw, _ = _read(bundle, infos[MANIFEST])
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _Refused(f"{MANIFEST} is not JSON ({one_line(exc, 120)})") from None
    if not isinstance(manifest, dict):
        raise _Refused(f"{MANIFEST} holds a {type(manifest).__name__}, not a record")
    if manifest.get("kind") != BUNDLE_KIND:
        raise _Refused(f"{MANIFEST}: kind is {manifest.get('kind')!r}, not {BUNDLE_KIND!r}: not a Tickbench bundle")
    version = manifest.get("version")
    if not _whole(version):
        raise _Refused(f"{MANIFEST}: version must be a whole number, not {version!r}")
    if version < 1:
        raise _Refused(f"{MANIFEST}: version {version} is no bundle version (1 to {BUNDLE_VERSION})")
    if version > BUNDLE_VERSION:
        raise _Refused(f"written by a newer Tickbench (bundle version {version}; "
                       f"this one reads up to {BUNDLE_VERSION})")
    for key in ("run_id", "origin_host", "created_at", "tickbench"):
        if not isinstance(manifest.get(key), str):
            raise _Refused(f"{MANIFEST}: {key} must be text, not {type(manifest.get(key)).__name__}")
    try:
        check_run_id(manifest["run_id"])
    except ValueError as exc:
        raise _Refused(f"{MANIFEST}: {exc}") from None
    members = manifest.get("members")
    if not isinstance(members, list) or not all(isinstance(m, dict) for m in members):
        raise _Refused(f"{MANIFEST}: members must be a list of records")
    for member in members:
        name, size, sha = member.get("name"), member.get("size"), member.get("sha256")
        if not isinstance(name, str) or not _whole(size) or not isinstance(sha, str) or len(sha) != 64 \
                or any(c not in "0123456789abcdef" for c in sha):
            raise _Refused(f"{MANIFEST}: a member must have a name, a size (a whole number) and a sha256 "
                           f"(64 hex digits): {one_line(json.dumps(member, default=str), 120)}")
    names = [m["name"] for m in members]
    for name in names:
        if names.count(name) > 1:
            raise _Refused(f"{MANIFEST}: member {name!r} is listed twice")
        if name not in infos:
            raise _Refused(f"member {name!r} is in the manifest but not in the bundle")
    for name in infos:
        if name != MANIFEST and name not in names:
            raise _Refused(f"member {name} is in the bundle but not in its manifest")
    if RUN_FILE not in names:
        raise _Refused(f"no {RUN_FILE}: a bundle holds its run's record")
    for member in members:
        if member["size"] != infos[member["name"]].file_size:
            raise _Refused(f"member {member['name']} is {infos[member['name']].file_size:,} bytes; "
                           f"the manifest says {member['size']:,}")
    counts = manifest.get("counts")
    if not isinstance(counts, dict) or set(counts) != set(COUNTS):
        raise _Refused(f"{MANIFEST}: counts must be a record of {', '.join(COUNTS)}")
    for key in COUNTS:
        if not _whole(counts[key]) or not 0 <= counts[key] <= MAX_COUNTS[key]:
            raise _Refused(f"{MANIFEST}: count of {key} {one_line(counts[key], 40)} is not a number of "
                           f"records from 0 to {MAX_COUNTS[key]:,}")
    if OPS_FILE not in names and counts["ops"]:
        raise _Refused(f"counts {counts['ops']:,} operation records but holds no {OPS_FILE}")
    return manifest


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# --- the tables: run, steps, workers, resources -------------------------------------------------
def _tables(bundle: zipfile.ZipFile, infos: dict[str, zipfile.ZipInfo], manifest: dict[str, Any]) -> dict[str, Any]:
    """Each table member read (hash matched), parsed and typed as the catalog's tables; the raw bytes
    under ``raw``."""
    sha = {m["name"]: m["sha256"] for m in manifest["members"]}
    raw, rows = {}, {}
    for name in (RUN_FILE, STEPS_FILE, WORKERS_FILE, RESOURCES_FILE):
        if name not in sha:
            rows[name] = []
            continue
        raw[name], found = _read(bundle, infos[name])
        if found != sha[name]:
            raise _Refused(f"member {name}: its sha256 is not the manifest's (altered or damaged)")
        rows[name] = _lines(raw[name]) if name == RESOURCES_FILE else _json_rows(name, raw[name])
    run_id = manifest["run_id"]
    run = rows[RUN_FILE][0]
    if run.get("run_id") != run_id:
        raise _Refused(f"{RUN_FILE} is of run {one_line(run.get('run_id'), 80)!r}, the manifest's of {run_id!r}")
    status = run.get("status")
    if not isinstance(status, str) or not status:
        raise _Refused(f"{RUN_FILE}: status must be text, not {status!r}")
    if status == "running":
        raise _Refused(f"run {run_id} is still going (status running): a bundle holds an ended run")
    for key in RUN_JSON_FIELDS:
        try:
            json_record(run.get(key), f"{RUN_FILE}: {key}")
        except ValueError as exc:
            raise _Refused(str(exc)) from None
    for name, (label, columns) in _TABLES.items():
        for row in rows[name]:
            row.setdefault("run_id", run_id)
        if any(row.get("run_id") != run_id for row in rows[name]):
            raise _Refused(f"{name} holds records of another run than {run_id}")
        try:
            table(rows[name], columns)
        except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
            raise _Refused(f"{name}: wrong types ({one_line(exc, 120)})") from None
    counts = manifest["counts"]
    for name, key in ((STEPS_FILE, "steps"), (WORKERS_FILE, "workers"), (RESOURCES_FILE, "resources")):
        if len(rows[name]) != counts[key]:
            raise _Refused(f"the manifest counts {counts[key]:,} {key} but {name} holds {len(rows[name]):,}")
    return {"run": run, "raw": raw, "rows": rows}


def _json_rows(name: str, raw: bytes) -> list[dict[str, Any]]:
    try:
        value = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _Refused(f"{name} is not JSON ({one_line(exc, 120)})") from None
    if name == RUN_FILE:
        if not isinstance(value, dict):
            raise _Refused(f"{name} holds a {type(value).__name__}, not a record")
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise _Refused(f"{name} holds a {type(value).__name__}, not a list of records")
    return value


def _lines(raw: bytes) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(raw.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise _Refused(f"{RESOURCES_FILE}: line {number} is not a JSON record") from None
        if not isinstance(row, dict):
            raise _Refused(f"{RESOURCES_FILE}: line {number} is not a record")
        rows.append(row)
    return rows


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


# --- already there? ------------------------------------------------------------------------------
def _same_run(folder: Path, data: dict[str, Any], manifest: dict[str, Any], digest: str) -> bool:
    """Whether the run in ``folder`` is the bundle's: opened from a bundle of the same content, or
    the very run it was made of (same start, host, steps, workers and record count)."""
    found = RunFolder(folder)
    run = found.run()
    environment = _loads(run.get("environment") or "") if isinstance(run.get("environment"), str) else None
    origin = environment.get("origin") if isinstance(environment, dict) else None
    if isinstance(origin, dict) and origin.get("bundle"):
        return origin.get("content") == digest
    theirs = data["run"]
    try:
        ops = sum(pq.read_metadata(p).num_rows for p in found.ops_files() if p.suffix == ".parquet")
        same_tables = (len(found.steps()), len(found.workers())) == (manifest["counts"]["steps"],
                                                                     manifest["counts"]["workers"])
    except (pa.ArrowException, OSError, DamagedFile):
        return False
    return (same_tables and ops == manifest["counts"]["ops"] and run.get("created_at") == theirs.get("created_at")
            and run.get("host") == theirs.get("host") and run.get("status") == theirs.get("status"))


# --- written: a hidden folder, checked, renamed into place ---------------------------------------
def _add(store, bundle: zipfile.ZipFile, infos: dict[str, zipfile.ZipInfo], manifest: dict[str, Any],
         data: dict[str, Any], digest: str, file_name: str) -> None:
    run_id = manifest["run_id"]
    # the opener's pid in the name: a folder whose opener is gone is a leftover at once
    incoming = store.runs_dir / f"{INCOMING}{os.getpid()}-{os.urandom(8).hex()}"
    staged = incoming / run_id
    try:
        staged.mkdir(parents=True)
        for name, raw in data["raw"].items():
            if name != RUN_FILE:
                (staged / name).write_bytes(raw)
        if OPS_FILE in infos:
            with open(staged / OPS_FILE, "wb") as out:
                _, found = _read(bundle, infos[OPS_FILE], out)
            if found != {m["name"]: m["sha256"] for m in manifest["members"]}[OPS_FILE]:
                raise _Refused(f"member {OPS_FILE}: its sha256 is not the manifest's (altered or damaged)")
            _check_ops(staged / OPS_FILE, infos[OPS_FILE].compress_size, run_id, manifest["counts"]["ops"],
                       {int(r["step"]) for r in data["rows"][STEPS_FILE]},
                       {int(r["worker"]) for r in data["rows"][WORKERS_FILE]} or None,
                       records_budget(data["run"], len(data["rows"][WORKERS_FILE])))
        run = dict(data["run"])
        environment = _loads(run.get("environment") or "{}") or {}
        environment["origin"] = {"bundle": True, "host": manifest["origin_host"], "file": file_name,
                                 "opened_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                                 "bundled_at": manifest["created_at"], "tickbench": manifest["tickbench"],
                                 "content": digest}
        run["environment"] = json.dumps(environment, default=_jsonable)
        (staged / RUN_FILE).write_text(json.dumps(run, default=_jsonable), encoding="utf-8")
        try:
            RunFolder(staged).checked()
        except DamagedFile as exc:
            raise _Refused(f"does not read back as a run ({exc})") from None
        target = store._folder(run_id)
        try:
            target.mkdir()          # taken here, or by whoever came first: then nothing is replaced
        except FileExistsError:
            raise _Refused(f"run {run_id} was added to the catalog meanwhile") from None
        try:
            os.rename(staged, target)           # replaces the empty folder just made, at once
        except OSError as exc:
            _remove_if_empty(target)
            raise _Refused(f"cannot add run {run_id} ({exc.strerror or exc})") from None
        with store._lock:                       # a run of this id read before (since deleted) is read anew
            store._cache.pop(run_id, None)
            store._views_built = False
    except OSError as exc:
        raise _Refused(f"cannot write into the catalog ({exc.strerror or exc})") from None
    finally:
        shutil.rmtree(incoming, ignore_errors=True)


def _check_ops(path: Path, sent_bytes: int, run_id: str, expected: int, steps: set[int], workers: set[int] | None,
               budget: int | None) -> None:
    """The operation records: a Parquet file of the catalog's columns and types, within what a run
    of its length could hold (``workloads.results.record_budget``, from the footer alone), every
    record of ``run_id``, as many as the manifest counts, every value decodable and true to what a
    run can record (``workloads.results.record_checks``). Text is read as dictionaries: a value
    repeated a million times is held once. Its bytes are those it took in the bundle
    (``sent_bytes``): a Parquet file written uncompressed that the zip deflates weighs that."""
    try:
        texts = [n for n in pq.read_schema(path).names if OPS_COLUMNS.get(n) == pa.string()]
        records = pq.ParquetFile(path, read_dictionary=texts)
    except (pa.ArrowException, OSError) as exc:
        raise _Refused(f"{OPS_FILE} is not a Parquet file ({one_line(exc, 120)})") from None
    with records:
        for field in records.schema_arrow:
            kind = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
            if field.name not in OPS_COLUMNS:
                raise _Refused(f"{OPS_FILE}: column {field.name!r} is not a column of operation records")
            if kind != OPS_COLUMNS[field.name] and not (pa.types.is_large_string(kind) and
                                                        OPS_COLUMNS[field.name] == pa.string()):
                raise _Refused(f"{OPS_FILE}: column {field.name} is {kind}, not {OPS_COLUMNS[field.name]}")
        missing = [c for c in REQUIRED_OPS_COLUMNS if c not in records.schema_arrow.names]
        if missing:
            raise _Refused(f"{OPS_FILE}: no column {missing[0]}")
        if records.metadata.num_rows != expected:
            raise _Refused(f"the manifest counts {expected:,} operation records but {OPS_FILE} holds "
                           f"{records.metadata.num_rows:,}")
        too_much = metadata_problem(records.metadata, min(path.stat().st_size, sent_bytes), budget)
        if too_much:
            raise _Refused(f"{OPS_FILE}: {too_much}")
        read = 0
        try:
            for batch in records.iter_batches(batch_size=1 << 16):
                read += batch.num_rows
                ids = batch.column("run_id")
                if pa.types.is_dictionary(ids.type):        # every id it names is this run's
                    ids = pc.take(ids.dictionary, pc.unique(ids.indices.drop_null())) if ids.null_count == 0 else ids
                if ids.null_count or pc.any(pc.not_equal(ids, run_id)).as_py():
                    raise _Refused(f"{OPS_FILE} holds records of another run than {run_id}")
                problem = (text_problem(batch, read - batch.num_rows) or
                           record_problem(batch, read - batch.num_rows, steps, workers))
                if problem:
                    raise _Refused(f"{OPS_FILE}: {problem}")
        except (pa.ArrowException, OSError) as exc:
            raise _Refused(f"{OPS_FILE}: unreadable records ({one_line(exc, 120)})") from None
    if read != expected:
        raise _Refused(f"{OPS_FILE}: {read:,} records read, {expected:,} counted")


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass                          # not empty (another opener's), or gone already: it stays as it is
