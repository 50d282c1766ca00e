"""Who a service request reads as (docs/security.md, "The service").

An API key (:class:`rag.serve.auth.KeyHolder`) reads as a fixed principal, as nobody (anonymous), or
is a **trusted backend** that names the end user per request in three headers it signs:

- ``X-Rag-Principal``: base64url (padding optional) of the JSON object ``{"user", "groups", "tenant"}``;
- ``X-Rag-Timestamp``: the signing time, whole Unix seconds;
- ``X-Rag-Nonce``: 16 to 128 characters of ``A-Z a-z 0-9 - _``, fresh for every request;
- ``X-Rag-Signature``: hex HMAC-SHA256, keyed with the backend's secret, over
  ``TIMESTAMP + "." + NONCE + "." + PRINCIPAL_HEADER + "." + hex(sha256(BODY))`` (BODY: the raw
  request body, empty for a GET). Without a nonce (clients written before it; accepted only with
  ``serve.principal_require_nonce: false``) the message is ``TIMESTAMP + "." + PRINCIPAL_HEADER +
  "." + hex(sha256(BODY))``, as before.

A bad, stale or malformed signed principal is a 401 ``unauthorized`` whose message does not say
which check failed (beyond the time window and a missing nonce); a nonce seen before within its
window (:mod:`rag.serve.nonces`) is a 401 ``replayed``; the headers from a key that is not a trusted
backend are a 403 ``forbidden``. Framework-free: :mod:`rag.serve.routes` calls :func:`resolve`."""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import logging
import re
import secrets
import time
from typing import Mapping

from rag.access import Principal as Reader
from rag.config import SecurityConfig, ServeConfig
from rag.errors import InputError
from rag.serve.auth import KeyHolder
from rag.serve.errors import ServiceError
from rag.serve.nonces import NonceStore

logger = logging.getLogger(__name__)

PRINCIPAL_HEADER, TIMESTAMP_HEADER, SIGNATURE_HEADER = "X-Rag-Principal", "X-Rag-Timestamp", "X-Rag-Signature"
HEADERS = (PRINCIPAL_HEADER, TIMESTAMP_HEADER, SIGNATURE_HEADER)  # all three, or none
NONCE_HEADER = "X-Rag-Nonce"  # with them, signed; required unless serve.principal_require_nonce is false
MAX_PRINCIPAL_CHARS = 8192
_NONCE = re.compile(r"[A-Za-z0-9_-]{16,128}")
_BAD = ("the signed principal (X-Rag-Principal, X-Rag-Timestamp, X-Rag-Nonce, X-Rag-Signature) is missing, "
        "malformed or badly signed")


def encode_principal(principal: Mapping[str, object]) -> str:
    """The ``X-Rag-Principal`` value for ``{"user", "groups", "tenant"}`` (base64url JSON, no padding)."""
    raw = json.dumps(dict(principal), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def signature(secret: bytes, timestamp: str, principal_header: str, body: bytes, nonce: str | None = None) -> str:
    """The hex HMAC-SHA256 under ``secret`` of ``timestamp.nonce.principal_header.sha256(body)``
    (without a nonce: ``timestamp.principal_header.sha256(body)``, the form before nonces)."""
    parts = (timestamp, *((nonce,) if nonce is not None else ()), principal_header, hashlib.sha256(body).hexdigest())
    return hmac.new(secret, ".".join(parts).encode("ascii"), hashlib.sha256).hexdigest()


def sign(secret: bytes, body: bytes, principal: Mapping[str, object], now: float | None = None,
         nonce: str | None = None) -> dict[str, str]:
    """The four headers a trusted backend sends with ``body`` for the end user ``principal``
    (``nonce``: default a fresh random one; reuse none)."""
    ts = str(int(time.time() if now is None else now))
    value = encode_principal(principal)
    nonce = secrets.token_urlsafe(18) if nonce is None else nonce
    return {PRINCIPAL_HEADER: value, TIMESTAMP_HEADER: ts, NONCE_HEADER: nonce,
            SIGNATURE_HEADER: signature(secret, ts, value, body, nonce)}


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name.lower())
    return value if value is not None else headers.get(name)


