"""A loopback HTTP server speaking the parts of Ollama's and OpenAI's chat APIs the backends use.

The model name picks the behaviour, so one server covers every case:
``err`` -> HTTP 500 with an error body; ``missing`` -> HTTP 404 (Ollama's "model not found");
``slow`` -> answers after ``SLOW_S`` seconds; ``malformed`` -> HTTP 200 with a body that is not JSON;
``empty`` -> an empty answer; ``thinker`` -> a reasoning block cut off at the token limit (no closing
tag, finish reason ``length``); ``inventor`` -> a reason assignment naming a category that is in no
typology (:data:`INVENTED_ASSIGNMENT`, as a model without a grammar constraint gives); ``grader`` -> an
UMBRELA judgment, grade 2 for every pair (:data:`UMBRELA_GRADE_2`; not in :data:`MODELS`: pass
``models=["grader"]``); anything else -> a well-formed reply echoing the request (prompt, decoding
options and the think setting), with finish reason ``length`` (an answer cut at the token limit) when
the prompt contains one of the strings in ``server.cut_when``, else ``stop``.
A test plants a behaviour of its own with ``server.responders[model] = respond``: ``respond(body)``
gets the request's JSON body and returns the reply text (the model must be in ``server.models``), so a
reply can depend on the prompt, e.g. a judge whose grade changes when a sentence is in it.
``/api/tags`` and ``/v1/models`` list ``server.models`` (default :data:`MODELS`) with the digests in
``server.digests`` (change one to simulate a re-pulled tag); ``/api/show`` reports a model whose name
contains ``embed`` as an embedding model, and ``details.parameter_size`` as in ``server.parameter_sizes``
(``{model: "494.03M"}``, Ollama's text; a model not in it reports none, as an imported GGUF without
the metadata does); ``/v1/models`` adds llama.cpp's ``meta.n_params`` for the models in ``server.n_params``
(``{model: count}``; the others, as vLLM's, carry no size). Every request is logged in ``server.requests`` as
``(path, json_body)``.
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SLOW_S = 3.0
MODELS = ["llama3.2:3b", "qwen3:8b", "err", "slow", "malformed", "missing", "empty", "thinker", "inventor"]
TRUNCATED_REASONING = "<think>Let me think about this step by step. First"
UMBRELA_GRADE_2 = json.dumps({"M": 2, "T": 2, "O": 2})
INVENTED_ASSIGNMENT = json.dumps([{"category": "Lack of context", "justification": "the query says too little"}])


def _echo(body: dict) -> str:
    last = body["messages"][-1]["content"]
    opts = dict(body.get("options") or {k: body.get(k) for k in ("temperature", "seed", "max_tokens")})
    opts["think"] = body.get("think", (body.get("chat_template_kwargs") or {}).get("enable_thinking"))
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
            self._json(200, {"models": [{"name": m, "model": m, "size": 1, "digest": self.server.digests.get(m, "")}
                                        for m in self.server.models]})
        elif self.path == "/v1/models":
            self._json(200, {"object": "list", "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": "x",
                 **({"meta": {"n_params": self.server.n_params[m], "vocab_type": 2}} if m in self.server.n_params else {})}
                for m in self.server.models]})
        else:
            self._json(404, {"error": "not found"})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        self.server.requests.append((self.path, body))
        model = body.get("model", "")
        if self.path == "/api/show":
            if model not in self.server.models:
                return self._json(404, {"error": f"model '{model}' not found"})
            details = {"family": "bert" if "embed" in model else "llama"}
            if model in self.server.parameter_sizes:
                details["parameter_size"] = self.server.parameter_sizes[model]
            return self._json(200, {"details": details, "model_info": {},
                                    "capabilities": ["embedding"] if "embed" in model else ["completion"]})
        if model == "err":
            return self._json(500, {"error": "internal failure in the model runner"})
        if model == "missing":
            return self._json(404, {"error": f"model '{model}' not found"})
        if model == "malformed":
            return self._send(200, b'{"message": {"content": "trunc')
        if model == "slow":
            time.sleep(SLOW_S)
        prompt = body["messages"][-1]["content"]
        content = "<think>hm</think>" + _echo(body)
        finish = "length" if any(s in prompt for s in self.server.cut_when) else "stop"
        if model == "empty":
            content = ""
        elif model == "thinker":
            content, finish = TRUNCATED_REASONING, "length"
        elif model == "inventor":
            content = INVENTED_ASSIGNMENT
        elif model == "grader":
            content = UMBRELA_GRADE_2
        if model in self.server.responders:
            content = self.server.responders[model](body)
        if self.path == "/api/chat":
            return self._json(200, {"model": model, "created_at": "2026-01-01T00:00:00Z",
                                    "message": {"role": "assistant", "content": content},
                                    "done": True, "done_reason": finish})
        if self.path == "/v1/chat/completions":
            return self._json(200, {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": model,
                                    "choices": [{"index": 0, "finish_reason": finish,
                                                 "message": {"role": "assistant", "content": content}}],
                                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
        self._json(404, {"error": f"no route {self.path}"})


class LoopbackLLMServer:
    """``with LoopbackLLMServer() as server: server.url`` (binds 127.0.0.1 on a free port)."""

    def __init__(self, models: list[str] | None = None, parameter_sizes: dict[str, str] | None = None,
                 n_params: dict[str, int] | None = None):
        self._models = list(models if models is not None else MODELS)
        self._parameter_sizes = dict(parameter_sizes or {})
        self._n_params = dict(n_params or {})

    def __enter__(self):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.requests = []
        self.httpd.cut_when = set()
        self.httpd.responders = {}
        self.httpd.models = self._models
        self.httpd.digests = {m: hashlib.sha256(m.encode()).hexdigest() for m in self._models}
        self.httpd.parameter_sizes = self._parameter_sizes
        self.httpd.n_params = self._n_params
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def requests(self) -> list:
        return self.httpd.requests

    @property
    def cut_when(self) -> set:
        """Prompt substrings whose replies are cut at the token limit (finish reason ``length``)."""
        return self.httpd.cut_when

    @property
    def responders(self) -> dict:
        """``{model: respond(body) -> reply text}``: planted replies that depend on the request."""
        return self.httpd.responders

    @property
    def digests(self) -> dict:
        return self.httpd.digests

    @property
    def parameter_sizes(self) -> dict:
        """``{model: Ollama's parameter_size text}`` that ``/api/show`` reports (change it to report another)."""
        return self.httpd.parameter_sizes

    @property
    def n_params(self) -> dict:
        """``{model: parameter count}`` that ``/v1/models`` reports as llama.cpp's ``meta.n_params``."""
        return self.httpd.n_params

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
