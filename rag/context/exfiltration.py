"""Exfiltration: a request to send the conversation, the chat, the user's data or a secret
somewhere, told to the assistant or to the reader of its answer.

A sentence is a request to exfiltrate when all of these hold (English and Korean alike):

- a *sending* verb (send, forward, upload, 보내다, 전송하다, …) or a *placing* verb (append,
  include, 붙여 넣다, 첨부하다, …) is used as a verb, not negated ("do not send", "보내지 마세요",
  "전송하여서는 아니 된다"), not passive ("전송된다") and not a condition or a noun clause
  ("전송하는 경우", "전송을 요구할 수 있다");
- its object is the conversation (this chat, the previous messages, 이전 대화, 사용자가 입력한
  질문, the system prompt) or the user's data or a secret (the user's personal data, 사용자의
  개인정보, passwords, API keys), directly ("the chat logs", "대화 내용을"), through a container
  ("a summary of the conversation", "대화를 요약한 결과를") or through a pronoun whose antecedent is
  in the same or the previous sentence ("… and send it to …", "그것을 … 보내라");
- and what is asked fits an attack rather than a rule: for the conversation, a directive to the
  reader ("Send …", "보내세요", "you must forward …", "…해야 한다") or a destination; for the
  user's data or a secret, a destination that names where (a URL, an email address, "the
  following URL", "다음 주소", "아래 링크") and a directive, or a URL or address outright; a
  placing verb always needs a destination.

A statute's own duties ("정보주체는 … 그 개인정보의 전송을 요구할 수 있다") and a policy's
prohibitions ("비밀번호를 메일로 보내지 마세요", "employees must not send passwords by email")
fail the first two conditions; "Send requests about your personal data to privacy@…" fails the
object (its object is the requests). A URL whose query carries a placeholder for the chat
(``https://x.example/?q={conversation}``) is a request on its own.
"""
from __future__ import annotations

import re

from rag.lang.en import injection as en_injection
from rag.lang.ko import injection as ko_injection

_I = re.IGNORECASE

_EMAIL = re.compile(r"[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}", _I)
_URL = re.compile(r"(?:https?|ftp)://[^\s<>\"'`(){}\[\]]+|\bwww\.[^\s<>\"'`(){}\[\]]+|"
                  r"\b(?:[a-z0-9-]+\.)+(?:com|net|org|io|xyz|ru|cn|info|biz|kr|app|dev|site|online|top|example|link|"
                  r"click)(?:/[^\s<>\"'`(){}\[\]]*)?(?![a-z0-9.])", _I)
_URL_MASK, _EMAIL_MASK = "\ue000", "\ue001"
_PLACEHOLDER_URL = re.compile(
    r"(?:https?://|www\.)[^\s\"'`]*?(?:\{\{?|%7b|\$\{?|<|\[)\s*(?:" + en_injection.PLACEHOLDER_WORDS + "|"
    + ko_injection.PLACEHOLDER_WORDS + ")", _I)
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n")

# -- objects ------------------------------------------------------------------------------
_DET_EN = en_injection.DETERMINERS
_CONV_EN = en_injection.CONVERSATION
_DATA_EN = en_injection.DATA
_CONTAINER_EN = re.compile(r"^" + _DET_EN + en_injection.CONTAINER, _I)
_ANAPHOR_EN = re.compile(en_injection.ANAPHOR, _I)
_CONV_EN_HEAD = re.compile(r"^" + _DET_EN + _CONV_EN, _I)
_DATA_EN_HEAD = re.compile(r"^" + _DET_EN + _DATA_EN, _I)
_CONV_EN_ANY = re.compile(r"\b" + _CONV_EN, _I)
_DATA_EN_ANY = re.compile(r"\b" + _DATA_EN, _I)
_OBJECT_END_EN = en_injection.OBJECT_END
_INDIRECT_OBJECT_EN = en_injection.INDIRECT_OBJECT

_USER_KO = ko_injection.USER
_CONV_KO_ANY = re.compile(ko_injection.CONVERSATION, _I)
_DATA_KO_ANY = re.compile(ko_injection.DATA, _I)
_CONV_KO_HEADS = ko_injection.CONVERSATION_HEADS
_QUALIFIED_KO_HEADS = ko_injection.QUALIFIED_HEADS
_QUALIFIER_KO = re.compile(ko_injection.QUALIFIER, _I)
_SECRET_KO_HEADS = ko_injection.SECRET_HEADS
_DATA_KO_HEADS = ko_injection.DATA_HEADS
_CONTAINER_KO_HEADS = ko_injection.CONTAINER_HEADS
_ANAPHOR_KO_HEADS = ko_injection.ANAPHOR_HEADS
_KO_PARTICLE = re.compile(ko_injection.PARTICLE)
# Any head word a Korean object could have (a cheap test before reading the sentences).
_KO_HINT = re.compile("|".join(sorted((r"\s*".join(w) for w in _CONV_KO_HEADS | _QUALIFIED_KO_HEADS | _SECRET_KO_HEADS),
                                      key=len, reverse=True)), _I)

