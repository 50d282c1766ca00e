"""Training groups for the neural reader, drawn from the built reader data (``rag reader data build``).

A :class:`ReaderGroup` is one question with candidate texts of one kind:

- ``passage``: a window of the answering passage (consecutive sentences around the answer sentence, about
  as long as one index chunk) first, then windows of the mined or judged non-answering passages;
- ``sentence``: the sentence holding the answer first, then other sentences of the same passage (the
  neighbours that hold a value of the asked kind from another clause are what the reader must learn to
  pass over) and sentences of non-answering passages;
- ``none``: a question with no answer anywhere (SQuAD 2.0 unanswerable, NoMIRACL's non-relevant sets):
  every text is a negative. These groups train the absolute score the gate reads, not the order;
- ``maybe``: an answerable NoMIRACL question's passages, one of which answers (which one is not said):
  for measuring the gate only (no quota draws it in the shipped training config).

Only the ``train`` split is ever drawn for training (``calib`` fits the calibration). Which groups are
drawn is a deterministic function of the seed and the per-(source, kind, language pair) quotas.
"""
from __future__ import annotations

import hashlib
import itertools
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Sequence

from rag.reader.data import iter_examples
from rag.reader.examples import ReaderExample

KINDS = ("passage", "sentence", "none", "maybe")
# Characters in a window: about one 200-token index chunk of the language (Hangul packs more per token).
WINDOW_CHARS = {"ko": 420, "en": 800}
MIN_SENTENCE_CHARS = 12


@dataclass(frozen=True)
class ReaderGroup:
    kind: str                 # passage | sentence | none
    source: str
    pair: str                 # question language - passage language, e.g. "en-ko"
    question_id: str
    question: str
    texts: tuple[str, ...]    # candidates; texts[0] is the positive when has_positive
    has_positive: bool

    @property
    def quota_key(self) -> str:
        return f"{self.source}/{self.kind}/{self.pair}"


def _stable(seed: int, *parts: str) -> random.Random:
    h = hashlib.sha256("\x1f".join((str(seed), *parts)).encode()).digest()
    return random.Random(int.from_bytes(h[:8], "big"))


def window(ex: ReaderExample, around: int | None, rng: random.Random) -> str:
    """Consecutive sentences of ``ex`` up to the language's window size; containing sentence ``around``
    (at a random position in the window) when given, else starting at a random sentence."""
    limit = WINDOW_CHARS.get(ex.passage_lang, 600)
    n = len(ex.sentences)
    if n == 0:
        return ex.passage[:limit]
    if around is None:
        around = rng.randrange(n)
    lo = hi = around
    grow_left = rng.random() < 0.5
    while True:
        moved = False
        for side in ((0, 1) if grow_left else (1, 0)):
            if side == 0 and lo > 0 and ex.sentences[hi][1] - ex.sentences[lo - 1][0] <= limit:
                lo -= 1
                moved = True
            elif side == 1 and hi < n - 1 and ex.sentences[hi + 1][1] - ex.sentences[lo][0] <= limit:
                hi += 1
                moved = True
        if not moved:
            break
        grow_left = rng.random() < 0.5
    return ex.passage[ex.sentences[lo][0]:ex.sentences[hi][1]][: limit * 2]


def _sentences(ex: ReaderExample, skip: Iterable[int] = ()) -> list[str]:
    bad = set(skip)
    return [t for i in range(len(ex.sentences)) if i not in bad
            for t in [ex.sentence_text(i).strip()] if len(t) >= MIN_SENTENCE_CHARS]


def question_groups(rows: Sequence[ReaderExample], negatives: int, seed: int) -> Iterator[ReaderGroup]:
    """The groups one question (in one language pair) offers: at most one of each kind."""
    first = rows[0]
    rng = _stable(seed, first.source, first.question_id, first.question_lang, first.passage_lang)
    pair = f"{first.question_lang}-{first.passage_lang}"
    gold = [r for r in rows if r.passage_label == "answers"]
    negs = [r for r in rows if r.passage_label == "no_answer"]
    if gold and len(negs) >= 2:
        g = gold[0]
        around = g.answer_sentences[0] if g.answer_sentences else None
        texts = [window(g, around, rng)] + [window(n, None, rng) for n in negs[:negatives]]
        yield ReaderGroup("passage", first.source, pair, first.question_id, first.question, tuple(texts), True)
    if gold and gold[0].answer_sentences:
        g = gold[0]
        a = g.answer_sentences[0]
        pos = g.sentence_text(a).strip()
        near = _sentences(g, skip=g.answer_sentences)
        rng.shuffle(near)
        far = [s for n in negs for s in _sentences(n)]
        rng.shuffle(far)
        pool = near[: (negatives + 1) // 2] + far
        if len(pos) >= MIN_SENTENCE_CHARS and len(pool) >= negatives:
            yield ReaderGroup("sentence", first.source, pair, first.question_id, first.question,
                              (pos, *pool[:negatives]), True)
    maybe = [r for r in rows if r.passage_label == "unknown"]
    if maybe and not gold:  # one of these may answer (NoMIRACL): for measuring the gate, never trained on
        texts = [window(m, None, rng) for m in (maybe + negs)[: negatives + 1]]
        if len(texts) == negatives + 1:
            yield ReaderGroup("maybe", first.source, pair, first.question_id, first.question, tuple(texts), False)
    if not first.answerable and len(negs) >= 2 and not gold:
        texts = [window(n, None, rng) for n in negs[: negatives + 1]]
        yield ReaderGroup("none", first.source, pair, first.question_id, first.question, tuple(texts), False)


def _question_rows(data: Path, split: str) -> Iterator[list[ReaderExample]]:
    """The examples of ``split``, one list per question and language pair (they are contiguous in the shards)."""
    for _, rows in itertools.groupby(iter_examples(data, split),
                                     key=lambda e: (e.source, e.question_id, e.question_lang, e.passage_lang)):
        yield list(rows)


def draw_groups(data: Path, quotas: Mapping[str, int] | int, negatives: int = 7, seed: int = 13,
                split: str = "train") -> list[ReaderGroup]:
    """Groups of ``split`` (train unless told), at most ``quotas[source/kind/pair]`` of each key (a
    missing key draws none; an int: that many of every key), chosen by a seeded hash order; returned in a
    seeded shuffled order."""
    def limit(key: str) -> int:
        return quotas if isinstance(quotas, int) else quotas.get(key, 0)

    by_key: dict[str, list[tuple[str, ReaderGroup]]] = {}
    for rows in _question_rows(data, split):
        for g in question_groups(rows, negatives, seed):
            if limit(g.quota_key) <= 0:
                continue
            order = hashlib.sha256(f"{seed}\x1f{g.quota_key}\x1f{g.question_id}".encode()).hexdigest()
            by_key.setdefault(g.quota_key, []).append((order, g))
    out: list[ReaderGroup] = []
    for k in sorted(by_key):
        out.extend(g for _, g in sorted(by_key[k], key=lambda t: t[0])[: limit(k)])
    random.Random(seed).shuffle(out)
    return out
