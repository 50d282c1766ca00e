"""What the previous answer of a conversation cited, for a follow-up's search (issue 41).

The strongest evidence of what ``그중``, ``그건`` or ``that one`` points at is what the earlier
turn *found*. :func:`earlier_evidence` reads it from the history's last assistant turn:

1. **Its citations**: the evidence ids the turn carries (:attr:`rag.types.Turn.citations`, filled
   from a result with :meth:`rag.result.AnswerResult.as_turn`, or passed back as
   ``previous_citations`` / a turn's ``citations`` over HTTP).
2. **Else, the articles its text names**: a chatbot that shows "…(공무원 여비 규정 제17조제1항)"
   names its source in the answer; each article reference (``제17조제1항``) preceded by the name of an
   indexed document (its title or id, spaces and brackets ignored) becomes (document id, article).

The search (:meth:`rag.retrieval.HybridRetriever.search`) adds those blocks to a follow-up's
candidates, scored for the follow-up like any other block; the names and titles read here are
only matched, never logged, and the search stays within what the caller may read.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from rag.lang.ko import conversation as ko_words
from rag.types import EarlierEvidence, Turn

MAX_ARTICLES = 8
# How far before an article reference its law's name may begin (characters).
NAME_WINDOW = 60

_ARTICLE = re.compile(ko_words.ARTICLE_REF)
_NOT_NAME = re.compile(ko_words.NAME_NOISE)
_DECREE = re.compile(ko_words.DECREE)


def _key(text: str) -> str:
    return _NOT_NAME.sub("", text)


def named_articles(text: str, titles: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """(document id, article) for each article ``text`` names after a document's name (``titles``:
    document id → title), within :data:`NAME_WINDOW` characters before it. The name that ends
    nearest the reference wins (``「주택임대차보호법」 제3조 및 제4조``: both are that law's), the
    longest of those; every document of that name counts (a rule stored one article a document
    shares its title)."""
    refs = list(_ARTICLE.finditer(text))
    if not refs:
        return ()
    names: dict[str, set[str]] = {}
    for doc_id, title in titles.items():
        for name in (title, doc_id):
            if len(_key(name)) >= 2:
                names.setdefault(_key(name), set()).add(doc_id)
    out: list[tuple[str, str]] = []
    for m in refs:
        before = _key(text[max(0, m.start() - NAME_WINDOW):m.start()])
        # the name that ends nearest the reference ("… 규칙 제3조 및 제4조": 제4조 is the rule's too),
        # the longest of those that end there (a decree's name holds its law's)
        ends = [(before.rfind(k) + len(k), len(k), k) for k in names if k in before]
        end, _, named = max(ends) if ends else (0, 0, None)
        if named is not None and _DECREE.search(before[end:]):  # "같은 법 시행령 제2조": another document
            named = None
        for doc in sorted(names[named]) if named is not None else ():
            ref = (doc, "".join(m.group(0).split()))
            if ref not in out:
                out.append(ref)
    return tuple(out[:MAX_ARTICLES])


def earlier_evidence(history: Sequence[Turn], titles: Mapping[str, str]) -> EarlierEvidence:
    """The last assistant turn's citations, or without them the articles its text names (module
    docstring); empty when the history has no assistant turn."""
    last = next((t for t in reversed(history) if t.role == "assistant"), None)
    if last is None:
        return EarlierEvidence()
    if last.citations:  # what the answer cited; the laws its quotes mention are not its sources
        return EarlierEvidence(evidence_ids=last.citations)
    return EarlierEvidence(articles=named_articles(last.content, titles))
