"""A stand-in for a ClickHouse server's HTTP interface, for tests: the real ClickHouse engine
(chDB, in this process) behind a small Python HTTP front.

What it implements is what clickhouse-connect uses: ``GET /ping`` and ``GET /``; queries by GET or
POST with ``query`` in the URL, the body, or both (concatenated, as ClickHouse does) or as
multipart form fields; ``param_<name>`` query parameters (passed to chDB as they come: escaped
text, ClickHouse's own form); ``database``; ``default_format`` and a query's own ``FORMAT``
clause (any format chDB writes: Native, Arrow, ArrowStream, TabSeparated, JSON...); request
bodies compressed with lz4 / zstd / gzip / deflate (``Content-Encoding``); inserts with data
(``INSERT INTO t [(cols)] FORMAT F`` + body, also ``INSERT ... SELECT ... FROM input('structure')
FORMAT F`` + body): the body goes to a temp file that chDB reads with ``file()``; HTTP basic auth
(or ``X-ClickHouse-User``/``X-ClickHouse-Key``, or ``user``/``password`` in the URL), a wrong one
answered as ClickHouse does (code 516, AUTHENTICATION_FAILED); errors as ``X-ClickHouse-Exception-
Code`` + ``Code: N. DB::Exception: ...``; ``X-ClickHouse-Summary`` (with ``elapsed_ns``: chDB's
own elapsed time), ``-Query-Id``, ``-Format``, ``-Timezone``.

A server time zone, as a ClickHouse server's ``<timezone>`` sets one: ``serve(..., timezone=Z)``
(``--timezone``) runs every query with ``session_timezone`` Z unless its request's URL sets
``session_timezone`` itself (applied to every statement, as the server applies it), so a DateTime64
without a zone prints and truncates in Z, and a zone-less literal is parsed in Z; ``timezone()`` and
each reply's ``X-ClickHouse-Timezone`` name the zone the query ran in. Without the option it is the
machine's zone, as chDB's own. The rest is the engine's own: e.g. a table's zone-less column made
in Z keeps Z for its Arrow type and for ``toDate``/``toHour``/``toString`` in a session on UTC, where
``date_trunc`` and ``toStartOfMinute`` follow the session. ``serverTimezone()`` still answers the
machine's zone.

A known pace, for tests of what a probe books where: ``GET /_pace?think_s=T&send_bps=R`` makes
every later query think T seconds more (slept inside it, and counted in its ``elapsed_ns`` as a
server counts its own work) and send its reply at R bytes a second; ``/_pace`` alone resets.

Limits, stated: replies are never compressed (a server may ignore Accept-Encoding); settings in
the URL are applied to SELECTs for a few output settings only (and ``session_timezone`` to every
query), the rest ignored; queries run one at a time (one chDB session behind a lock), so
concurrency figures against it say nothing about a ClickHouse server. It names itself in ``X-ClickHouse-Server-Display-Name``: its timings are the
engine's behind a test front, never a server's.
"""
from __future__ import annotations

import base64
import email.parser
import email.policy
import json
import os
import re
import tempfile
import threading
import time
import uuid
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

# URL parameters that are not settings
_TRANSPORT = {"query", "database", "user", "password", "default_format", "query_id", "session_id",
              "session_timeout", "session_check", "compress", "decompress", "buffer_size", "wait_end_of_query",
              "client_protocol_version", "quota_key", "role", "enable_http_compression",
              "send_progress_in_http_headers", "http_headers_progress_interval_ms",
              "cancel_http_readonly_queries_on_client_close"}
# Settings applied (to SELECTs, as a SETTINGS clause): those that change what a reply holds
_APPLIED = re.compile(r"^(output_format_\w+|date_time_output_format|max_threads|max_block_size|join_use_nulls)$")
_INSERT = re.compile(r"^\s*INSERT\b.*?\bFORMAT\s+([A-Za-z0-9_]+)[ \t]*\r?\n?", re.IGNORECASE | re.DOTALL)
_INSERT_TABLE = re.compile(r"^\s*INSERT\s+INTO\s+(?:TABLE\s+)?((?:`[^`]+`|[\w.])+)\s*(?:\(([^)]*)\))?",
                           re.IGNORECASE)
