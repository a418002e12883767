"""A real HTTP server on 127.0.0.1 for the http_get tests (no autouse fixtures here)."""

from __future__ import annotations

import datetime
import gzip
import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

PNG_BYTES = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
UTF8_TEXT = "é€😀a" * 1000


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out without a delayed-ACK stall

    def log_message(self, format: str, *args: object) -> None:  # quiet test output
        pass

    def _send(self, status: int, body: bytes, content_type: str | None, **headers: str) -> None:
        self.send_response(status)
        if content_type is not None:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def _stream_forever(self, chunk: bytes, pause: float) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            while True:
                self.wfile.write(chunk)
                self.wfile.flush()
                if pause:
                    time.sleep(pause)
        except OSError:  # the client hung up, which is the point
            pass
        self.close_connection = True

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = {key: values[0] for key, values in parse_qs(parts.query).items()}
        path = parts.path
        if path == "/text":
            size = int(query.get("size", "100"))
            self._send(200, b"x" * size, "text/plain; charset=utf-8")
        elif path == "/utf8":
            self._send(200, UTF8_TEXT.encode(), "text/plain; charset=utf-8")
        elif path == "/latin1-long":
            self._send(200, ("é" * 10).encode("latin-1"), "text/plain; charset=iso-8859-1")
        elif path == "/latin1":
            self._send(200, "café".encode("latin-1"), "text/plain; charset=iso-8859-1")
        elif path == "/charset":  # a body under whatever charset the test names
            body = "café ".encode() + rb"\ud800 +2AA- " + b"\xff"
            self._send(200, body, f"text/plain; charset={query['name']}")
        elif path == "/json":
            self._send(200, b'{"ok": true}', "application/json")
        elif path == "/headers":
            body = json.dumps({k.lower(): v for k, v in self.headers.items()}).encode()
            self._send(200, body, "application/json")
        elif path.startswith("/status/"):
            self._send(int(path.rsplit("/", 1)[1]), b"status body", "text/plain")
        elif path.startswith("/chain/"):
            left = int(path.rsplit("/", 1)[1])
            target = "/text?size=5" if left == 0 else f"/chain/{left - 1}"
            self._send(302, b"", "text/plain", Location=target)
        elif path == "/redirect":
            self._send(int(query.get("status", "302")), b"", "text/plain", Location=query["to"])
        elif path == "/bad-redirect":
            self._send(302, b"", "text/plain", Location="http://app.test:port/")
        elif path == "/binary":
            self._send(200, PNG_BYTES, "image/png")
        elif path == "/sniffed-binary":
            self._send(200, b"abc\x00def", None)
        elif path == "/gzip":
            self._send(200, gzip.compress(b"y" * 10_000), "text/plain", Content_Encoding="gzip")
        elif path == "/endless":
            self._stream_forever(b"z" * 65536, 0)
        elif path == "/slow":
            self._stream_forever(b"s", 0.05)
        elif path == "/stall":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "10")
            self.end_headers()
            self.wfile.flush()
            time.sleep(3)
        else:
            self._send(404, b"no such page", "text/plain")


class LocalServer:
    """The loopback server: ``url(path)`` builds a URL on it."""

    def __init__(self, server: ThreadingHTTPServer, host: str) -> None:
        self.server = server
        self.host = host
        self.port = server.server_address[1]

    def url(self, path: str) -> str:
        return f"http://{self.host}:{self.port}{path}"


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # clients hanging up on endless bodies is expected


@pytest.fixture(scope="session")
def local_server() -> Iterator[LocalServer]:
    server = _QuietServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield LocalServer(server, "127.0.0.1")
    server.shutdown()
    server.server_close()


class TlsServer(LocalServer):
    """The same handler over TLS with a certificate for ``cert_host``, signed by a test CA."""

    def __init__(self, server: ThreadingHTTPServer, client_context: ssl.SSLContext) -> None:
        super().__init__(server, "127.0.0.1")
        self.client_context = client_context
        self.server_names: list[str | None] = []


def _certificates(cert_host: str) -> tuple[bytes, bytes, bytes]:
    """A CA certificate, and a leaf certificate and key for ``cert_host`` (all PEM)."""

    now = datetime.datetime.now(datetime.UTC)

    def build(subject: str, key: ec.EllipticCurvePrivateKey) -> x509.CertificateBuilder:
        return (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
        )

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "agent-rules test CA")])
    ca = (
        build("agent-rules test CA", ca_key)
        .issuer_name(ca_name)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        build(cert_host, leaf_key)
        .issuer_name(ca_name)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(cert_host)]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    key_pem = leaf_key.private_bytes(
        pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return ca.public_bytes(pem), leaf.public_bytes(pem), key_pem


@pytest.fixture(scope="session")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsServer]:
    """HTTPS on 127.0.0.1 with a certificate for ``app.test`` only."""
    ca_pem, cert_pem, key_pem = _certificates("app.test")
    folder = tmp_path_factory.mktemp("tls")
    (folder / "cert.pem").write_bytes(cert_pem)
    (folder / "key.pem").write_bytes(key_pem)
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    server = _QuietServer(("127.0.0.1", 0), _Handler)
    server.socket = server_context.wrap_socket(server.socket, server_side=True)
    tls = TlsServer(server, ssl.create_default_context(cadata=ca_pem.decode()))

    def remember_server_name(sock: object, name: str | None, context: object) -> None:
        tls.server_names.append(name)

    server_context.sni_callback = remember_server_name
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield tls
    server.shutdown()
    server.server_close()


class _QuietServer6(_QuietServer):
    address_family = socket.AF_INET6


@pytest.fixture(scope="session")
def local_server_v6() -> Iterator[LocalServer]:
    """The same server on ::1; skipped where the machine has no IPv6 loopback."""
    try:
        server = _QuietServer6(("::1", 0), _Handler)
    except OSError as error:
        pytest.skip(f"no IPv6 loopback here: {error}")
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield LocalServer(server, "[::1]")
    server.shutdown()
    server.server_close()
