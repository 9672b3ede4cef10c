"""A loopback HTTP server speaking the parts of Ollama's and OpenAI's chat APIs the backends use.

The model name picks the behaviour, so one server covers every case:
``err`` -> HTTP 500 with an error body; ``missing`` -> HTTP 404 (Ollama's "model not found");
``slow`` -> answers after ``SLOW_S`` seconds; ``malformed`` -> HTTP 200 with a body that is not JSON;
anything else -> a well-formed reply echoing the request (prompt and decoding options).
Every request is logged in ``server.requests`` as ``(path, json_body)``.
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SLOW_S = 3.0
MODELS = ["llama3.2:3b", "qwen3:8b", "err", "slow", "malformed", "missing"]


def _echo(body: dict) -> str:
    last = body["messages"][-1]["content"]
    opts = body.get("options") or {k: body.get(k) for k in ("temperature", "seed", "max_tokens")}
    return f"echo[{body['model']}] {last} | {json.dumps(opts, sort_keys=True)}"


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep test output clean
        pass

    def _send(self, status: int, payload: bytes, content_type: str = "application/json"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        try:
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
            pass

    def _json(self, status: int, obj) -> None:
        self._send(status, json.dumps(obj).encode())

    def do_GET(self):
        self.server.requests.append((self.path, None))
        if self.path == "/api/tags":
            self._json(200, {"models": [{"name": m, "model": m, "size": 1, "digest": "x"} for m in MODELS]})
        else:
            self._json(404, {"error": "not found"})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        self.server.requests.append((self.path, body))
        model = body.get("model", "")
        if model == "err":
            return self._json(500, {"error": "internal failure in the model runner"})
        if model == "missing":
            return self._json(404, {"error": f"model '{model}' not found"})
        if model == "malformed":
            return self._send(200, b'{"message": {"content": "trunc')
        if model == "slow":
            time.sleep(SLOW_S)
        if self.path == "/api/chat":
            return self._json(200, {"model": model, "created_at": "2026-01-01T00:00:00Z",
                                    "message": {"role": "assistant", "content": "<think>hm</think>" + _echo(body)},
                                    "done": True, "done_reason": "stop"})
        if self.path == "/v1/chat/completions":
            return self._json(200, {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": model,
                                    "choices": [{"index": 0, "finish_reason": "stop",
                                                 "message": {"role": "assistant", "content": _echo(body)}}],
                                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
        self._json(404, {"error": f"no route {self.path}"})


class LoopbackLLMServer:
    """``with LoopbackLLMServer() as server: server.url`` (binds 127.0.0.1 on a free port)."""

    def __enter__(self):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.requests = []
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def requests(self) -> list:
        return self.httpd.requests

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
