"""Retrieved text is data: defuse anything in it that could open or close a source block or
forge a citation marker, seeing through case, full-width, look-alike and zero-width characters;
and recognise text that tries to instruct the assistant, so it can be quarantined.

:func:`injection_signals` reports what :func:`neutralize` would defuse (forged source tags and
markers) plus instruction-like text aimed at the assistant: overriding its instructions,
re-assigning its role, asking for its prompt or configuration, steering how it answers, or
sending data somewhere. Ordinary imperatives aimed at readers ("submit the form", "제출해야
한다") are not signals.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from rag.text.lang import ZERO_WIDTH
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


@dataclass(frozen=True)
class InjectionSignal:
    kind: str  # forged_tag | forged_marker | override | role | prompt_leak | steering | exfiltration
    excerpt: str  # the matched text (at most 80 characters)


_AI = r"(?:ai|a\.i\.|assistant|chatbot|chat\s?bot|language model|llm|gpt|the model|bot)"
_AI_STRICT = r"(?:ai|a\.i\.|chatbot|chat\s?bot|language model|llm|gpt)"  # never a job title ("assistant engineer")
_AI_KO = r"(?:AI|인공지능|챗봇|어시스턴트|언어\s*모델|AI\s*모델|인공지능\s*모델|GPT)"
_SAY_KO = r"(?:답|답변|대답|응답|안내|말|출력)(?:하|해)(?:라|세요|십시오|야\s*(?:한다|합니다|함))"
_SIGNALS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((k, re.compile(p, re.IGNORECASE | re.MULTILINE)) for k, p in (
    ("override", r"\b(?:ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}?\b(?:instructions?|prompts?|rules|"
                 r"guidelines|directions|system message|(?:the |all )?context|everything (?:you|above|else)|"
                 r"what you (?:were|have been) told|the above)\b"),
    ("override", r"(?:이전|앞의?|위의?|기존의?|모든)\s*(?:내용|지시|지침|명령|규칙|프롬프트)[^.\n]{0,20}?(?:무시|잊)"),
    ("override", r"(?:지시|지침|프롬프트)(?:사항)?(?:을|를|은|는)?\s*(?:모두\s*)?무시|새로운\s*지시\s*[:：]"),
    ("role", r"\byou are now\b|\bfrom now on,? you\b|\bact as (?:an?|the) " + _AI + r"\b|"
             r"\b(?:maintenance|developer|debug|god|jailbreak|dan) mode\b"),
    ("role", r"(?:너는|당신은|넌)\s*이제|지금부터\s*(?:너는|당신은)|(?:개발자|관리자|디버그|유지보수)\s*모드"),
    ("role", r"<\|im_(?:start|end)\|>|<\|(?:system|user|assistant)\|>|\[/?INST\]|<<\s*/?SYS\s*>>|"
             r"^\s*#{2,3}\s*(?:instruction|system|response)\b|^\s*(?:system|assistant)\s*:"),
    ("prompt_leak", r"\b(?:reveal|print|show|output|repeat|leak)\b[^.\n]{0,40}?\b(?:system prompt|hidden "
                    r"(?:configuration|instructions|prompt)|your (?:instructions|prompt|configuration)|"
                    r"(?:the |your )?(?:hidden |initial )?prompt)\b"),
    ("prompt_leak", r"시스템\s*프롬프트|숨겨진\s*(?:설정|지시)"),
    ("steering", r"\b(?:note|message|instructions?|reminder)\s+(?:to|for)\s+(?:the\s+|any\s+)?" + _AI + r"s?\b|"
                 r"\b(?:as|if you are|if you're)\s+(?:an?\s+)?" + _AI + r"\b|^\s*" + _AI + r"\s*[,:]"),
    ("steering", r"\b(?:the|an?|you(?:r)?) (?:assistant|model|bot)\s+(?:must|should|shall|will|needs? to)\s+(?:always\s+)?"
                 r"(?:answer|respond|reply|say|tell|state)\b"),
    ("steering", r"\b" + _AI_STRICT + r"s?\b[^.\n]{0,40}?\b(?:must|should|shall|will|needs? to)\b"
                 r"[^.\n]{0,20}?\b(?:answer|respond|reply|say|tell|state|cite|include)"),
    ("steering", r"\bbefore (?:answering|responding)\b|\b(?:when|before) you (?:answer|respond|reply)\b|"
                 r"\btell (?:the )?users? that\b|"
                 r"\bin (?:every|each|all|your) (?:answers?|responses?|replies)\b|\bstate (?:this|it) as (?:a )?fact\b|"
                 r"\bdo not (?:mention|reveal|tell|disclose)\b[^.\n]{0,30}\b(?:this|these) (?:instructions?|messages?|notes?)"),
    ("steering", _AI_KO + r"(?:은|는|이|가|에게)?[^.\n]{0,40}?" + _SAY_KO),
    ("steering", r"답변(?:하기)?\s*전에|답변할\s*때(?:는)?\s*반드시|사용자에게[^.\n]{0,40}?(?:라고|고)\s*(?:말|답|안내)(?:하|해)|"
                 r"모든\s*(?:질문|답변|응답)에[^.\n]{0,30}?" + _SAY_KO),
    ("exfiltration", r"\bsend\b[^.\n]{0,60}?\b(?:conversation|chat history|employee data|personal data|"
                     r"credentials|passwords?)\b[^.\n]{0,40}?\bto\b"),
    ("exfiltration", r"(?:대화\s*내용|대화\s*기록|개인\s*정보|직원\s*정보|비밀번호)[^.\n]{0,40}?(?:보내|전송)"),
))


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
    for kind, pat in _SIGNALS:
        for m in pat.finditer(plain):
            found.append((m.start(), InjectionSignal(kind, m.group(0)[:80])))
    found.sort(key=lambda x: (x[0], x[1].kind))
    return tuple(sig for _, sig in found)


@dataclass(frozen=True)
class QuarantinedEvidence:
    """A candidate withheld from the prompt because it, or its document, carried an injection attempt."""

    evidence_id: str
    document_id: str
    document_version: str
    scope: str  # "block": this text carried it; "document": another part of the same document did
    signals: tuple[str, ...]  # signal kinds, sorted

    def to_json(self) -> dict:
        return {"evidence_id": self.evidence_id, "document_id": self.document_id,
                "document_version": self.document_version, "reason": "suspected_injection", "scope": self.scope,
                "signals": list(self.signals)}


def quarantine(candidates: Sequence[Candidate], mode: str,
               document_texts: Callable[[str, str], Sequence[str]] | None = None
               ) -> tuple[tuple[Candidate, ...], tuple[QuarantinedEvidence, ...]]:
    """Withhold suspect evidence (``security.quarantine``): ``off`` keeps everything (tags and
    markers are still defused when the context is built); ``drop_block`` drops candidates whose own
    text carries a signal; ``drop_document`` also drops every candidate of a document any part of
    which (``document_texts(id, version)``, e.g. all its chunks) carries one."""
    if mode == "off":
        return tuple(candidates), ()
    if mode not in ("drop_block", "drop_document"):
        raise ValueError(f"security.quarantine must be off, drop_block or drop_document, got {mode!r}")
    doc_kinds: dict[tuple[str, str], tuple[str, ...]] = {}

    def document_signals(doc: str, version: str) -> tuple[str, ...]:
        key = (doc, version)
        if key not in doc_kinds:
            texts = document_texts(doc, version) if document_texts is not None else ()
            doc_kinds[key] = tuple(sorted({s.kind for t in texts for s in injection_signals(t)}))
        return doc_kinds[key]

    kept: list[Candidate] = []
    out: list[QuarantinedEvidence] = []
    for c in candidates:
        ch = c.chunk
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
