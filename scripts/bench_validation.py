"""Citation validator benchmark: latency of ``CitationValidator.validate`` on realistic answers.

Each answer has 3 cited sentences against a bundle of 5 blocks of ~800 characters of Korean
statute text, cut at paragraph ends from the kolaw-dev corpus (``--corpus``; a bundled sample
statute when the file is absent). A cited sentence restates a sentence of its block, half of
them with one number changed, so every check runs: schema, markers, quotes, clause-aligned
support, numbers (``number_mismatch``) and polarity (``negation_mismatch``). Modes:

    warm    the bundle was validated before with a different answer (the regenerate loop, or a
            second answer over the same context): per-block work is cached, per-claim work is not
    cold    every cache of rag.text (facts, content terms, sentences) is emptied before each answer
    repeat  the same answer validated again (everything cached)

Prints a table and writes it as JSON. Target: warm p50 < 2 ms.

    python scripts/bench_validation.py [--answers 300] [--out results/bench-validation.json]
"""
from __future__ import annotations

import argparse
import json
import platform
import random
import re
import statistics
import time
from pathlib import Path

from rag.answer import AnswerPayload, CitationItem, CitationValidator
from rag.answer.support import clear_cache as clear_support_cache
from rag.batch import percentiles
from rag.config import ValidationConfig
from rag.context.builder import ContextBlock
from rag.text import split_sentences
from rag.text.facts import clear_caches
from rag.text.sentences import split_sentences as _split_cached
from rag.text.lexical import content_terms, normalize

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT.parent / "shared" / "data" / "kolaw-dev" / "corpus.jsonl"
TARGET_P50_MS = 2.0
BLOCK_CHARS = 800

# A stand-in statute (written for this benchmark) used when the kolaw-dev corpus is not there.
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


def load_texts(path: Path) -> tuple[list[str], str]:
    if path.is_file():
        texts = [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        return texts, str(path)
    return [SAMPLE], "bundled sample statute"


def cut_blocks(texts: list[str]) -> list[str]:
    """Every ~800-character run of whole paragraphs of the texts."""
    out: list[str] = []
    for text in texts:
        paras = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
        cur: list[str] = []
        for p in paras:
            cur.append(p)
            if sum(len(x) for x in cur) >= BLOCK_CHARS:
                out.append("\n\n".join(cur)[: BLOCK_CHARS + 400])
                cur = []
        if cur:
            out.append("\n\n".join(cur))
    return [b for b in out if len(b) >= 200]


def locator_of(text: str) -> str:
    m = re.search(r"제\d+조(?:의\d+)?", text)
    return m.group(0) if m else ""


def change_number(sentence: str, rng: random.Random) -> str:
    digits = list(re.finditer(r"\d+", sentence))
    if not digits:
        return sentence
    m = rng.choice(digits)
    return sentence[:m.start()] + str(int(m.group(0)) + rng.randint(1, 9)) + sentence[m.end():]


def make_bundle(blocks: list[str], rng: random.Random) -> dict[str, ContextBlock]:
    chosen = rng.sample(range(len(blocks)), 5) if len(blocks) >= 5 else [rng.randrange(len(blocks)) for _ in range(5)]
    source_map = {}
    for k, i in enumerate(chosen):
        sid, text = f"S{k + 1}", blocks[i]
        source_map[sid] = ContextBlock(sid, f"doc:{i}", f"doc{i}", "1", text, 0, len(text), False, len(text) // 2,
                                       1.0 - k / 10, k + 1, uri=f"https://law.example/{i}", locator=locator_of(text))
    return source_map


def make_answer(source_map: dict[str, ContextBlock], rng: random.Random, cited: int = 3) -> AnswerPayload:
    sentences, citations = [], []
    for sid in rng.sample(list(source_map), cited):
        cands = [s.text for s in split_sentences(source_map[sid].text)
                 if len(s.text) >= 30 and not s.text.lstrip().startswith("#")]
        sent = " ".join((rng.choice(cands) if cands else source_map[sid].text[:120]).split())
        claim = change_number(sent, rng) if rng.random() < 0.5 else sent
        sentences.append(f"{claim} [{sid}]")
        citations.append(CitationItem(source_id=sid, claim=claim[:1000], quote=sent[:60]))
    return AnswerPayload(status="answered", answer=" ".join(sentences)[:8000], citations=tuple(citations))


def clear_all() -> None:
    clear_caches()
    clear_support_cache()
    content_terms.cache_clear()
    normalize.cache_clear()
    _split_cached.cache_clear()


def run(validator: CitationValidator, blocks: list[str], n: int, seed: int) -> dict[str, list[float]]:
    rng = random.Random(seed)
    times: dict[str, list[float]] = {"warm": [], "cold": [], "repeat": []}
    for _ in range(n):
        source_map = make_bundle(blocks, rng)
        payload = make_answer(source_map, rng)
        other = make_answer(source_map, rng, cited=len(source_map))  # cites every block of the bundle
        # cold: nothing cached
        clear_all()
        t0 = time.perf_counter()
        validator.validate(payload, source_map)
        times["cold"].append(time.perf_counter() - t0)
        # warm: the bundle was validated with another answer (citing all its blocks) first; this answer's
        # claims are new
        clear_all()
        validator.validate(other, source_map)
        t0 = time.perf_counter()
        validator.validate(payload, source_map)
        times["warm"].append(time.perf_counter() - t0)
        # repeat: the same answer again
        t0 = time.perf_counter()
        validator.validate(payload, source_map)
        times["repeat"].append(time.perf_counter() - t0)
    return times


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--answers", type=int, default=300)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "bench-validation.json")
    args = ap.parse_args(argv)

    texts, source = load_texts(args.corpus)
    blocks = cut_blocks(texts)
    validator = CitationValidator(ValidationConfig())
    run(validator, blocks, 10, args.seed + 1)  # warm-up: imports, regex compilation
    times = run(validator, blocks, args.answers, args.seed)

    rows = {}
    for mode, ts in times.items():
        ms = [t * 1000 for t in ts]
        p50, p95 = percentiles(ms, [50, 95])
        rows[mode] = {"n": len(ms), "p50_ms": round(p50, 3), "p95_ms": round(p95, 3),
                      "mean_ms": round(statistics.fmean(ms), 3)}
    print(f"CitationValidator.validate: {args.answers} answers x 3 cited sentences, bundles of 5 blocks "
          f"(~{BLOCK_CHARS} chars) from {source}")
    print(f"{'mode':<8} {'n':>5} {'p50 ms':>8} {'p95 ms':>8} {'mean ms':>8}")
    for mode, r in rows.items():
        print(f"{mode:<8} {r['n']:>5} {r['p50_ms']:>8.3f} {r['p95_ms']:>8.3f} {r['mean_ms']:>8.3f}")
    ok = rows["warm"]["p50_ms"] < TARGET_P50_MS
    print(f"target: warm p50 < {TARGET_P50_MS} ms: {'met' if ok else 'NOT met'}")
    report = {"modes": rows, "target_p50_ms": TARGET_P50_MS, "target_mode": "warm", "target_met": ok,
              "answers": args.answers, "cited_sentences": 3, "blocks": 5, "block_chars": BLOCK_CHARS,
              "corpus": source, "seed": args.seed,
              "environment": {"python": platform.python_version(), "machine": platform.machine()}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