def request_reader(key: KeyHolder | None, headers: Mapping[str, str], body: bytes, settings: ServeConfig,
            now: float | None = None, nonces: NonceStore | None = None) -> Reader | None:
    """The principal a request reads as (None: anonymous), from its key and its signed headers;
    a :class:`ServiceError` (401 / 403) when the headers are refused. ``nonces``: the service's
    store of seen nonces (None: replays are not checked)."""
    sent = [h for h in (*HEADERS, NONCE_HEADER) if _header(headers, h) is not None]
    if not sent:
        return key.reader if key is not None else None
    if key is None or not key.trusted:
        who = "this server has no API keys" if key is None else (
            f"the key {key.name!r} reads as a fixed principal" if key.reader is not None
            else f"the key {key.name!r} is not a trusted backend")
        raise ServiceError("forbidden", f"{who}; only a trusted-backend key may send X-Rag-Principal")
    if any(_header(headers, h) is None for h in HEADERS):
        raise ServiceError("unauthorized", _BAD)
    value, ts, sig = (str(_header(headers, h)).strip() for h in HEADERS)
    nonce = _header(headers, NONCE_HEADER)
    nonce = None if nonce is None else str(nonce).strip()
    if len(value) > MAX_PRINCIPAL_CHARS or not (ts.isascii() and ts.isdigit()) or len(ts) > 12 or len(sig) != 64 \
            or not value.isascii() or (nonce is not None and not _NONCE.fullmatch(nonce)):
        raise ServiceError("unauthorized", _BAD)
    expected = signature(key.secret, ts, value, body, nonce)
    if not hmac.compare_digest(expected.encode("ascii"), sig.lower().encode("ascii", "replace")):
        logger.info("refused a signed principal: bad signature (key %s)", key.name)
        raise ServiceError("unauthorized", _BAD)
    clock = time.time() if now is None else now
    age = clock - int(ts)
    if age > settings.principal_max_age_s or -age > settings.principal_max_future_s:
        logger.info("refused a signed principal: timestamp %d s off (key %s)", int(age), key.name)
        raise ServiceError("unauthorized", f"the signed principal's timestamp is outside the accepted window "
                                           f"({settings.principal_max_age_s} s old, "
                                           f"{settings.principal_max_future_s} s ahead); sign each request anew")
    _claim(key, nonce, int(ts), clock, settings, nonces)
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        reader = Reader.parse(json.loads(raw.decode("utf-8")), PRINCIPAL_HEADER)
    except (binascii.Error, ValueError, InputError):  # signed, so the backend's own bug: say so plainly
        raise ServiceError("unauthorized", f"{PRINCIPAL_HEADER} is not base64url JSON "
                                           "{\"user\", \"groups\", \"tenant\"}") from None
    return None if reader is None or reader.anonymous else reader


def _claim(key: KeyHolder, nonce: str | None, ts: int, now: float, settings: ServeConfig,
           nonces: NonceStore | None) -> None:
    """Refuse a correctly signed request without a nonce (unless ``serve.principal_require_nonce`` is
    off) and one whose nonce was seen within its window."""
    if nonce is None:
        if settings.principal_require_nonce:
            raise ServiceError("unauthorized", f"the signed principal has no {NONCE_HEADER}: sign a fresh random nonce "
                                               "into every request (docs/service.md); for a client written before "
                                               "nonces, serve.principal_require_nonce: false accepts it unprotected "
                                               "from replays")
        return
    if nonces is None:
        return
    got = nonces.claim(key.name, nonce, ts + settings.principal_max_age_s, now)
    if got == "replayed":
        logger.info("refused a replayed signed request (key %s)", key.name)
        raise ServiceError("replayed", f"this signed request was already received ({NONCE_HEADER} seen within the "
                                       "window): sign every request anew with a fresh nonce; do not retry a signed "
                                       "request unchanged")
    if got == "forgotten":
        raise ServiceError("unauthorized", "the signed principal's timestamp is older than the requests this server "
                                           "still remembers (serve.max_nonces is full); sign each request anew")


def require(reader: Reader | None, security: SecurityConfig) -> None:
    """Refuse an anonymous request when ``security.require_principal`` is set (401 ``principal_required``)."""
    if security.require_principal and reader is None:
        raise ServiceError("principal_required",
                           "this server requires a principal on every request (security.require_principal): "
                           "use a key with a fixed principal, or a trusted-backend key with a signed X-Rag-Principal")


def log_tag(reader: Reader | None) -> str:
    """The principal in the access log: a pseudonym of the user id (never its groups or tenant)."""
    if reader is None:
        return "anonymous"
    if reader.user is None:
        return "no-user"
    return "u-" + hashlib.sha256(reader.user.encode("utf-8")).hexdigest()[:12]
