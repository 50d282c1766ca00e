"""The reader's labelled examples: one row per (question, passage), expandable to one per sentence.

A :class:`ReaderExample` is a question asked against one passage, with the passage's sentences (the
project's own splitter, :func:`rag.text.sentences.split_sentences`, as ``(start, end)`` offsets) and
which of them hold the answer. Stored one JSON object a line; :meth:`ReaderExample.sentence_examples`
expands a row into one :class:`SentenceExample` per sentence for sentence-level training.

Labels
- passage (``passage_label``): ``answers`` (the passage answers the question), ``no_answer`` (it does
  not: a dataset-judged negative, the paragraph of an unanswerable SQuAD 2.0 question, or a hard
  negative mined by BM25), ``unknown`` (it may: a NoMIRACL passage of an answerable question, whose
  relevant passage the set does not name).
- sentence (:data:`SENTENCE_LABELS`): ``holds_answer`` (the sentence overlaps a gold answer span or
  rationale sentence), ``passage_answers`` (another sentence of an answering passage), ``no_answer``
  (a sentence of a passage that does not answer), ``unknown`` (no span says which sentence answers:
  MS MARCO, NoMIRACL, SciFact's training claims).
- ``origin``: ``gold`` (the dataset's own positive), ``given`` (a passage the dataset gives with its
  label), ``bm25`` (mined here: assumed not to answer, with answer-string and duplicate filters).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from rag.reader.errors import ReaderDataError

PASSAGE_LABELS = ("answers", "no_answer", "unknown")
SENTENCE_LABELS = ("holds_answer", "passage_answers", "no_answer", "unknown")
ORIGINS = ("gold", "given", "bm25")


@dataclass(frozen=True)
class SentenceExample:
    """One sentence of a passage, labelled for one question."""

    example_id: str
    source: str
    split: str
    question_id: str
    question_lang: str
    passage_lang: str
    question: str
    passage_id: str
    sentence_index: int
    sentence: str
    label: str


@dataclass(frozen=True)
class ReaderExample:
    """A question against one passage, with the passage's sentences and the answer-holding ones."""

    example_id: str
    source: str            # dataset family: korquad1, squad2, msmarco, nomiracl-ko, scifact
    source_split: str      # the dataset's own split the question came from (train, dev, test)
    split: str             # the reader's split: train, calib or eval (rag.reader.splits)
    split_key: str         # what the split hashed (with the source)
    question_id: str
    question_lang: str
    passage_lang: str
    question: str
    answers: tuple[str, ...]
    answerable: bool       # the question has an answer somewhere in its dataset
    passage_id: str
    passage_title: str
    passage: str
    origin: str
    passage_label: str
    sentences: tuple[tuple[int, int], ...]       # (start, end) offsets into ``passage``
    answer_sentences: tuple[int, ...] | None      # indices into ``sentences``; None: not known
    stance: str | None = None                     # SciFact: support / contradict
    rank: int | None = None                       # mined negatives: 1-based BM25 rank
    score: float | None = None                    # mined negatives: BM25 score

    def sentence_text(self, i: int) -> str:
        s, e = self.sentences[i]
        return self.passage[s:e]

    def sentence_label(self, i: int) -> str:
        if self.passage_label == "no_answer":
            return "no_answer"
        if self.passage_label == "unknown" or self.answer_sentences is None:
            return "unknown"
        return "holds_answer" if i in self.answer_sentences else "passage_answers"

    def sentence_examples(self) -> tuple[SentenceExample, ...]:
        return tuple(SentenceExample(self.example_id, self.source, self.split, self.question_id,
                                     self.question_lang, self.passage_lang, self.question, self.passage_id,
                                     i, self.sentence_text(i), self.sentence_label(i))
                     for i in range(len(self.sentences)))

    def to_row(self) -> dict:
        row = asdict(self)
        row["answers"] = list(self.answers)
        row["sentences"] = [list(s) for s in self.sentences]
        row["answer_sentences"] = None if self.answer_sentences is None else list(self.answer_sentences)
        return row

    @classmethod
    def from_row(cls, row: dict) -> "ReaderExample":
        try:
            kw = {f.name: row[f.name] for f in fields(cls) if f.name in row}
            kw["answers"] = tuple(row["answers"])
            kw["sentences"] = tuple((int(s), int(e)) for s, e in row["sentences"])
            a = row["answer_sentences"]
            kw["answer_sentences"] = None if a is None else tuple(int(i) for i in a)
            ex = cls(**kw)
        except (KeyError, TypeError, ValueError) as exc:
            raise ReaderDataError(f"not a reader example row ({exc!r}): {str(row)[:200]}") from None
        ex.check()
        return ex

    def check(self) -> None:
        """Raise :class:`ReaderDataError` when the labels or offsets are inconsistent."""
        problems = []
        if self.passage_label not in PASSAGE_LABELS:
            problems.append(f"passage_label {self.passage_label!r}")
        if self.origin not in ORIGINS:
            problems.append(f"origin {self.origin!r}")
        n = len(self.passage)
        if any(not (0 <= s < e <= n) for s, e in self.sentences):
            problems.append("a sentence span outside the passage")
        if self.answer_sentences is not None:
            if self.passage_label != "answers":
                problems.append("answer sentences on a passage that does not answer")
            if any(not (0 <= i < len(self.sentences)) for i in self.answer_sentences):
                problems.append("an answer sentence index out of range")
        if problems:
            raise ReaderDataError(f"{self.example_id}: " + "; ".join(problems))


def sentences_holding(sentences: tuple[tuple[int, int], ...], spans: tuple[tuple[int, int], ...]) -> tuple[int, ...]:
    """Indices of the sentences that overlap any of the character ``spans`` (in sentence order)."""
    return tuple(i for i, (s, e) in enumerate(sentences) if any(a < e and b > s for a, b in spans))
