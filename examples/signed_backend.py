"""A chatbot backend calling ``rag serve`` on behalf of its logged-in user (docs/security.md).

The backend holds a trusted-backend API key and the signing secret shared with the server; for each
request it signs who the end user is, so the service answers from what that user may read. Only the
standard library is used, so the signing is easy to port to any language. Every request carries a
fresh random nonce inside its signature: the server refuses the same signed request a second time
(401 ``replayed``), so sign again rather than resend when you retry.

    export RAG_API_KEYS="chatbot:<key>"  RAG_CHATBOT_SECRET="<secret, 32+ characters>"
    # config: serve.keys.chatbot: {trusted_backend: true, secret_env: RAG_CHATBOT_SECRET}
    rag serve --config my.yaml &
    python examples/signed_backend.py http://127.0.0.1:8000 <key> <secret> kim hr acme "연차 휴가 급여 기준표는?"
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import sys
import time
import urllib.request


def signed_headers(secret: str, body: bytes, user: str | None, groups: list[str], tenant: str | None,
                   now: float | None = None) -> dict[str, str]:
    """The four headers that name the end user for this exact ``body``, once (valid for a few minutes)."""
    who = json.dumps({"user": user, "groups": groups, "tenant": tenant}, separators=(",", ":"))
    principal = base64.urlsafe_b64encode(who.encode("utf-8")).decode("ascii").rstrip("=")
    timestamp = str(int(time.time() if now is None else now))
    nonce = secrets.token_urlsafe(18)  # 24 characters of A-Z a-z 0-9 - _, never reused
    message = f"{timestamp}.{nonce}.{principal}.{hashlib.sha256(body).hexdigest()}".encode("ascii")
    return {"X-Rag-Principal": principal, "X-Rag-Timestamp": timestamp, "X-Rag-Nonce": nonce,
            "X-Rag-Signature": hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()}


def call(url: str, key: str, secret: str, path: str, payload: dict | None, user: str | None,
         groups: list[str], tenant: str | None) -> dict:
    """POST ``payload`` (GET when None) to ``path`` as the end user; the JSON reply."""
    body = b"" if payload is None else json.dumps(payload, ensure_ascii=False).encode("utf-8")
    headers = {"Authorization": f"Bearer {key}", **signed_headers(secret, body, user, groups, tenant)}
    if payload is not None:
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(url.rstrip("/") + path, data=body if payload is not None else None,
                                 headers=headers, method="GET" if payload is None else "POST")
    with urllib.request.urlopen(req, timeout=120) as res:  # sign the exact bytes you send
        return json.loads(res.read())


def main(url: str, key: str, secret: str, user: str, group: str, tenant: str, question: str) -> None:
    reply = call(url, key, secret, "/v1/answer", {"question": question, "trace": False}, user, [group], tenant)
    print(reply["status"], reply["answer"].splitlines()[0] if reply["answer"] else "")
    for c in reply["citations"]:
        print(f"  [{c['source_id']}] {c['document_id']}")
    listed = call(url, key, secret, "/v1/documents", None, user, [group], tenant)
    print("readable documents:", " ".join(d["id"] for d in listed["documents"]))


if __name__ == "__main__":
    if len(sys.argv) != 8:
        sys.exit(__doc__)
    main(*sys.argv[1:])