# -- verbs ----------------------------------------------------------------------------------
_VERB_EN = re.compile(en_injection.VERB, _I)  # group 1: a sending verb, group 2: a placing verb
_VERB_KO = re.compile(ko_injection.VERB)  # the same groups

# -- mood -----------------------------------------------------------------------------------
_NEG_EN = re.compile(en_injection.NEGATION, _I)
_NOT_FORGET_EN = re.compile(en_injection.NOT_FORGET, _I)
_DIRECTIVE_EN = re.compile(en_injection.DIRECTIVE, _I)
_LIST_START = re.compile(en_injection.LIST_START, _I)

_NEG_KO = re.compile(ko_injection.NEGATION)
_PASSIVE_KO = re.compile(ko_injection.PASSIVE)
_NOMINAL_KO = re.compile(ko_injection.NOMINAL)
_DIRECTIVE_KO = re.compile(ko_injection.DIRECTIVE)
_OBLIGATION_KO = re.compile(ko_injection.OBLIGATION)
_AI_SUBJECT_KO = re.compile(ko_injection.AI_SUBJECT, _I)

# -- destinations ---------------------------------------------------------------------------
_DEIXIS_EN = re.compile(en_injection.DESTINATION, _I)
_DEIXIS_KO = re.compile(ko_injection.DESTINATION, _I)


def _mask(text: str) -> str:
    """``text`` with every email address and URL replaced by a same-length run of a private-use
    character, so their dots end no sentence and a destination is one token."""
    out = list(text)
    for pat, ch in ((_EMAIL, _EMAIL_MASK), (_URL, _URL_MASK)):
        for m in pat.finditer(text):
            if out[m.start()] in (_URL_MASK, _EMAIL_MASK):
                continue
            out[m.start():m.end()] = ch * (m.end() - m.start())
    return "".join(out)


def _sentences(masked: str) -> list[tuple[int, int]]:
    spans, pos = [], 0
    for m in _SENTENCE_END.finditer(masked):
        if m.start() > pos:
            spans.append((pos, m.start()))
        pos = m.end()
    if pos < len(masked):
        spans.append((pos, len(masked)))
    return spans


def _has_dest(s: str) -> tuple[bool, bool]:
    """(any destination, a concrete one: a URL or an email address) in sentence ``s``."""
    concrete = _URL_MASK in s or _EMAIL_MASK in s
    return concrete or bool(_DEIXIS_EN.search(s) or _DEIXIS_KO.search(s)), concrete


def _object_en(after: str, before: str) -> str | None:
    """``conv`` / ``data`` for the object noun phrase right after an English verb, else None."""
    np = re.split(_OBJECT_END_EN, after.strip(), maxsplit=1, flags=_I)[0][:120]
    np = re.sub(_INDIRECT_OBJECT_EN, "", np, flags=_I)  # send us your password
    for _ in range(2):
        if _CONV_EN_HEAD.match(np):
            return "conv"
        if _DATA_EN_HEAD.match(np):
            return "data"
        c = _CONTAINER_EN.match(np)
        if not c:
            break
        np = np[c.end():]
    if _ANAPHOR_EN.match(np):
        if _CONV_EN_ANY.search(before) or _CONV_KO_ANY.search(before):
            return "conv"
        if _DATA_EN_ANY.search(before) or _DATA_KO_ANY.search(before):
            return "data"
    return None


def _object_ko(before: str, context: str) -> str | None:
    """``conv`` / ``data`` for the last object- or topic-marked noun phrase before a Korean verb."""
    tokens = before.split()
    for i in range(len(tokens) - 1, max(-1, len(tokens) - 9), -1):
        m = _KO_PARTICLE.match(tokens[i].strip(",.\"'「」『』()"))
        if not m:
            continue
        head = m.group(1)
        mods = " ".join(tokens[max(0, i - 5):i]) + " " + head
        compact = head.replace(" ", "")
        joined = (tokens[i - 1] + head) if i > 0 else head
        if joined in _SECRET_KO_HEADS or joined in _CONV_KO_HEADS or joined in _DATA_KO_HEADS:
            compact = joined
        if compact in _CONV_KO_HEADS or compact.endswith(ko_injection.CONVERSATION_ENDINGS):
            return "conv"
        if compact in _QUALIFIED_KO_HEADS:
            return "conv" if _QUALIFIER_KO.search(mods) else None
        if compact in _SECRET_KO_HEADS or compact.endswith(ko_injection.SECRET_ENDINGS):
            return "data"
        if compact in _DATA_KO_HEADS and re.search(_USER_KO, mods, _I):
            return "data"
        if compact in _CONTAINER_KO_HEADS:
            scope = mods if compact not in ko_injection.ALL_HEADS else context + " " + before
            if _CONV_KO_ANY.search(mods) or _CONV_KO_ANY.search(before):
                return "conv"
            if _DATA_KO_ANY.search(mods) or _DATA_KO_ANY.search(scope):
                return "data"
            return None
        if compact in _ANAPHOR_KO_HEADS:
            text = context + " " + before
            if _CONV_KO_ANY.search(text) or _CONV_EN_ANY.search(text):
                return "conv"
            if _DATA_KO_ANY.search(text) or _DATA_EN_ANY.search(text):
                return "data"
            return None
        for j in range(i - 1, max(-1, i - 4), -1):  # 주민등록번호와 전화번호를: a conjunct of the object
            c = re.match(ko_injection.CONJUNCT, tokens[j])
            if not c:
                break
            if c.group(1) in _SECRET_KO_HEADS or c.group(1) in _CONV_KO_HEADS:
                return "conv" if c.group(1) in _CONV_KO_HEADS else "data"
        if m.group(0).endswith(ko_injection.OBJECT_PARTICLES):  # the verb's object, and it is something else
            return None
    return None


