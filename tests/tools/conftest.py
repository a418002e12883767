"""A real HTTP server on 127.0.0.1 for the http_get tests (no autouse fixtures here)."""

from __future__ import annotations

import gzip
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

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
        elif path == "/latin1":
            self._send(200, "café".encode("latin-1"), "text/plain; charset=iso-8859-1")
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
