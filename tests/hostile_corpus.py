"""A corpus of hostile run bundles, built from a genuine one (nothing binary is committed): each
class of attack a colleague's bundle can carry, as the refused cases (``REFUSED``: a builder and
what the one-line refusal must name) and the cases that open but whose every string must be shown
as text (``SHOWN``). ``tests/test_bundles.py`` and ``tests/test_hostile_corpus.py`` use it; as a
script it writes the corpus as files, to try by hand or on another machine:

    python tests/hostile_corpus.py GOOD.tbrun OUT_FOLDER      (GOOD: tickbench export RUN --bundle)

A builder takes the genuine bundle's files and manifest (``read_bundle``) and returns the bytes
of a bundle; ``make`` re-hashes the manifest's members, so each case passes every check but its own.
"""
from __future__ import annotations

import hashlib
import io
import json
import re
import struct
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

MANIFEST = "manifest.json"


def read_bundle(data: bytes) -> tuple[dict[str, bytes], dict]:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        files = {name: z.read(name) for name in z.namelist() if name != MANIFEST}
        return files, json.loads(z.read(MANIFEST))


def make(files: dict[str, bytes], manifest: dict | bytes, rehash: bool = True, extra=(), listed=None,
         method: int = zipfile.ZIP_DEFLATED) -> bytes:
    """A bundle of ``files`` (and ``extra`` entries: (name or ZipInfo, bytes)); the manifest's members
    made anew from the files unless ``rehash`` is False (or the manifest is given as bytes)."""
    if not isinstance(manifest, bytes):
        manifest = json.loads(json.dumps(manifest))
        if rehash:
            manifest["members"] = [{"name": n, "size": len(b), "sha256": hashlib.sha256(b).hexdigest()}
                                   for n, b in files.items() if listed is None or n in listed]
        manifest = json.dumps(manifest).encode()
    out = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")               # duplicate names are the point of one case
        with zipfile.ZipFile(out, "w", method) as z:
            for name, data in [(MANIFEST, manifest), *files.items(), *extra]:
                z.writestr(name, data)
    return out.getvalue()


def day_long(files: dict[str, bytes], manifest: dict, ops: bytes, records: int) -> bytes:
    """The bundle with ``ops`` (``records`` records) as its operation records, its run made to last
    a day (so the records-per-second budget lets them in), its manifest counting them."""
    files["ops.parquet"] = ops
    run = json.loads(files["run.json"])
    run["finished_at"] = run["created_at"][:10] + "T23:59:59"
    files["run.json"] = json.dumps(run).encode()
    manifest["counts"]["ops"] = records
    return make(files, manifest)


def _edit_json(files, name, change):
    value = json.loads(files[name])
    change(value)
    files[name] = json.dumps(value).encode()


def _with(change):
    def build(files, manifest):
        change(files, manifest)
        return make(files, manifest)
    return build


def _symlink(files, manifest):
    """workers.json as a symlink entry (to /etc/passwd), listed in the manifest as it is."""
    link = zipfile.ZipInfo("workers.json")
    link.external_attr = 0o120777 << 16
    files = dict(files)
    target = b"/etc/passwd"
    files.pop("workers.json")
    manifest = json.loads(json.dumps(manifest))
    for member in manifest["members"]:
        if member["name"] == "workers.json":
            member.update(size=len(target), sha256=hashlib.sha256(target).hexdigest())
    return make(files, manifest, rehash=False, extra=[(link, target)])


def _sha_mismatch(files, manifest):
    before = files["workers.json"]
    files["workers.json"] = before.replace(b'"state": "', b'"state": "X', 1)[:len(before)]
    assert len(files["workers.json"]) == len(before) and files["workers.json"] != before
    return make(files, manifest, rehash=False)


