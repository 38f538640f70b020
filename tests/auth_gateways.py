"""Password gates in front of real test servers, for the two engines whose authentication cannot run
here: Druid's ``druid-basic-security`` extension is not served by the package registry, and the
MongoDB stand-in (mongo-java-server) has no authentication at all.

- ``BasicAuthGateway``: an HTTP reverse proxy asking HTTP Basic credentials, as an authenticating
  gateway in front of Druid does (401 when they are wrong), forwarding everything else unchanged.
- ``ScramGateway``: MongoDB's wire protocol with SCRAM-SHA-1 / SCRAM-SHA-256 (RFC 5802/7677, as
  MongoDB does it) done here, refusing other commands before login with code 13 and a wrong
  password with code 18 ``AuthenticationFailed``; after login every message is relayed unchanged.

Both listen on a free 127.0.0.1 port in a thread and stop with ``close()``. They test Tickbench's
clients against the real protocols' refusals; they time nothing."""
from __future__ import annotations

import base64
import hashlib
import hmac
import http.server
import os
import socket
import struct
import threading
import urllib.error
import urllib.request

import bson

LOOPBACK = "127.0.0.1"


class BasicAuthGateway:
    def __init__(self, upstream_port: int, user: str, password: str):
        expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        upstream = f"http://{LOOPBACK}:{upstream_port}"

        class Handler(http.server.BaseHTTPRequestHandler):
            def _relay(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Authorization") != expected:
                    self._answer(401, b"<html><body>Unauthorized</body></html>", "text/html")
                    return
                request = urllib.request.Request(upstream + self.path, data=body or None, method=self.command)
                for name in ("Content-Type", "Accept"):
                    if self.headers.get(name):
                        request.add_header(name, self.headers[name])
                try:
                    with urllib.request.urlopen(request, timeout=600) as reply:
                        self._answer(reply.status, reply.read(), reply.headers.get("Content-Type"))
                except urllib.error.HTTPError as exc:
                    self._answer(exc.code, exc.read(), exc.headers.get("Content-Type"))

            def _answer(self, status: int, body: bytes, content_type: str | None):
                self.send_response(status)
                if content_type:
                    self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_DELETE = _relay

            def log_message(self, *args):
                return                        # quiet: the tests read their own assertions, not a log

        self.server = http.server.ThreadingHTTPServer((LOOPBACK, 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


# --- MongoDB ------------------------------------------------------------------------------------------
OP_REPLY, OP_QUERY, OP_MSG = 1, 2004, 2013
OPEN_COMMANDS = {"hello", "ismaster", "buildinfo", "ping", "saslstart", "saslcontinue", "endsessions"}


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return bytes(data)


def _read_message(sock: socket.socket) -> bytes:
    head = _read_exactly(sock, 4)
    return head + _read_exactly(sock, struct.unpack("<i", head)[0] - 4)


def _op_msg_command(message: bytes) -> dict | None:
    """The body document of an OP_MSG (its kind-0 section); None for other opcodes."""
    if struct.unpack("<i", message[12:16])[0] != OP_MSG:
        return None
    pos = 20
    while pos < len(message):
        kind = message[pos]
        if kind == 0:
            size = struct.unpack("<i", message[pos + 1:pos + 5])[0]
            return bson.decode(message[pos + 1:pos + 1 + size])
        size = struct.unpack("<i", message[pos + 1:pos + 5])[0]
        pos += 1 + size
    return None


def _op_msg_reply(request: bytes, document: dict) -> bytes:
    request_id = struct.unpack("<i", request[4:8])[0]
    body = struct.pack("<I", 0) + b"\x00" + bson.encode(document)
    return struct.pack("<iiii", 16 + len(body), 0, request_id, OP_MSG) + body


class _Scram:
    """The server's half of one SCRAM conversation."""
    ITERATIONS = 4096

    def __init__(self, mechanism: str, user: str, password: str):
        self.hash = hashlib.sha256 if mechanism == "SCRAM-SHA-256" else hashlib.sha1
        # MongoDB's SCRAM-SHA-1 salts the legacy digest, SCRAM-SHA-256 the password itself
        self.password = (password if mechanism == "SCRAM-SHA-256" else
                         hashlib.md5(f"{user}:mongo:{password}".encode()).hexdigest()).encode()
        self.salt = os.urandom(16)

    def first(self, client_first: bytes) -> bytes:
        self.client_first_bare = client_first.split(b",", 2)[2]
        fields = dict(f.split(b"=", 1) for f in self.client_first_bare.split(b","))
        self.user = fields[b"n"].decode()
        self.nonce = fields[b"r"] + base64.b64encode(os.urandom(18))
        self.server_first = b"r=" + self.nonce + b",s=" + base64.b64encode(self.salt) + b",i=%d" % self.ITERATIONS
        return self.server_first

    def final(self, client_final: bytes) -> bytes | None:
        """The server's signature, or None when the proof does not match (a wrong password)."""
        without_proof, proof = client_final.rsplit(b",p=", 1)
        salted = hashlib.pbkdf2_hmac(self.hash().name, self.password, self.salt, self.ITERATIONS)
        client_key = hmac.digest(salted, b"Client Key", self.hash)
        stored_key = self.hash(client_key).digest()
        auth_message = self.client_first_bare + b"," + self.server_first + b"," + without_proof
        signature = hmac.digest(stored_key, auth_message, self.hash)
        claimed_key = bytes(a ^ b for a, b in zip(base64.b64decode(proof), signature))
        if not hmac.compare_digest(self.hash(claimed_key).digest(), stored_key):
            return None
        server_key = hmac.digest(salted, b"Server Key", self.hash)
        return b"v=" + base64.b64encode(hmac.digest(server_key, auth_message, self.hash))


class ScramGateway:
    def __init__(self, upstream_port: int, user: str, password: str):
        self.upstream_port, self.user, self.password = upstream_port, user, password
        self.listener = socket.create_server((LOOPBACK, 0))
        self.port = self.listener.getsockname()[1]
        self.failed_logins = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self):
        self.listener.close()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket):
        upstream = socket.create_connection((LOOPBACK, self.upstream_port))
        authenticated, scram = False, None
        try:
            while True:
                message = _read_message(client)
                command = _op_msg_command(message)
                name = next(iter(command)).lower() if command else None
                if name == "saslstart":
                    scram = _Scram(command["mechanism"], self.user, self.password)
                    reply = {"conversationId": 1, "done": False, "ok": 1.0,
                             "payload": scram.first(bytes(command["payload"]))}
                elif name == "saslcontinue" and scram is not None:
                    signature = scram.final(bytes(command["payload"])) if scram.user == self.user else None
                    if signature is None:
                        self.failed_logins += 1
                        reply = {"ok": 0.0, "errmsg": "Authentication failed.", "code": 18,
                                 "codeName": "AuthenticationFailed"}
                    else:
                        authenticated = True
                        reply = {"conversationId": 1, "done": True, "ok": 1.0, "payload": signature}
                elif name is not None and not authenticated and name not in OPEN_COMMANDS:
                    reply = {"ok": 0.0, "errmsg": f"command {next(iter(command))} requires authentication",
                             "code": 13, "codeName": "Unauthorized"}
                else:
                    upstream.sendall(message)
                    client.sendall(_read_message(upstream))
                    continue
                client.sendall(_op_msg_reply(message, reply))
        except (ConnectionError, OSError):
            pass                    # either side hung up: the conversation is over
        finally:
            client.close()
            upstream.close()
