"""Citation validator latency: ``CitationValidator.validate`` on realistic answers.

Each answer has 3 cited sentences against a bundle of 5 blocks of ~800 characters of Korean statute
text cut at paragraph ends from kolaw-dev (``--corpus``; a bundled sample statute when it is absent).
A cited sentence restates a sentence of its block, half of them with one number changed, so every
check runs. Modes:

- ``warm``: the bundle was validated before with another answer citing all its blocks (the
  regenerate loop): per-block work is cached, per-claim work is not;
- ``cold``: every per-text cache of rag.text and rag.answer emptied before each answer;
- ``repeat``: the same answer validated again.

Target: warm p50 < 2 ms.
"""
from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from rag.bench.harness import data_dir, latency_summary, read_jsonl
from rag.bench.measurement import Measurement, Outcome
from rag.lang.ko import samples as ko_samples

TARGET_P50_MS = 2.0
BLOCK_CHARS = 800

# A stand-in statute (written for this benchmark), used when the kolaw-dev corpus is not there.
SAMPLE = ko_samples.VALIDATION_STATUTE


@dataclass(frozen=True)
class Options:
    answers: int = 300
    corpus: str = field(default="", metadata={"help": "statute JSONL (default: <data>/kolaw-dev/corpus.jsonl)"})
    seed: int = 7


def _corpus(o: Options) -> Path:
    return Path(o.corpus) if o.corpus else data_dir() / "kolaw-dev" / "corpus.jsonl"


def cut_blocks(texts: list[str]) -> list[str]:
    """Every ~800-character run of whole paragraphs of the texts."""
    out: list[str] = []
    for text in texts:
        cur: list[str] = []
        for p in (p for p in re.split(r"\n\s*\n", text) if p.strip()):
            cur.append(p)
            if sum(len(x) for x in cur) >= BLOCK_CHARS:
                out.append("\n\n".join(cur)[: BLOCK_CHARS + 400])
                cur = []
        if cur:
            out.append("\n\n".join(cur))
    return [b for b in out if len(b) >= 200]


def _change_number(sentence: str, rng: random.Random) -> str:
    digits = list(re.finditer(r"\d+", sentence))
    if not digits:
        return sentence
    m = rng.choice(digits)
    return sentence[:m.start()] + str(int(m.group(0)) + rng.randint(1, 9)) + sentence[m.end():]


def _bundle(blocks: list[str], rng: random.Random) -> dict:
    from rag.context import ContextBlock

    chosen = rng.sample(range(len(blocks)), 5) if len(blocks) >= 5 else [rng.randrange(len(blocks)) for _ in range(5)]
    out = {}
    for k, i in enumerate(chosen):
        sid, text = f"S{k + 1}", blocks[i]
        m = re.search(ko_samples.ARTICLE_LOCATOR, text)
        out[sid] = ContextBlock(sid, f"doc:{i}", f"doc{i}", "1", text, 0, len(text), False, len(text) // 2,
                                1.0 - k / 10, k + 1, uri=f"https://law.example/{i}", locator=m.group(0) if m else "")
    return out


def _answer(source_map: dict, rng: random.Random, cited: int = 3):
    from rag.answer import AnswerPayload, CitationItem
    from rag.text import split_sentences

    sentences, citations = [], []
    for sid in rng.sample(list(source_map), cited):
        cands = [s.text for s in split_sentences(source_map[sid].text)
                 if len(s.text) >= 30 and not s.text.lstrip().startswith("#")]
        sent = " ".join((rng.choice(cands) if cands else source_map[sid].text[:120]).split())
        claim = _change_number(sent, rng) if rng.random() < 0.5 else sent
        sentences.append(f"{claim} [{sid}]")
        citations.append(CitationItem(source_id=sid, claim=claim[:1000], quote=sent[:60]))
    return AnswerPayload(status="answered", answer=" ".join(sentences)[:8000], citations=tuple(citations))


def clear_text_caches() -> None:
    """Empty the per-text caches validation uses (facts, claim support, content terms, sentences)."""
    from rag.answer.support import clear_cache
    from rag.text import content_terms, normalize, split_sentences
    from rag.text.facts import clear_caches

    clear_caches()
    clear_cache()
    for fn in (content_terms, normalize, split_sentences):
        fn.cache_clear()


def _timed(validator, blocks: list[str], n: int, seed: int) -> dict[str, list[float]]:
    rng = random.Random(seed)
    times: dict[str, list[float]] = {"warm": [], "cold": [], "repeat": []}
    for _ in range(n):
        source_map = _bundle(blocks, rng)
        payload = _answer(source_map, rng)
        other = _answer(source_map, rng, cited=len(source_map))
        clear_text_caches()
        t0 = time.perf_counter()
        validator.validate(payload, source_map)
        times["cold"].append((time.perf_counter() - t0) * 1000)
        clear_text_caches()
        validator.validate(other, source_map)
        t0 = time.perf_counter()
        validator.validate(payload, source_map)
        times["warm"].append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        validator.validate(payload, source_map)
        times["repeat"].append((time.perf_counter() - t0) * 1000)
    return times


def run(o: Options) -> Outcome:
    from rag.answer import CitationValidator
    from rag.config import ValidationConfig

    path = _corpus(o)
    texts, source = ([d["text"] for d in read_jsonl(path)], str(path)) if path.is_file() else ([SAMPLE], "sample")
    blocks = cut_blocks(texts)
    validator = CitationValidator(ValidationConfig())
    _timed(validator, blocks, 10, o.seed + 1)  # warm-up: imports, regex compilation
    rows = {mode: latency_summary(ts) for mode, ts in _timed(validator, blocks, o.answers, o.seed).items()}
    met = rows["warm"]["p50"] < TARGET_P50_MS
    table = [f"CitationValidator.validate: {o.answers} answers x 3 cited sentences, 5 blocks (~{BLOCK_CHARS} "
             f"chars) from {source}", f"{'mode':<8} {'n':>5} {'p50 ms':>8} {'p95 ms':>8} {'mean ms':>8}"]
    table += [f"{m:<8} {r['n']:>5} {r['p50']:>8.3f} {r['p95']:>8.3f} {r['mean']:>8.3f}" for m, r in rows.items()]
    table.append(f"target: warm p50 < {TARGET_P50_MS} ms: {'met' if met else 'NOT met'}")
    return Outcome({"modes": rows, "target_p50_ms": TARGET_P50_MS, "target_met": met, "corpus": source,
                    "blocks_available": len(blocks)}, "\n".join(table))


MEASUREMENT = Measurement("validation", "citation validator latency (warm, cold, repeat) on statute answers",
                          Options, run)
