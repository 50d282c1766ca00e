"""Property, through the service: whatever the corpus, the access metadata and the signed end user,
no route a caller reads (/v1/search, /v1/context, /v1/answer with its trace, /v1/chat/completions
with its ``rag`` field, GET /v1/documents) and no log line at INFO or above written while it is
served carries the id, title, uri or canary word of a document that user may not read.

One live server for the module; each example replaces its documents through the admin routes,
then asks as random principals (the same strategies as tests/unit/access/test_property.py)."""
from __future__ import annotations

import json
import logging

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag.access import can_read, document_access
from rag.serve.principals import sign
from tests.unit.access.test_property import build_corpus, doc_st, markers, principal_st
from tests.unit.serve.conftest import ADMIN_KEY, live

SECRET = "property-secret-0123456789abcdef0123"
BACKEND_KEY = "property-backend-0123456789abcdef"
ENV = {"RAG_API_KEYS": f"chatbot:{BACKEND_KEY}", "RAG_ADMIN_KEYS": f"ops:{ADMIN_KEY}",
       "RAG_PROPERTY_SECRET": SECRET}
KEYS = {"keys": {"chatbot": {"trusted_backend": True, "secret_env": "RAG_PROPERTY_SECRET"}}}


class Lines(logging.Handler):
    """Every record at INFO or above, formatted with its arguments."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage() + " " + json.dumps(getattr(record, "__dict__", {}), default=str,
                                                                ensure_ascii=False))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("access-property")
    src = tmp / "seed.jsonl"
    src.write_text(json.dumps({"id": "seed", "text": "안내 문서"}, ensure_ascii=False) + "\n", encoding="utf-8")
    with live(tmp / "srv", keys=ENV, corpus={"paths": [str(src)], "format": "jsonl"}, serve=KEYS) as pair:
        yield pair


def admin(c, method: str, path: str, payload: dict | None = None):
    r = c.request(method, path, headers={"Authorization": f"Bearer {ADMIN_KEY}"},
                  **({"json": payload} if payload is not None else {}))
    assert r.status_code == 200, r.text
    return r


def ask(c, method: str, path: str, payload: dict | None, principal) -> str:
    body = json.dumps(payload, ensure_ascii=False).encode() if payload is not None else b""
    headers = {"Authorization": f"Bearer {BACKEND_KEY}", "Content-Type": "application/json"}
    if principal is not None and not principal.anonymous:
        headers |= sign(SECRET.encode(), body, principal.to_json())
    r = c.request(method, path, content=body or None, headers=headers)
    assert r.status_code == 200, f"{path}: {r.status_code} {r.text[:300]}"
    return r.text


@settings(max_examples=8, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(specs=st.lists(doc_st, min_size=2, max_size=6),
       asks=st.lists(st.tuples(principal_st, st.integers(0, 5)), min_size=1, max_size=2))
def test_no_route_or_log_line_shows_a_forbidden_document(server, specs, asks):
    srv, c = server
    added = getattr(srv, "added", set())  # the previous example's documents out (an admin lists public ones only)
    for doc_id in sorted(added):
        admin(c, "DELETE", f"/v1/documents/{doc_id}")
    docs = build_corpus(specs)
    srv.added = {d.id for d in docs}
    admin(c, "POST", "/v1/documents", {"documents": [{"id": d.id, "text": d.text, "version": d.version,
                                                      "title": d.title, "uri": d.uri, "metadata": dict(d.metadata)}
                                                     for d in docs]})
    lines = Lines()
    root = logging.getLogger()
    level = root.level
    root.addHandler(lines)
    root.setLevel(logging.INFO)
    try:
        for principal, pick in asks:
            target = docs[pick % len(docs)]
            query = f"{target.text.split()[0]} {markers(docs.index(target), target.version)['canary']}"
            seen = [ask(c, "POST", "/v1/search", {"query": query}, principal),
                    ask(c, "POST", "/v1/context", {"question": query}, principal),
                    ask(c, "POST", "/v1/answer", {"question": query, "trace": True}, principal),
                    ask(c, "POST", "/v1/chat/completions", {"messages": [{"role": "user", "content": query}]},
                        principal),
                    ask(c, "GET", "/v1/documents", None, principal)]
            blob = "\n".join(seen + lines.lines).replace(json.dumps(query, ensure_ascii=False)[1:-1], "")
            readable_ids = {d.id for d in docs if can_read(principal, document_access(d.id, d.metadata))}
            for d in docs:
                if can_read(principal, document_access(d.id, d.metadata)):
                    continue
                m = markers(docs.index(d), d.version)
                leaked = [s for s in (f"{d.id}:{d.version}:", m["title"], m["uri"]) if s in blob]
                if m["canary"] not in query:
                    leaked += [m["canary"]] if m["canary"] in blob else []
                if d.id not in readable_ids:
                    leaked += [d.id] if d.id in blob else []
                assert not leaked, f"{principal} saw {leaked} of forbidden {d.key}"
    finally:
        root.removeHandler(lines)
        root.setLevel(level)
