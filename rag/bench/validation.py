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

TARGET_P50_MS = 2.0
BLOCK_CHARS = 800

# A stand-in statute (written for this benchmark), used when the kolaw-dev corpus is not there.
SAMPLE = """##### 제1조 (목적)

이 규정은 직원의 출장 여비와 휴가에 관한 사항을 정함을 목적으로 한다.

##### 제2조 (여비의 정산)

**①** 출장자는 출장을 마친 날의 다음 날부터 2주일 이내에 증거서류를 갖추어 회계 담당자에게 정산을 신청하여야 한다. <개정 2021.3.2>

**②** 제1항에도 불구하고 국외 출장의 경우에는 30일 이내에 정산을 신청할 수 있다.

**③** 회사 차량을 이용하여 출장하는 경우에는 교통비를 지급하지 아니한다.

##### 제3조 (일비)

**①** 일비는 1일 2만원으로 한다. 다만, 근무지 안의 출장으로서 4시간 미만인 경우에는 1만원을 지급한다.

**②** 같은 곳에 15일을 초과하여 머무르는 경우에는 그 초과일수에 대하여 일비의 10분의 1을 뺀다.

##### 제4조 (연가)

**①** 직원의 연가 일수는 다음과 같다. <개정 2023.1.1>

  1\\. 재직기간 1년 미만: 11일
  2\\. 재직기간 1년 이상 3년 미만: 15일
  3\\. 재직기간 3년 이상: 20일

**②** 부서장은 연가 신청을 받았을 때에는 업무에 특별한 지장이 없으면 승인하여야 한다.

**③** 연가는 반일 단위로 사용할 수 있으며, 반일 연가 2회는 연가 1일로 계산한다.

##### 제5조 (병가)

**①** 부서장은 직원이 질병으로 직무를 수행할 수 없을 때에는 연 60일의 범위에서 병가를 승인할 수 있다.

**②** 병가 일수가 연간 6일을 초과하는 경우에는 의사의 진단서를 첨부하여야 한다.

**③** 부정한 방법으로 병가를 받은 직원에게는 그 일수의 2배를 연가 일수에서 뺀다.
"""


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
        m = re.search(r"제\d+조(?:의\d+)?", text)
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