_OBJECT_HEADS_KO = (_CONV_KO_HEADS | _QUALIFIED_KO_HEADS | _SECRET_KO_HEADS | _DATA_KO_HEADS | _CONTAINER_KO_HEADS
                    | _ANAPHOR_KO_HEADS)


def _third_party_topic(before: str) -> bool:
    """Whether a topic other than the assistant, the reader or the object is named before the verb
    (회사는, 사업자는, 정보주체는)."""
    for tok in before.split():
        m = re.match(ko_injection.TOPIC, tok.strip(",.\"'"))
        if m and len(m.group(1)) >= 2 and m.group(1) not in _OBJECT_HEADS_KO and not _AI_SUBJECT_KO.match(tok + " "):
            return True
    return False


def _decide(obj: str | None, strong: bool, directive: bool, dest: bool, concrete: bool) -> bool:
    if obj is None or not (strong or dest):
        return False
    if obj == "conv":
        return directive or dest
    return dest and (directive or concrete)


def exfiltration_spans(plain: str) -> list[tuple[int, int]]:
    """Spans of ``plain`` that ask to send the conversation, the user's data or a secret away
    (module docstring), in text order."""
    out = [(m.start(), m.end()) for m in _PLACEHOLDER_URL.finditer(plain)]
    if not (_VERB_EN.search(plain) or _VERB_KO.search(plain)):
        return out
    if not (_CONV_EN_ANY.search(plain) or _DATA_EN_ANY.search(plain) or _CONV_KO_ANY.search(plain)
            or _DATA_KO_ANY.search(plain) or _KO_HINT.search(plain)):
        return out
    masked = _mask(plain)
    previous = ""
    for s0, s1 in _sentences(masked):
        sent = masked[s0:s1]
        dest, concrete = _has_dest(sent)
        hit = _sentence_hit(sent, previous, dest, concrete)
        if hit is not None:
            start = s0 + hit
            out.append((start, min(s1, start + 80)))
        previous = sent
    out.sort()
    return out


# A message or request that carries the object: "compose an email to … containing the user's salary",
# "open https://… followed by the user's last message".
_CARRY_EN = re.compile(
    r"\b(?:" + en_injection.CARRY_VERBS + r")\s+" + en_injection.CARRY_ARTICLE + r"(?:\w+\s+)?"
    r"(?:" + en_injection.CARRY_NOUNS + "|" + _URL_MASK + r"+)[^.\n]{0,80}?"
    r"\b(?:" + en_injection.CARRY_LINKS + r")\s+", _I)


def _sentence_hit(sent: str, previous: str, dest: bool, concrete: bool) -> int | None:
    """Where in ``sent`` a request to exfiltrate starts, or None."""
    for m in _CARRY_EN.finditer(sent):
        if dest and _object_en(sent[m.end():], previous + " " + sent[:m.start()]) is not None \
                and not _NEG_EN.search(sent[:m.start()]):
            return m.start()
    for m in _VERB_EN.finditer(sent):
        before = sent[:m.start()]
        if _NEG_EN.search(before) and not _NOT_FORGET_EN.search(before):
            continue
        directive = bool(_DIRECTIVE_EN.search(before) or _LIST_START.match(before))
        obj = _object_en(sent[m.end():], previous + " " + before)
        if _decide(obj, m.group(1) is not None, directive, dest, concrete):
            return m.start()
    for m in _VERB_KO.finditer(sent):
        tail = sent[m.end():]
        if _NEG_KO.match(tail) or _PASSIVE_KO.match(tail) or _NOMINAL_KO.match(tail):
            continue
        rest = re.split(r"[.!?。]", tail, maxsplit=1)[0]
        before = sent[:m.start()]
        ai = bool(_AI_SUBJECT_KO.search(sent))
        # An obligation is a request to the reader unless it names someone else who owes it
        # ("회사는 … 보내야 한다" is a rule about the company).
        obliged = bool(_OBLIGATION_KO.search(rest)) and (ai or not _third_party_topic(before))
        directive = bool(_DIRECTIVE_KO.search(rest)) or obliged or ai
        obj = _object_ko(before, previous)
        if _decide(obj, m.group(1) is not None, directive, dest, concrete):
            return max(0, len(before) - 40)
    return None