_INPUT = re.compile(r"\binput\s*\(\s*('(?:[^'\\]|\\.)*')\s*\)", re.IGNORECASE)
_TRAILING_FORMAT = re.compile(r"\bFORMAT\s+([A-Za-z0-9_]+)\s*;?\s*$", re.IGNORECASE)
_ROWS_OUT = ("SELECT", "WITH", "SHOW", "DESCRIBE", "DESC", "EXISTS", "EXPLAIN", "(")
_STATUS = {60: 404, 81: 404, 62: 400, 47: 400, 516: 403, 192: 403}


class ClickHouseError(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


class Engine:
    """One chDB session behind a lock: the engine every request runs on."""

    def __init__(self, data_dir: str, users: dict[str, str], display_name: str = "", timezone: str = ""):
        import chdb
        from chdb import session

        self.session = session.Session(data_dir)
        self.lock = threading.Lock()
        self.users = users
        self.version = self._scalar("SELECT version()")
        self.zone_set = ""                  # the session_timezone now SET on the chDB session ("": none)
        self.server_zone = timezone         # the server's <timezone> ("": the machine's)
        if timezone:
            self._use_zone(timezone)        # a zone ClickHouse does not know stops the start here
        self.timezone = self._scalar("SELECT timezone()")
        self.display_name = display_name or (f"tickbench-chserver (test stand-in: ClickHouse engine "
                                             f"{self.version} via chDB {chdb.__version__} behind a Python HTTP front)")
        # beside the data, not in /tmp: the server is stopped by a signal and never cleans up
        self.uploads = os.path.abspath(data_dir).rstrip(os.sep) + "-uploads"
        os.makedirs(self.uploads, exist_ok=True)
        self.database = "default"
        self.think_s = 0.0          # the known pace (module doc), 0: none
        self.send_bps = 0.0

    def _scalar(self, sql: str) -> str:
        return self.session.query(sql, "TabSeparated").bytes().decode().strip()

    def close(self) -> None:
        self.session.close()

    def zone_of(self, session_timezone: str | None) -> str:
        """The zone a query runs in: its own ``session_timezone`` setting, else the server's."""
        return session_timezone or self.timezone

    def _use_zone(self, zone: str) -> None:
        """The chDB session's ``session_timezone`` set to ``zone`` ("": the machine's) for the next query."""
        if zone != self.zone_set:
            self._query("SET session_timezone = '" + zone.replace("\\", "\\\\").replace("'", "\\'") + "'",
                        "TabSeparated", {})
            self.zone_set = zone

    def run(self, sql: str, fmt: str, params: dict[str, str], database: str | None, data: bytes | None,
            data_format: str, session_timezone: str = "") -> tuple[bytes, dict[str, str], str | None]:
        """Execute ``sql`` (with ``data`` for an insert) in ``session_timezone``, else the server's zone:
        (reply bytes, summary, output format or None)."""
        with self.lock:
            self._use_zone(session_timezone or self.server_zone)
            if database and database != self.database:
                self._query(f"USE `{database}`", "TabSeparated", {})
                self.database = database
            upload = None
            try:
                if data is not None:
                    sql, upload = self._insert_from_file(sql, data, data_format)
                keyword = sql.lstrip().split(None, 1)[0].upper() if sql.strip() else ""
                rows_out = keyword.startswith(_ROWS_OUT)
                result = self._query(sql, fmt, params)
                if self.think_s:
                    time.sleep(self.think_s)
                out_format = None
                if rows_out:
                    trailing = _TRAILING_FORMAT.search(sql)
                    out_format = trailing.group(1) if trailing else fmt
                summary = {"read_rows": str(result.rows_read()), "read_bytes": str(result.bytes_read()),
                           "written_rows": str(result.rows_written()), "written_bytes": str(result.bytes_written()),
                           "total_rows_to_read": str(result.rows_read()), "result_rows": "0", "result_bytes": "0",
                           "elapsed_ns": str(int((result.elapsed() + self.think_s) * 1e9))}
                return result.bytes() if rows_out else b"", summary, out_format
            finally:
                if upload:
                    os.unlink(upload)

    def _query(self, sql: str, fmt: str, params: dict[str, str]):
        try:
            return self.session.query(sql, fmt, params=params) if params else self.session.query(sql, fmt)
        except Exception as exc:  # chDB's message is ClickHouse's: "Code: N. DB::Exception: ..."
            text = str(exc).strip()
            match = re.search(r"Code: (\d+)\.", text)
            raise ClickHouseError(int(match.group(1)) if match else 1001, text) from None

    def _insert_from_file(self, statement: str, data: bytes, fmt: str) -> tuple[str, str]:
        """An INSERT whose rows came as the request's data, as an INSERT that reads them with file()."""
        fd, path = tempfile.mkstemp(dir=self.uploads)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        source = f"'{path}', '{fmt}'"
        if _INPUT.search(statement):
            return _INPUT.sub(lambda m: f"file({source}, {m.group(1)})", statement, count=1), path
        match = _INSERT_TABLE.match(statement)
        if not match:
            raise ClickHouseError(62, f"Code: 62. DB::Exception: Cannot parse INSERT: {statement[:200]}. (SYNTAX_ERROR)")
        table, names = match.group(1), match.group(2)
        described = self._query(f"DESCRIBE TABLE {table}", "JSONEachRow", {}).bytes().decode().splitlines()
        types = {}
        for line in described:
            column = json.loads(line)
            if column.get("default_type") not in ("MATERIALIZED", "ALIAS"):
                types[column["name"]] = column["type"]
        wanted = [n.strip().strip("`") for n in names.split(",")] if names else list(types)
        structure = ", ".join(f"`{n}` {types[n]}" for n in wanted).replace("\\", "\\\\").replace("'", "\\'")
        columns = ", ".join(f"`{n}`" for n in wanted)
        return f"INSERT INTO {table} ({columns}) SELECT * FROM file({source}, '{structure}')", path


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "tickbench-chserver"
    engine: Engine = None  # set by serve()

    def log_message(self, format, *args) -> None:  # noqa: A002 (quiet: tests read stdout)
        pass

    def do_GET(self) -> None:
        self._handle(b"")

    def do_POST(self) -> None:
        self._handle(self._read_body())

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            body = b"".join(parts)
        else:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        encoding = (self.headers.get("Content-Encoding") or "").lower()
        if encoding == "lz4":
            import lz4.frame
            body = lz4.frame.decompress(body)
        elif encoding == "zstd":
            try:
                from backports import zstd
            except ImportError:
                from compression import zstd
            body = zstd.decompress(body)
        elif encoding == "gzip":
            body = zlib.decompress(body, 16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            body = zlib.decompress(body)
        elif encoding == "br":
            import brotli
            body = brotli.decompress(body)
        return body

    def _reply(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        rate = self.engine.send_bps if headers.get("X-ClickHouse-Summary") else 0.0
        if not rate:
            self.wfile.write(body)
            return
        self.wfile.flush()                    # the headers leave now; the body at the known rate
        chunk = max(1, int(rate / 50))
        began = time.monotonic()
        for sent in range(0, len(body), chunk):
            self.wfile.write(body[sent:sent + chunk])
            self.wfile.flush()
            time.sleep(max(0.0, began + (sent + chunk) / rate - time.monotonic()))

    def _common(self, query_id: str, zone: str = "") -> dict[str, str]:
        return {"X-ClickHouse-Server-Display-Name": self.engine.display_name, "X-ClickHouse-Query-Id": query_id,
                "X-ClickHouse-Timezone": zone or self.engine.timezone}

    def _error(self, code: int, message: str, query_id: str, zone: str = "") -> None:
        text = message if message.startswith("Code:") else f"Code: {code}. DB::Exception: {message}"
        body = f"{text} (version {self.engine.version})\n".encode()
        self._reply(_STATUS.get(code, 500), body, {**self._common(query_id, zone),
                                                   "X-ClickHouse-Exception-Code": str(code),
                                                   "Content-Type": "text/plain; charset=UTF-8"})

    def _handle(self, body: bytes) -> None:
        url = urlsplit(self.path)
        params = dict(parse_qsl(url.query, keep_blank_values=True))
        query_id = params.get("query_id") or str(uuid.uuid4())
        if url.path == "/_pace":
            self.engine.think_s = float(params.get("think_s", 0))
            self.engine.send_bps = float(params.get("send_bps", 0))
            self._reply(200, b"Ok.\n", {**self._common(query_id), "Content-Type": "text/plain; charset=UTF-8"})
            return
        if url.path.rstrip("/") == "/ping" or (url.path == "/" and not params.get("query") and not body):
            self._reply(200, b"Ok.\n", {**self._common(query_id), "Content-Type": "text/html; charset=UTF-8"})
            return
        content_type = self.headers.get("Content-Type", "")
        if content_type.startswith("multipart/form-data"):
            message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
                f"Content-Type: {content_type}\r\n\r\n".encode() + body)
            for part in message.iter_parts():
                name = part.get_param("name", header="content-disposition")
                if name and not part.get_filename():
                    params[name] = part.get_payload(decode=True).decode()
            body = b""
        if not self._authorised(params):
            user = self._credentials(params)[0]
            self._error(516, f"Code: 516. DB::Exception: {user}: Authentication failed: password is incorrect, "
                             "or there is no user with such name. (AUTHENTICATION_FAILED)", query_id)
            return
        text = params.get("query", "").encode()
        whole = text + (b"\n" if text and body else b"") + body
        data = data_format = None
        head = whole[:1 << 20].decode("latin-1")
        insert = _INSERT.match(head)
        if insert and len(insert.group(0)) < len(whole):
            sql = whole[:insert.start(1) - len("FORMAT ")].decode()
            sql = re.sub(r"\bFORMAT\s*$", "", sql, flags=re.IGNORECASE).rstrip()
            data, data_format = whole[insert.end():], insert.group(1)
        else:
            sql = whole.decode()
        bound = {k[len("param_"):]: v for k, v in params.items() if k.startswith("param_")}
        settings = {k: v for k, v in params.items()
                    if k not in _TRANSPORT and not k.startswith("param_") and _APPLIED.match(k)}
        fmt = params.get("default_format") or "TabSeparated"
        session_timezone = params.get("session_timezone", "")
        zone = self.engine.zone_of(session_timezone)
        if settings and sql.lstrip().upper().startswith(("SELECT", "WITH")) and " SETTINGS " not in sql.upper():
            clause = " SETTINGS " + ", ".join(f"{k} = {v if v.lstrip('-').isdigit() else repr(v)}"
                                              for k, v in settings.items())
            trailing = _TRAILING_FORMAT.search(sql)
            sql = sql[:trailing.start()] + clause + " " + sql[trailing.start():] if trailing else sql + clause
        try:
            reply, summary, out_format = self.engine.run(sql, fmt, bound, params.get("database"), data,
                                                         data_format or "", session_timezone)
        except ClickHouseError as exc:
            self._error(exc.code, str(exc), query_id, zone)
            return
        headers = {**self._common(query_id, zone), "X-ClickHouse-Summary": json.dumps(summary),
                   "Content-Type": "application/octet-stream" if out_format else "text/plain; charset=UTF-8"}
        if out_format:
            headers["X-ClickHouse-Format"] = out_format
        self._reply(200, reply, headers)

    def _credentials(self, params: dict[str, str]) -> tuple[str, str]:
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Basic "):
            user, _, password = base64.b64decode(auth[6:]).decode().partition(":")
            return user, password
        if self.headers.get("X-ClickHouse-User"):
            return self.headers["X-ClickHouse-User"], self.headers.get("X-ClickHouse-Key", "")
        return params.get("user", "default"), params.get("password", "")

    def _authorised(self, params: dict[str, str]) -> bool:
        user, password = self._credentials(params)
        return user in self.engine.users and self.engine.users[user] == password


def serve(data_dir: str, users: dict[str, str], port: int = 0, host: str = "127.0.0.1",
          timezone: str = "") -> ThreadingHTTPServer:
    """Start serving in a thread; the server's ``server_address`` names its port. ``timezone``: the
    server's zone (module doc), "" the machine's."""
    engine = Engine(data_dir, users, timezone=timezone)
    handler = type("BoundHandler", (Handler,), {"engine": engine})
    httpd = ThreadingHTTPServer((host, port), handler)
    httpd.daemon_threads = True
    httpd.engine = engine
    threading.Thread(target=httpd.serve_forever, name="chserver", daemon=True).start()
    time.sleep(0)
    return httpd
