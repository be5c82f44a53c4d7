"""Not a test: a claude.ai login's usage reading served on loopback (issue 52.1).

Claude Code answers its ``get_usage`` control request with windows only on a claude.ai login whose
scopes include ``user:profile``, and reads them from ``GET https://api.anthropic.com/api/oauth/usage``
(a fixed host ``ANTHROPIC_BASE_URL`` does not move), only while
``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`` is unset. This module lets a test serve that reading
without leaving the machine:

* :func:`make_ca` writes a throwaway certificate authority and a leaf certificate for
  ``api.anthropic.com`` (``cryptography``), the CA for ``NODE_EXTRA_CA_CERTS``;
* :class:`UsageProxy` is an ``HTTPS_PROXY`` on 127.0.0.1: a ``CONNECT api.anthropic.com:443`` is
  answered by a TLS endpoint with that leaf, which serves the reading at ``/api/oauth/usage`` and
  404 for anything else; any other host is refused (403) and nothing is relayed anywhere. Every
  connection has a deadline, and :meth:`UsageProxy.stop` ends them all;
* :func:`write_login` writes a fake claude.ai login (``.credentials.json`` in the run's
  ``CLAUDE_CONFIG_DIR``) with made-up tokens.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import socket
import ssl
import threading
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

HOST = "api.anthropic.com"
#: Every socket's deadline (seconds): a stuck client never holds a thread.
DEADLINE = 20.0


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def make_ca(folder: Path) -> tuple[Path, Path, Path]:
    """A throwaway CA and a leaf for :data:`HOST` in ``folder``: (ca.pem, leaf.pem, leaf.key)."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("lifecycle test CA"))
        .issuer_name(_name("lifecycle test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(_name(HOST))
        .issuer_name(ca.subject)
        .public_key(leaf_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(HOST)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    folder.mkdir(parents=True, exist_ok=True)
    paths = folder / "ca.pem", folder / "leaf.pem", folder / "leaf.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        leaf_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return paths


def write_login(config_dir: Path, scopes: tuple[str, ...] = ("user:inference", "user:profile")) -> None:
    """A fake claude.ai login in ``config_dir`` (made-up tokens, valid for a day)."""
    expires = int((datetime.datetime.now(datetime.UTC).timestamp() + 86400) * 1000)
    login = {
        "claudeAiOauth": {
            "accessToken": "sk-ant-oat01-fake-access-token-for-tests",
            "refreshToken": "sk-ant-ort01-fake-refresh-token-for-tests",
            "expiresAt": expires,
            "scopes": list(scopes),
            "subscriptionType": "max",
        }
    }
    path = config_dir / ".credentials.json"
    path.write_text(json.dumps(login))
    path.chmod(0o600)


class UsageProxy:
    """``HTTPS_PROXY`` on 127.0.0.1 serving ``reading`` as ``GET /api/oauth/usage`` of :data:`HOST`
    (see the module; ``reading`` None: 503). ``requests``: every request line served,
    ``refused``: every other CONNECT."""

    def __init__(self, folder: Path, reading: dict[str, Any] | None) -> None:
        self.ca, leaf, key = make_ca(folder)
        self.reading = reading
        self.requests: list[str] = []
        self.refused: list[str] = []
        self._tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._tls.load_cert_chain(leaf, key)
        self._server = socket.create_server(("127.0.0.1", 0))
        self._server.settimeout(0.2)
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}"

    def start(self) -> UsageProxy:
        thread = threading.Thread(target=self._accept, daemon=True)
        thread.start()
        self._threads.append(thread)
        return self

    def stop(self) -> None:
        self._stopping.set()
        with self._lock:
            for s in self._open:
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked reading it
                with contextlib.suppress(OSError):
                    s.close()
        for thread in self._threads:
            thread.join(DEADLINE)
        self._server.close()

    def __enter__(self) -> UsageProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                conn, _ = self._server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(DEADLINE)
            with self._lock:
                self._open.append(conn)
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            thread.start()
            self._threads.append(thread)

    @staticmethod
    def _head(conn: socket.socket | ssl.SSLSocket) -> bytes:
        data = b""
        while b"\r\n\r\n" not in data and len(data) < 65536:
            chunk = conn.recv(4096)
            if not chunk:
                break
            data += chunk
        return data

    def _serve(self, conn: socket.socket) -> None:
        with contextlib.suppress(OSError, ssl.SSLError), conn:
            head = self._head(conn)
            target = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
            if len(target) < 2 or target[0] != "CONNECT" or target[1] != f"{HOST}:443":
                self.refused.append(target[1] if len(target) > 1 else "?")
                conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            with self._tls.wrap_socket(conn, server_side=True) as tls:
                while not self._stopping.is_set():
                    request = self._head(tls)
                    if not request:
                        return
                    line = request.split(b"\r\n", 1)[0].decode("latin-1")
                    self.requests.append(line)
                    method, path = [*line.split(" "), "", ""][:2]
                    if method == "GET" and path.split("?")[0] == "/api/oauth/usage" and self.reading is None:
                        status, body = "503 Service Unavailable", b'{"type":"error","error":{"type":"api_error"}}'
                    elif method == "GET" and path.split("?")[0] == "/api/oauth/usage":
                        status, body = "200 OK", json.dumps(self.reading).encode()
                    else:
                        status, body = "404 Not Found", b'{"type":"error","error":{"type":"not_found_error"}}'
                    tls.sendall(
                        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
                        f"Content-Length: {len(body)}\r\n\r\n".encode()
                        + body
                    )
