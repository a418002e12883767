"""A tiny Ollama server on 127.0.0.1 answering /api/show, /api/chat and /api/tags.

It answers with the JSON documented in Ollama's API reference, streams chat replies as
NDJSON the way the real server does, refuses tool requests for models without the
``tools`` capability with the real server's HTTP 400, and records every request.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class FakeOllama:
    """The server's models (name -> capabilities), scripted chat replies and request log."""

    models: dict[str, list[str]]
    replies: list[str | dict[str, Any]] = field(default_factory=list)
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    url: str = ""

    def requests_to(self, path: str) -> list[dict[str, Any]]:
        return [body for request_path, body in self.requests if request_path == path]


def _handler_for(fake: FakeOllama) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            fake.requests.append((self.path, {}))
            if self.path == "/api/tags":
                models = [
                    {"name": name, "model": name, "size": 1, "digest": "0" * 64}
                    for name in fake.models
                ]
                self._send_json(200, {"models": models})
            else:
                self._send_json(404, {"error": "not found"})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            fake.requests.append((self.path, body))
            name = body.get("model", "")
            if name not in fake.models:
                self._send_json(404, {"error": f"model '{name}' not found"})
            elif self.path == "/api/show":
                self._send_json(200, self._show(name))
            elif self.path == "/api/chat":
                self._chat(name, body)
            else:
                self._send_json(404, {"error": "not found"})

        def _show(self, name: str) -> dict[str, Any]:
            return {
                "modelfile": f"FROM {name}",
                "parameters": "",
                "template": "{{ .Prompt }}",
                "details": {"format": "gguf", "family": "qwen2", "parameter_size": "1.5B"},
                "model_info": {"general.architecture": "qwen2"},
                "capabilities": fake.models[name],
            }

        def _chat(self, name: str, body: dict[str, Any]) -> None:
            if body.get("tools") and "tools" not in fake.models[name]:
                error = f"registry.ollama.ai/library/{name} does not support tools"
                self._send_json(400, {"error": error})
                return
            if not fake.replies:
                self._send_json(500, {"error": "the fake Ollama server has no reply left"})
                return
            reply = fake.replies.pop(0)
            message = {"role": "assistant", "content": reply} if isinstance(reply, str) else reply
            lines = [
                {
                    "model": name,
                    "created_at": "2026-01-01T00:00:00Z",
                    "message": message,
                    "done": False,
                },
                {
                    "model": name,
                    "created_at": "2026-01-01T00:00:00Z",
                    "message": {"role": "assistant", "content": ""},
                    "done": True,
                    "done_reason": "stop",
                    "total_duration": 1000,
                    "prompt_eval_count": 10,
                    "eval_count": 5,
                },
            ]
            payload = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _send_json(self, status: int, data: dict[str, Any]) -> None:
            payload = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


@contextmanager
def running_fake_ollama(
    models: dict[str, list[str]], replies: list[str | dict[str, Any]] | None = None
) -> Iterator[FakeOllama]:
    fake = FakeOllama(models=models, replies=list(replies or []))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(fake))
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
