"""Retrieved text is data: defuse anything in it that could open or close a source block or
forge a citation marker, seeing through case, full-width, look-alike and zero-width characters;
and recognise text that tries to instruct the assistant, so it can be quarantined.

:func:`injection_signals` reports what :func:`neutralize` would defuse (forged source tags and
markers) plus the phrase signals of :mod:`rag.context.signals`: text aimed at the assistant or at
the reader of its answer (overriding its instructions, re-assigning its role, asking for its
prompt, steering how it answers, asking to send the conversation or the user's data somewhere).
Ordinary imperatives aimed at readers ("submit the form", "제출해야 한다") and a statute's or a
policy's own duties about personal data are not signals. :func:`quarantine` withholds the block
of a signal, and for the kinds that cannot be innocent its whole document.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from rag.context.signals import SIGNAL_SCOPE, InjectionSignal, Scope, phrase_signals  # noqa: F401 (re-exported)
from rag.lang import ZERO_WIDTH
from rag.text.sentences import MARKER_PATTERN
from rag.types import Candidate

# Characters that NFKC leaves alone but that read as brackets to a model.
_LOOKALIKE_MAP = {
    "‹": "<", "›": ">", "〈": "<", "〉": ">", "⟨": "<", "⟩": ">", "《": "<", "》": ">", "˂": "<", "˃": ">",
    "【": "[", "】": "]", "〔": "[", "〕": "]", "⟦": "[", "⟧": "]", "［": "[", "］": "]", "〖": "[", "〗": "]",
    "⁄": "/", "∕": "/", "⧸": "/", "ᐸ": "<", "ᐳ": ">", "❮": "<", "❯": ">", "❬": "<", "❭": ">", "⟪": "<", "⟫": ">",
    "〘": "[", "〙": "]", "⁅": "[", "⁆": "]",
}
_LOOKALIKES = str.maketrans(_LOOKALIKE_MAP)
# A block or marker needs an opening "<" or "[" (or something that folds to one): text
# without any of these is returned unchanged without the per-character fold.
_OPENERS = "<[\ufe64\uff1c\ufe47\uff3b" + "".join(k for k, v in _LOOKALIKE_MAP.items() if v in "<[")
_MAYBE_HOSTILE = re.compile("[" + re.escape(_OPENERS) + "]")
_TAG = re.compile(r"<\s*/?\s*source\b[^<>\n]{0,200}>?", re.IGNORECASE)
_MARKER = re.compile(MARKER_PATTERN, re.IGNORECASE)


def _fold(text: str) -> tuple[str, list[int]]:
    """A lowercase ASCII-ish view of ``text`` for detection, with an index map back."""
    out: list[str] = []
    idx: list[int] = []
    for i, ch in enumerate(text):
        if ord(ch) in ZERO_WIDTH:
            continue
        f = unicodedata.normalize("NFKC", ch).translate(_LOOKALIKES).lower()
        for c in f:
            out.append(c)
            idx.append(i)
    return "".join(out), idx


def neutralize(text: str) -> tuple[str, int]:
    """Defuse text that could open/close a source block or forge a citation marker.

    Returns the safe text and the number of replacements. Detection sees through case,
    full-width and look-alike characters and zero-width characters."""
    if not _MAYBE_HOSTILE.search(text):
        return text, 0
    folded, idx = _fold(text)
    spans: list[tuple[int, int, str]] = []
    for m in _TAG.finditer(folded):
        spans.append((idx[m.start()], idx[m.end() - 1] + 1, "[source tag removed]"))
    for m in _MARKER.finditer(folded):
        inner = re.sub(r"[\[\]\s]", "", m.group(0)).upper()
        spans.append((idx[m.start()], idx[m.end() - 1] + 1, f"(ref {inner})"))
    if not spans:
        return text, 0
    spans.sort()
    out, pos, n = [], 0, 0
    for s, e, rep in spans:
        if s < pos:  # overlapping detections: the first one wins
            continue
        out.append(text[pos:s])
        out.append(rep)
        pos = e
        n += 1
    out.append(text[pos:])
    return "".join(out), n


@lru_cache(maxsize=20_000)
def injection_signals(text: str) -> tuple[InjectionSignal, ...]:
    """What in ``text`` tries to steer the assistant (empty for ordinary text), in text order."""
    found: list[tuple[int, InjectionSignal]] = []
    if _MAYBE_HOSTILE.search(text):
        folded, idx = _fold(text)
        for m in _TAG.finditer(folded):
            found.append((idx[m.start()], InjectionSignal("forged_tag", text[idx[m.start()]:idx[m.end() - 1] + 1][:80])))
        for m in _MARKER.finditer(folded):
            found.append((idx[m.start()], InjectionSignal("forged_marker", text[idx[m.start()]:idx[m.end() - 1] + 1][:80])))
    plain = unicodedata.normalize("NFKC", text).translate(ZERO_WIDTH)
    found += phrase_signals(plain)
    found.sort(key=lambda x: (x[0], x[1].kind))
    return tuple(sig for _, sig in found)


@dataclass(frozen=True)
class QuarantinedEvidence:
    """A candidate withheld from the prompt because it, or its document, carried an injection attempt."""

    evidence_id: str
    document_id: str
    document_version: str
    scope: str  # "block": this text carried it; "document": another part of the same document carried a
    #             signal that cannot be innocent (a forged tag or marker, a role hijack)
    signals: tuple[str, ...]  # signal kinds, sorted

    def to_json(self) -> dict:
        return {"evidence_id": self.evidence_id, "document_id": self.document_id,
                "document_version": self.document_version, "reason": "suspected_injection", "scope": self.scope,
                "signals": list(self.signals)}


QUARANTINE_MODES = ("off", "drop_block", "drop_document")


def check_mode(mode: str) -> str:
    """``mode`` if it is a ``security.quarantine`` mode, else a ValueError naming it."""
    if mode not in QUARANTINE_MODES:
        raise ValueError(f"security.quarantine must be off, drop_block or drop_document, got {mode!r}")
    return mode


def withheld_scope(kind: str, mode: str) -> Scope | None:
    """What a signal of ``kind`` withholds under ``security.quarantine: mode``: its block, its
    whole document (``drop_document`` and a kind that cannot be innocent, :data:`SIGNAL_SCOPE`),
    or nothing (``off``)."""
    if check_mode(mode) == "off":
        return None
    return "document" if mode == "drop_document" and SIGNAL_SCOPE[kind] == "document" else "block"


def quarantine(candidates: Sequence[Candidate], mode: str,
               document_texts: Callable[[str, str], Sequence[str]] | None = None,
               trusted: Callable[[str, str], bool] | None = None,
               ) -> tuple[tuple[Candidate, ...], tuple[QuarantinedEvidence, ...]]:
    """Withhold suspect evidence (``security.quarantine``): ``off`` keeps everything (tags and
    markers are still defused when the context is built); ``drop_block`` drops candidates whose own
    text carries a signal; ``drop_document`` also drops every candidate of a document any part of
    which (``document_texts(id, version)``, e.g. all its chunks) carries a signal whose kind has
    document scope (forged tags and markers, role hijacks: :data:`rag.context.signals.SIGNAL_SCOPE`).
    A document for which ``trusted(id, version)`` holds is never withheld (its tags and markers are
    still defused in the prompt)."""
    if check_mode(mode) == "off":
        return tuple(candidates), ()
    doc_kinds: dict[tuple[str, str], tuple[str, ...]] = {}

    def document_signals(doc: str, version: str) -> tuple[str, ...]:
        key = (doc, version)
        if key not in doc_kinds:
            texts = document_texts(doc, version) if document_texts is not None else ()
            doc_kinds[key] = tuple(sorted({s.kind for t in texts for s in injection_signals(t)
                                           if SIGNAL_SCOPE[s.kind] == "document"}))
        return doc_kinds[key]

    kept: list[Candidate] = []
    out: list[QuarantinedEvidence] = []
    for c in candidates:
        ch = c.chunk
        if trusted is not None and trusted(ch.document_id, ch.document_version):
            kept.append(c)
            continue
        own = tuple(sorted({s.kind for s in injection_signals(ch.text)}))
        if own:
            out.append(QuarantinedEvidence(ch.evidence_id, ch.document_id, ch.document_version, "block", own))
            continue
        if mode == "drop_document":
            kinds = document_signals(ch.document_id, ch.document_version)
            if kinds:
                out.append(QuarantinedEvidence(ch.evidence_id, ch.document_id, ch.document_version, "document", kinds))
                continue
        kept.append(c)
    return tuple(kept), tuple(out)
