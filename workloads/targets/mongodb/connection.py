"""The connection to a MongoDB server: pymongo's client (imported only when a connection is made),
its errors as one line a user can act on, and what the server is and can do: MongoDB or the
wire-protocol stand-in (``server_label``, carried by every operation's ``extra["server"]``),
whether it answers ``explain`` (probes) and whether it honours aggregate's cursor ``batchSize: 0``
(pymongoarrow's raw batches). Every worker has its own client."""
from __future__ import annotations

import time
from contextlib import suppress
from typing import Any

from workloads.targets.base import Layout, NotSupported, TargetError
from workloads.targets.common.lazy import import_client
from workloads.targets.mongodb.dialect import MANIFEST, STAND_IN, lacking


def _now() -> float:
    return time.perf_counter()


def _first_line(text: Any) -> str:
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""


def _pymongo():
    return import_client("mongodb", "pymongo")


def _arrow_api():
    """pymongoarrow's API (the ``mongodb`` extra), imported on the first read."""
    return import_client("mongodb", "pymongoarrow.api")


class MongoDBConnection:
    """The client, its errors and what the server can do (a mixin of ``MongoDBTarget``)."""

    def error(self, exc: BaseException) -> TargetError:
        """A pymongo error as one line a user can act on."""
        text = str(exc)
        low = text.lower()
        code = getattr(exc, "code", None)
        if code == 18 or "authentication failed" in low or "auth failed" in low:
            return TargetError(f"MongoDB at {self.address}: authentication failed for user {self.user!r} "
                               "(wrong password, or no such user)")
        if "saslstart" in low or "no such command: 'authenticate'" in low:
            return TargetError(f"MongoDB at {self.address}: authentication failed for user {self.user!r}: the "
                               "server does not support authentication (the wire-protocol stand-in?)")
        if "refused" in low:
            return TargetError(f"MongoDB at {self.address}: connection refused (no server listening there)")
        if "timed out" in low or "timeout" in low:
            return TargetError(f"MongoDB at {self.address}: no answer within {self.timeout_ms} ms")
        if "name or service not known" in low or "nodename nor servname" in low or "getaddrinfo" in low:
            return TargetError(f"MongoDB at {self.address}: cannot resolve host {self.host!r}")
        if "wire version" in low:
            return TargetError(f"MongoDB at {self.address}: this pymongo cannot talk to the server: "
                               f"{_first_line(text)}")
        missing = lacking(text)
        if missing:        # the server's limit, in its own words: never the project's
            return NotSupported(f"this server does not support {missing}")
        return TargetError(f"MongoDB at {self.address} answered: {_first_line(text.split(', full error:')[0])}")

    def _call(self, fn, *args, **kwargs):
        pymongo = _pymongo()
        try:
            return fn(*args, **kwargs)
        except TargetError:
            raise
        except pymongo.errors.PyMongoError as exc:
            raise self.error(exc) from None

    def client(self):
        if self._client is None:
            pymongo = _pymongo()
            options: dict[str, Any] = {"serverSelectionTimeoutMS": self.timeout_ms,
                                       "connectTimeoutMS": self.timeout_ms, "tz_aware": False,
                                       "appname": "tickbench"}
            if self.user:
                options.update(username=self.user, password=self.password)
                if self.auth_source:
                    options["authSource"] = self.auth_source
            client = pymongo.MongoClient(self.host, self.port, **options)
            try:
                self._build = self._call(client.admin.command, "buildInfo")
                # authentication happens on the first command of a database (buildInfo needs none)
                self._call(client[self.database].command, "ping")
            except BaseException:
                client.close()
                raise
            self._client = client
        return self._client

    def db(self):
        return self.client()[self.database]

    @property
    def stand_in(self) -> bool:
        self.client()
        return "gitVersion" not in (self._build or {})

    @property
    def server_label(self) -> str:
        self.client()
        return STAND_IN if self.stand_in else f"MongoDB {self._build.get('version', '?')}"

    def _extra(self, **more) -> dict[str, Any]:
        return {"server": self.server_label, **more}


    # --- worker side ---------------------------------------------------------------------------
    def open(self, layout: Layout, worker: int = 0) -> None:
        self._dataset_info(layout)
        self.client()
        if self._explain is None:
            try:
                self.db().command("explain", {"count": MANIFEST}, verbosity="executionStats")
                self._explain = True
            except Exception:
                self._explain = False
        if self._raw_batches is None:
            self._raw_batches = self._honours_batch_size_zero(self.table(layout))
        self.probed_ops = frozenset({"read_day", "read_slice"}) if self._explain else frozenset()

    def _honours_batch_size_zero(self, collection: str) -> bool:
        """Asked once, untimed: pymongoarrow's ``aggregate_arrow_all`` reads raw batches, which
        pymongo requests as an ``aggregate`` whose cursor has ``batchSize: 0`` and whose first
        batch must come back empty. A server that answers documents in it (the stand-in) cannot
        serve that call: its pipelines go through a cursor of undecoded documents instead."""
        reply = self._call(self.db().command, "aggregate", collection,
                           pipeline=[{"$limit": 1}, {"$project": {"_id": 1}}], cursor={"batchSize": 0})
        cursor = reply.get("cursor") or {}
        if cursor.get("id"):
            with suppress(Exception):  # a cursor left open times out on the server
                self.db().command("killCursors", collection, cursors=[cursor["id"]])
        return not cursor.get("firstBatch")

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
