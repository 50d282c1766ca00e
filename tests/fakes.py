"""Test fakes, in one place.

:class:`FakeChatServer` is a real HTTP server on 127.0.0.1 (stdlib only) that speaks
enough of the OpenAI Chat Completions API for the real ``openai`` client. Each test
scripts the replies it wants; the server records every request body it received.
"""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass(frozen=True)
class Reply:
    """One scripted reply: a chat completion with ``content``, or an HTTP error, after ``delay_s``."""

    content: str | None = None
    status: int = 200
    delay_s: float = 0.0
    body: str | None = None  # raw body, overrides the chat completion envelope
    prompt_tokens: int = 50
    completion_tokens: int = 20


def completion_body(content: str, model: str = "fake-model", prompt_tokens: int = 50,
                    completion_tokens: int = 20) -> str:
    return json.dumps({
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    })


def tool_calls(*calls: tuple[str, "dict | str"], model: str = "fake-model") -> Reply:
    """A scripted chat completion whose message asks for tool calls: ``(function name, arguments)``,
    the arguments as a dict or as raw (possibly malformed) JSON text."""
    tcs = [{"id": f"call_{i}", "type": "function",
            "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
           for i, (name, args) in enumerate(calls, 1)]
    return Reply(body=json.dumps({"id": "chatcmpl-t", "object": "chat.completion", "created": 0, "model": model,
                                  "choices": [{"index": 0, "finish_reason": "tool_calls",
                                               "message": {"role": "assistant", "content": None, "tool_calls": tcs}}],
                                  "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # a handler still sleeping for a timeout test must not block teardown

    def handle_error(self, request, client_address) -> None:  # client gone after a timeout: fine
        pass


class FakeChatServer:
    """``with FakeChatServer() as srv: srv.script(Reply(...), ...); srv.base_url``."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self._replies: list[Reply] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                with outer._lock:
                    outer.requests.append({"path": self.path, "body": body,
                                           "authorization": self.headers.get("Authorization", "")})
                    reply = outer._replies.pop(0) if outer._replies else Reply(status=500, body='{"error": '
                                                                              '{"message": "script exhausted"}}')
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.body is not None:
                    payload = reply.body
                elif reply.status == 200:
                    payload = completion_body(reply.content or "", prompt_tokens=reply.prompt_tokens,
                                              completion_tokens=reply.completion_tokens)
                else:
                    payload = json.dumps({"error": {"message": f"scripted HTTP {reply.status}", "type": "server"}})
                data = payload.encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *replies: Reply) -> "FakeChatServer":
        with self._lock:
            self._replies.extend(replies)
        return self

    def __enter__(self) -> "FakeChatServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


class FakeScorer:
    """A deterministic stand-in for :class:`rag.rerank.CrossEncoderScorer`: the logit is the
    number of query words found in the passage (minus a length penalty). Records each call."""

    model_id = "fake-scorer"
    path = None

    def __init__(self, max_length: int = 64, nan_for: tuple[str, ...] = ()) -> None:
        self.max_length = max_length
        self.nan_for = nan_for
        self.calls: list[tuple[str, tuple[str, ...]]] = []

    def score(self, query, keys, texts):
        import numpy as np

        self.calls.append((query, tuple(keys)))
        words = set(query.lower().split())
        out = []
        for k, t in zip(keys, texts):
            tw = t.lower().split()
            out.append(float("nan") if k.split("#")[0] in self.nan_for else sum(w in words for w in set(tw)) - 0.001 * len(tw))
        return np.asarray(out, dtype=np.float64), [len(query.split()) + len(t.split()) for t in texts]


# --------------------------------------------------------------------------- batch runs (rag.batch)
@dataclass(frozen=True)
class FakeUsage:
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class FakeTrace:
    timings_ms: dict
    usage: FakeUsage
    attempts: int = 1
    extra: dict | None = None  # merged into the trace's JSON (manifest, validation …)


@dataclass(frozen=True)
class FakeAnswerResult:
    """Shaped like ``rag.pipeline.AnswerResult`` (status, answer, citations, reason, trace, to_json)."""

    status: str
    answer: str
    citations: tuple
    reason: str
    trace: FakeTrace

    def to_json(self) -> dict:
        return {"status": self.status, "answer": self.answer, "citations": list(self.citations), "reason": self.reason,
                "trace": {"timings_ms": dict(self.trace.timings_ms),
                          "usage": {"prompt_tokens": self.trace.usage.prompt_tokens,
                                    "completion_tokens": self.trace.usage.completion_tokens},
                          "attempts": self.trace.attempts, **(self.trace.extra or {})}}


@dataclass(frozen=True)
class FakeBehaviour:
    """How :class:`FakeAnswerer` treats one question (matched by its text)."""

    status: str = "answered"
    delay_s: float = 0.0  # awaited (async) or slept (sync): the "generation" step
    raises: str | None = None  # raise RuntimeError(raises)
    retrieval_ms: float = 1.0
    generation_ms: float = 2.0
    prompt_tokens: int = 100
    completion_tokens: int = 10
    attempts: int = 1
    extra: dict | None = None


class FakeAnswerer:
    """A scripted answerer for rag.batch: records the order in which questions *started*
    (the synchronous, retrieval-like part of ``aanswer``) and how many were in flight at once."""

    def __init__(self, behaviours: dict | None = None, default: FakeBehaviour = FakeBehaviour(),
                 sync_only: bool = False, threaded_retrieval: bool = False) -> None:
        self.threaded_retrieval = threaded_retrieval  # aanswer: retrieval via asyncio.to_thread, like Pipeline
        self.retrieval_order: list[str] = []
        self.retrieval_in_flight = 0
        self.max_retrieval_in_flight = 0
        self.behaviours = dict(behaviours or {})
        self.default = default
        self.started: list[str] = []
        self.finished: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        if sync_only:
            self.aanswer = None  # type: ignore[assignment]

    def _begin(self, question: str) -> FakeBehaviour:
        with self._lock:
            self.started.append(question)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        return self.behaviours.get(question, self.default)

    def _end(self, question: str, b: FakeBehaviour) -> FakeAnswerResult:
        with self._lock:
            self.in_flight -= 1
            self.finished.append(question)
        if b.raises:
            raise RuntimeError(b.raises)
        cites = ({"source_id": "S1", "evidence_id": "doc:1:0"},) if b.status == "answered" else ()
        return FakeAnswerResult(b.status, f"answer to {question}" if b.status == "answered" else "", cites,
                                "validated" if b.status == "answered" else "below_threshold",
                                FakeTrace({"retrieval": b.retrieval_ms, "generation": b.generation_ms},
                                          FakeUsage(b.prompt_tokens, b.completion_tokens), b.attempts, b.extra))

    def answer(self, question: str, history=()) -> FakeAnswerResult:
        b = self._begin(question)
        if b.delay_s:
            time.sleep(b.delay_s)
        return self._end(question, b)

    async def aanswer(self, question: str, history=()) -> FakeAnswerResult:
        import asyncio

        b = self._begin(question)
        if self.threaded_retrieval:
            await asyncio.to_thread(self._retrieve, question)
        if b.delay_s:
            await asyncio.sleep(b.delay_s)
        return self._end(question, b)

    def _retrieve(self, question: str) -> None:
        with self._lock:
            self.retrieval_in_flight += 1
            self.max_retrieval_in_flight = max(self.max_retrieval_in_flight, self.retrieval_in_flight)
            self.retrieval_order.append(question)
        time.sleep(0.005)  # CPU-bound work stand-in
        with self._lock:
            self.retrieval_in_flight -= 1


class RecordingGenerator:
    """A generator that records every request; with ``fail_if_called`` it fails the test instead
    (used to prove the gate abstains without calling the generator)."""

    name = "recording"

    def __init__(self, fail_if_called: bool = False, inner=None) -> None:
        self.fail_if_called = fail_if_called
        self.inner = inner
        self.requests: list = []

    def generate(self, request):
        self.requests.append(request)
        if self.fail_if_called:
            import pytest

            pytest.fail("the generator was called although the gate should have abstained")
        return self.inner.generate(request)

    async def agenerate(self, request):
        return self.generate(request)


class ScriptedGenerator:
    """A generator that returns fixed raw replies, one per attempt (the last one repeats), and
    records every request it was given; with ``fail_if_called`` it fails the test instead."""

    def __init__(self, *raw: str, name: str = "scripted", fail_if_called: bool = False) -> None:
        self.raw = list(raw)
        self.name = name
        self.fail_if_called = fail_if_called
        self.requests: list = []

    def generate(self, request):
        from rag.answer.contract import GenerationOutput, parse_payload

        if self.fail_if_called:
            import pytest

            pytest.fail(f"the generator {self.name!r} was called although it should not have been")
        text = self.raw[min(len(self.requests), len(self.raw) - 1)]
        self.requests.append(request)
        parsed = parse_payload(text)
        return GenerationOutput(text, parsed.payload, parsed.error)

    async def agenerate(self, request):
        return self.generate(request)


class FakeLlama:
    """Stands in for ``llama_cpp.Llama``: records the constructor's and every call's arguments,
    replies with the scripted ``contents`` in turn (the last one repeats), and counts the calls
    running at once (a real ``Llama`` must never see two)."""

    instances: list["FakeLlama"] = []
    contents: list[str] = ['{"status": "insufficient_evidence", "answer": "", "citations": []}']
    error: Exception | None = None  # raised by create_chat_completion when set

    def __init__(self, **kwargs) -> None:
        self.kwargs = kwargs
        self.calls: list[dict] = []
        self.in_flight = 0
        self.max_in_flight = 0
        FakeLlama.instances.append(self)

    def create_chat_completion(self, **kwargs) -> dict:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            time.sleep(0.01)
            self.calls.append(kwargs)
            if FakeLlama.error is not None:
                raise FakeLlama.error
            content = FakeLlama.contents[min(len(self.calls), len(FakeLlama.contents)) - 1]
            return {"model": self.kwargs.get("model_path", ""), "usage": {"prompt_tokens": 120, "completion_tokens": 30},
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}]}
        finally:
            self.in_flight -= 1


def fake_llama_module(monkeypatch, contents: list[str] | None = None, error: Exception | None = None):
    """Install :class:`FakeLlama` as ``llama_cpp.Llama`` for one test (the generator then picks the
    llama-cpp-python engine, whether or not xllamacpp is installed); returns the class."""
    import types

    monkeypatch.setattr(FakeLlama, "instances", [])
    monkeypatch.setattr(FakeLlama, "contents", list(contents or FakeLlama.contents))
    monkeypatch.setattr(FakeLlama, "error", error)
    module = types.ModuleType("llama_cpp")
    module.Llama = FakeLlama  # type: ignore[attr-defined]
    monkeypatch.setitem(__import__("sys").modules, "llama_cpp", module)
    monkeypatch.delenv("RAG_LLAMACPP_ENGINE", raising=False)  # auto: an importable llama_cpp wins over xllamacpp
    return FakeLlama


def fake_gguf(folder) -> Path:
    """A file named like a GGUF (its bytes are not a model: the engines are faked)."""
    path = Path(folder) / "model.gguf"
    path.write_bytes(b"GGUF fake")
    return path


def llamacpp_config(gguf, **kw):
    """A ``generation.backend: llamacpp`` config for the fake engines' tests (overrides in ``kw``)."""
    from rag.config import GenerationConfig

    return GenerationConfig(**{"backend": "llamacpp", "model_path": str(gguf), "n_ctx": 2048, "n_threads": 1,
                               "seed": 7, "max_tokens": 300, **kw})


class FakeXServer:
    """Stands in for ``xllamacpp.Server``: records the ``CommonParams`` it was built with and every
    request dict, and answers each with :attr:`reply` (an OpenAI-style completion, or an
    ``{"error": ...}`` dict as llama.cpp's server engine returns one)."""

    instances: list["FakeXServer"] = []
    reply: dict = {"usage": {"prompt_tokens": 120, "completion_tokens": 30},
                   "choices": [{"index": 0, "finish_reason": "stop", "message": {
                       "role": "assistant",
                       "content": '{"answer": "", "citations": [], "status": "insufficient_evidence"}'}}]}
    load_error: Exception | None = None  # raised by the constructor when set

    def __init__(self, params) -> None:
        if FakeXServer.load_error is not None:
            raise FakeXServer.load_error
        self.params = params
        self.requests: list[dict] = []
        self.listening_address = "http://127.0.0.1:1"
        FakeXServer.instances.append(self)

    def handle_chat_completions(self, request: dict) -> dict:
        self.requests.append(request)
        return FakeXServer.reply


def fake_xllamacpp_module(monkeypatch, reply: dict | None = None, load_error: Exception | None = None):
    """Install a fake ``xllamacpp`` (its ``CommonParams`` a nest of namespaces, its ``Server`` a
    :class:`FakeXServer`) and hide ``llama_cpp``, for one test; returns :class:`FakeXServer`."""
    import types

    def params():
        return types.SimpleNamespace(model=types.SimpleNamespace(path=""), cpuparams=types.SimpleNamespace(n_threads=-1),
                                     cpuparams_batch=types.SimpleNamespace(n_threads=-1),
                                     sampling=types.SimpleNamespace(seed=-1), api_keys=[])

    monkeypatch.setattr(FakeXServer, "instances", [])
    monkeypatch.setattr(FakeXServer, "reply", reply if reply is not None else FakeXServer.reply)
    monkeypatch.setattr(FakeXServer, "load_error", load_error)
    module = types.ModuleType("xllamacpp")
    module.CommonParams = params  # type: ignore[attr-defined]
    module.Server = FakeXServer  # type: ignore[attr-defined]
    sys_modules = __import__("sys").modules
    monkeypatch.setitem(sys_modules, "xllamacpp", module)
    monkeypatch.setitem(sys_modules, "llama_cpp", None)
    monkeypatch.delenv("RAG_LLAMACPP_ENGINE", raising=False)
    return FakeXServer


class FakeSignals:
    """What :func:`rag.reader.featstore.featurize` needs of :class:`rag.reader.features.Signals`, without
    models: scores are shared-word counts between question and text (cross-encoder), their Jaccard
    (dense) and the passage id's length (BM25), so they are deterministic and order-sensitive."""

    model_ids = {"cross_encoder": "fake", "dense": "fake", "bm25": "fake"}

    @staticmethod
    def _words(t: str) -> set[str]:
        return set(t.lower().replace("?", " ").replace(".", " ").split())

    def cross_encoder(self, question, texts):
        import numpy as np

        q = self._words(question)
        return np.array([float(len(q & self._words(t))) for t in texts])

    def dense(self, question, texts):
        import numpy as np

        q = self._words(question)
        return np.array([len(q & self._words(t)) / max(len(q | self._words(t)), 1) for t in texts])

    def bm25(self, corpus, question, passage_ids):
        import numpy as np

        return np.array([float(len(p)) for p in passage_ids])

    def has_corpus(self, name):
        return True

    def forget_vectors(self):
        pass