def _zip_bomb(files, manifest):
    """ops.parquet as 1 GiB of zeros, deflated (about 1 MB): streamed, so nothing big is held."""
    out = io.BytesIO()
    size = 1 << 30
    manifest = json.loads(json.dumps(manifest))
    manifest["members"] = [m for m in manifest["members"] if m["name"] != "ops.parquet"] + [
        {"name": "ops.parquet", "size": size, "sha256": "0" * 64}]
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(MANIFEST, json.dumps(manifest))
        for name, data in files.items():
            if name != "ops.parquet":
                z.writestr(name, data)
        info = zipfile.ZipInfo("ops.parquet")
        info.compress_type = zipfile.ZIP_DEFLATED
        with z.open(info, "w", force_zip64=True) as member:
            chunk = bytes(1 << 20)
            for _ in range(size // len(chunk)):
                member.write(chunk)
    return out.getvalue()


def _lying_header(files, manifest):
    """run.json's headers (local and central) and the manifest all say it is half its size: reading
    stops there and the check of what was read fails."""
    lie = len(files["run.json"]) // 2
    manifest = json.loads(json.dumps(manifest))
    manifest["members"] = [{"name": n, "size": lie if n == "run.json" else len(b),
                            "sha256": hashlib.sha256(b).hexdigest()} for n, b in files.items()]
    data = bytearray(make(files, manifest, rehash=False))
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        local = z.getinfo("run.json").header_offset
    data[local + 22:local + 26] = struct.pack("<I", lie)
    central = data.index(b"PK\x01\x02")
    while True:
        name_length = struct.unpack("<H", data[central + 28:central + 30])[0]
        if data[central + 46:central + 46 + name_length] == b"run.json":
            break
        central = data.index(b"PK\x01\x02", central + 4)
    data[central + 24:central + 28] = struct.pack("<I", lie)
    return bytes(data)


def _parquet(table: pa.Table) -> bytes:
    out = io.BytesIO()
    pq.write_table(table, out, compression="zstd")      # as a run writes its records
    return out.getvalue()


def _other_run_records(files, manifest):
    records = pq.read_table(io.BytesIO(files["ops.parquet"]))
    files["ops.parquet"] = _parquet(records.set_column(records.schema.get_field_index("run_id"), "run_id",
                                                       pa.array(["someone-else"] * records.num_rows)))
    return make(files, manifest)


def _record_says(column: str, value):
    """The first operation record's ``column`` set to ``value`` (a figure that would lie)."""
    def build(files, manifest):
        records = pq.read_table(io.BytesIO(files["ops.parquet"]))
        index = records.schema.get_field_index(column)
        values = records.column(column).to_pylist()
        values[0] = value
        files["ops.parquet"] = _parquet(records.set_column(index, records.schema.field(index),
                                                           pa.array(values, records.schema.field(index).type)))
        return make(files, manifest)
    return build


def _set(path: str, value):
    """A run.json value set (``run.json:status``: its member hashed anew), or the manifest's
    (``counts.ops``, ``version``: the rest of it as it was)."""
    def build(files, manifest):
        if path.startswith("run.json:"):
            _edit_json(files, "run.json", lambda run: run.__setitem__(path.split(":")[1], value))
            return make(files, manifest)
        where, *rest = path.split(".")
        (manifest[where] if rest else manifest).__setitem__(rest[0] if rest else where, value)
        return make(files, manifest, rehash=False)
    return build


# --- records that claim more than a run could hold ----------------------------------------------------
def parquet_bomb(records: int):
    """ops.parquet as ``records`` copies of the genuine first record: run-length and dictionary
    encoded, 200 million of them take a few hundred KB (the manifest counts them all)."""
    def build(files, manifest):
        first = pq.read_table(io.BytesIO(files["ops.parquet"])).slice(0, 1)
        chunk = min(records, 1 << 20)
        block = first.take(pa.array(np.zeros(chunk, dtype=np.int64)))
        out = io.BytesIO()
        with pq.ParquetWriter(out, block.schema, compression="zstd") as writer:
            for start in range(0, records, chunk):
                writer.write_table(block.slice(0, min(chunk, records - start)), row_group_size=chunk)
        files["ops.parquet"] = out.getvalue()
        manifest = json.loads(json.dumps(manifest))
        manifest["counts"]["ops"] = records
        return make(files, manifest)
    return build


def deflated_records(records: int):
    """Records whose Parquet file (uncompressed, plain) takes far over 4 bytes each but the zip's
    deflate under 4, at a ratio the zip-bomb check lets through: what a record weighs is what it
    took to send."""
    def build(files, manifest):
        first = pq.read_table(io.BytesIO(files["ops.parquet"])).slice(0, 1)
        rng = np.random.default_rng(1)
        table = first.take(pa.array(np.zeros(records, dtype=np.int64)))
        for column, values in (("t_start", np.sort(rng.choice(np.linspace(0, 600, 256), records))),
                               ("total_s", rng.choice(np.linspace(0.001, 0.01, 256), records))):
            table = table.set_column(table.schema.get_field_index(column), column, pa.array(values))
        out = io.BytesIO()
        pq.write_table(table, out, compression="NONE", use_dictionary=False)
        files["ops.parquet"] = out.getvalue()
        _edit_json(files, "run.json", lambda run: run.__setitem__("finished_at", run["created_at"][:10] + "T23:59:59"))
        manifest = json.loads(json.dumps(manifest))
        manifest["counts"]["ops"] = records
        return make(files, manifest)
    return build


# --- structure: JSON where a record belongs that is not one -------------------------------------------
def _steps_field(key: str, text: str):
    """The first step's ``key`` (a JSON text field of steps.json) set to ``text``."""
    def build(files, manifest):
        _edit_json(files, "steps.json", lambda steps: steps[0].__setitem__(key, text))
        return make(files, manifest)
    return build


def _run_field(key: str, text: str):
    def build(files, manifest):
        _edit_json(files, "run.json", lambda run: run.__setitem__(key, text))
        return make(files, manifest)
    return build


def _nested(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


# --- names ----------------------------------------------------------------------------------------------
def renamed(run_id: str):
    """The whole run under another id: the manifest, every table and every record say ``run_id``."""
    def build(files, manifest):
        old = manifest["run_id"]
        _edit_json(files, "run.json", lambda run: run.__setitem__("run_id", run_id))
        for name in ("steps.json", "workers.json"):
            _edit_json(files, name, lambda rows: [row.__setitem__("run_id", run_id) for row in rows])
        if "resources.jsonl" in files:
            lines = [json.loads(line) for line in files["resources.jsonl"].splitlines() if line.strip()]
            files["resources.jsonl"] = b"".join(json.dumps({**line, "run_id": run_id}).encode() + b"\n"
                                                for line in lines)
        records = pq.read_table(io.BytesIO(files["ops.parquet"]))
        index = records.schema.get_field_index("run_id")
        files["ops.parquet"] = _parquet(records.set_column(index, "run_id", pa.array([run_id] * records.num_rows)))
        manifest = {**json.loads(json.dumps(manifest)), "run_id": run_id}
        assert old != run_id
        return make(files, manifest)
    return build


NAMES = {
    # a run id no OS may hold, or one that is not what it shows: (id, what the refusal names)
    "a Hangul filler id": ("\u3164", "U+3164 (HANGUL FILLER)"),
    "a braille blank in an id": ("\u2800a1", "U+2800 (BRAILLE PATTERN BLANK)"),
    "a right-to-left override in an id": ("a\u202e1b", "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
    "an id spelt NFD": ("e\u0301x", "not in its normal form"),
    "a full-width id": ("\uff52\uff55\uff4e", "write it 'run' (NFKC)"),
    "a device name CON": ("CON", "device name on Windows"),
    "a device name with an extension nul.txt": ("nul.txt", "device name on Windows"),
    "a device name COM1": ("COM1", "device name on Windows"),
    "a trailing dot": ("run.", "no trailing dot or space"),
    "a trailing space": ("run ", "no trailing dot or space"),
    "a drive prefix C:x": ("C:x", "reads 'C:x' as a drive"),
    "a hyperlink markup id": ("[link=file:etc]a1", "no ':'"),
    "64 emoji": ("\U0001f600" * 64, "256 bytes given"),
}

TEXT_LIMIT = 64 << 10

REFUSED = {
    # name: (build(files, manifest) -> bytes, what the one line must name)
    "path escape ../x": (lambda f, m: make(f, m, extra=[("../x", b"evil")]), "escape"),
    "absolute path /etc/x": (lambda f, m: make(f, m, extra=[("/etc/x", b"evil")]), "absolute path"),
    "backslash": (lambda f, m: make(f, m, extra=[("..\\x", b"evil")]), "backslash"),
    "a symlink entry": (_symlink, "symlink"),
    "truncated file": (lambda f, m: make(f, m)[:len(make(f, m)) // 2], "truncated"),
    "not a zip": (lambda f, m: b"PAR1 this is not a zip file at all\n" * 40, "not a zip"),
    "oversized declared counts": (_set("counts.ops", 10**15), "count of ops"),
    "counts that do not match the files": (lambda f, m: _set("counts.steps", m["counts"]["steps"] + 1)(f, m),
                                           "steps.json holds"),
    "operation count that does not match": (lambda f, m: _set("counts.ops", m["counts"]["ops"] + 1)(f, m),
                                            "operation records"),
    "sha mismatch": (_sha_mismatch, "sha256"),
    "wrong JSON types in the manifest": (_set("members", {"run.json": 1}), "members must be a list"),
    "wrong version type in the manifest": (_set("version", "1"), "version must be a whole number"),
    "wrong JSON types in run.json": (_set("run.json:users", [1, 2]), "run.json: wrong types"),
    "run.json not a record": (_with(lambda f, m: f.__setitem__("run.json", b"[1, 2]")), "not a record"),
    "a bad run id": (lambda f, m: _set("run.json:run_id", "../../evil")(f, {**m, "run_id": "../../evil"}),
                     "manifest.json: run id '../../evil': a name, not a path"),
    "a missing member": (lambda f, m: make({k: v for k, v in f.items() if k != "steps.json"}, m, rehash=False),
                         "not in the bundle"),
    "an extra unknown member": (lambda f, m: make(f, m, extra=[("evil.sh", b"rm -rf ~")]), "unknown member"),
    # resources.jsonl is a member a run may or may not have (a short run takes no sample): unlisted here
    "a member the manifest does not list": (lambda f, m: make({**f, "resources.jsonl": b"{}\n"}, m,
                                                              listed=set(f) - {"resources.jsonl"}),
                                            "not in its manifest"),
    "duplicate member names": (lambda f, m: make(f, m, extra=[("run.json", f["run.json"])]), "twice"),
    "a zip bomb": (_zip_bomb, "zip bomb"),
    "a manifest too big": (lambda f, m: make(f, {**m, "padding": "x" * (2 << 20)}), "manifest.json is"),
    "a run still going": (_set("run.json:status", "running"), "still going"),
    "a future bundle format": (_set("version", 99), "newer Tickbench"),
    "bundle version 0": (_set("version", 0), "version 0 is no bundle version"),
    "bundle version -1": (_set("version", -1), "version -1 is no bundle version"),
    "not a Tickbench bundle": (_set("kind", "something-else"), "not a Tickbench bundle"),
    "a parquet file that is not parquet": (_with(lambda f, m: f.__setitem__("ops.parquet", b"not parquet" * 100)),
                                           "not a Parquet file"),
    "ops parquet with the wrong columns": (_with(lambda f, m: f.__setitem__("ops.parquet", _parquet(
        pa.table({"a": [1, 2, 3]})))), "column 'a'"),
    "ops of another run": (_other_run_records, "another run"),
    "a negative latency": (_record_says("total_s", -0.0173), "total_s -0.0173: a time is a finite number"),
    "a NaN latency": (_record_says("total_s", float("nan")), "total_s nan"),
    "an infinite phase": (_record_says("decode_s", float("inf")), "decode_s inf"),
    "negative rows": (_record_says("rows", -8_639_881), "rows -8639881: an amount is not negative"),
    "an infinite start": (_record_says("t_start", float("-inf")), "t_start -inf"),
    "a step no table names": (_record_says("step", 99), "step 99: every record is of a step"),
    "a worker no table names": (_record_says("worker", 4242), "worker 4242: every record is of a worker"),
    "compressed by another method": (lambda f, m: make(f, m, method=zipfile.ZIP_BZIP2), "method 12"),
    "a header that lies about its size": (_lying_header, "run.json is damaged"),
    "a manifest nested too deep": (lambda f, m: make(f, b"[" * 200_000 + b"]" * 200_000), "manifest.json is not JSON"),
    "a Parquet bomb of 20 million records": (parquet_bomb(20_000_000), "ops.parquet: 20,000,000 records"),
    "records only the zip's deflate makes small": (deflated_records(50_000), "bytes: under 4 bytes a record"),
    "an error message of 100 KB": (_record_says("error", "x" * 100_000), f"record 1: its error is 100,000 bytes; at most {TEXT_LIMIT:,}"),
    "step facts nested 100,000 deep": (_steps_field("facts", "[" * 100_000 + "]" * 100_000), "facts is not JSON"),
    "step facts nested 100 deep": (_steps_field("facts", _nested(100)), "facts is nested more than 64 deep"),
    "a list where step facts belong": (_steps_field("facts", "[1, 2]"), "facts holds a list, not a record"),
    "a list where step params belong": (_steps_field("params", '["x"]'), "params holds a list, not a record"),
    "an environment nested 100 deep": (_run_field("environment", _nested(100)), "nested more than 64 deep"),
    "a list where the scenario belongs": (_run_field("scenario", "[1]"), "run.json: scenario holds a list, not a record"),
    **{name: (renamed(run_id), named) for name, (run_id, named) in NAMES.items()},
}

# opened, and every string shown as the text it is (never markup, never a terminal escape)
MARKUP = {
    "name": '<img src="x" width="20000" height="20000"> [bold]big[/bold]',
    "host": '<a href="http://127.0.0.1:1/">host</a> [link=file:etc]h[/link]',
    "message": "\x1b]8;;file:///etc/passwd\x07click\x1b]8;;\x07 [red]not red[/red] <b>not bold</b>",
    "target": "duckdb[/]",
    "dataset": "install tickbench[clickhouse]",
}


def _markup_everywhere(files, manifest):
    _edit_json(files, "run.json", lambda run: run.update(MARKUP))
    _edit_json(files, "workers.json", lambda rows: [row.update(error=MARKUP["message"]) for row in rows])
    return make(files, manifest)


SHOWN = {
    "markup in every text field": _markup_everywhere,
    "a run id of markup [red]a1": renamed("[red]a1"),
    "a failed operation's error of markup": _record_says("error", "[red]boom[/red] <img src=x width=9999>"),
}


def write_corpus(good: Path, out: Path) -> list[Path]:
    """Every case of ``REFUSED`` and ``SHOWN`` built from the bundle ``good``, one file each."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for group, cases in (("refused", REFUSED), ("shown", SHOWN)):
        for name, case in cases.items():
            build = case[0] if isinstance(case, tuple) else case
            files, manifest = read_bundle(good.read_bytes())
            path = out / f"{group}-{re.sub(r'[^a-z0-9]+', '-', name.lower()).strip('-')}.tbrun"
            path.write_bytes(build(files, manifest))
            written.append(path)
    return written


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    for written in write_corpus(Path(sys.argv[1]), Path(sys.argv[2])):
        print(written)
