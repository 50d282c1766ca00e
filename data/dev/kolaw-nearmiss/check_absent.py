"""Re-run the absence check for the kolaw-nearmiss unanswerable questions.

For every question in questions.jsonl (next to this file) it checks the record layout
(id nm-uNNN in order and unique, answerable false, style near-miss | other-law, lang "en"
exactly for questions without Hangul, gold with reason / near_article / absent_terms),
that gold.near_article names a law id of the corpus and an article heading present in
every version of that law, that the question is not one of the kolaw-dev questions, and
that every gold.absent_terms string (1-3 of them) occurs in no corpus text after NFKC
normalisation, whitespace removal and case folding. Prints OK/FAIL per question and a
summary; exits 1 when anything fails.

Usage (from the repository root):
    python data/dev/kolaw-nearmiss/check_absent.py [--corpus PATH] [--dev-questions PATH]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
KOLAW_DEV = HERE.parents[2].parent / "shared" / "data" / "kolaw-dev"
STYLES = {"near-miss", "other-law"}
TOP_KEYS = {"id", "question", "answerable", "gold", "style"}
GOLD_KEYS = {"reason", "near_article", "absent_terms"}
NEAR_RE = re.compile(r"^(\S+) (제\d+조(?:의\d+)?)$")
HANGUL_RE = re.compile(r"[\uac00-\ud7a3]")


def squash(text: str) -> str:
    """Return text NFKC-normalised, with all whitespace removed and case-folded."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text)).casefold()


def read_jsonl(path: Path) -> list[dict]:
    """Return the JSON objects of a JSONL file, one per non-empty line."""
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def check_question(i: int, q: dict, corpus: list[dict], dev_questions: set[str]) -> list[str]:
    """Return the problems found in question number i (1-based); empty when it passes."""
    problems: list[str] = []
    keys = set(q)
    if keys - {"lang"} != TOP_KEYS:
        problems.append(f"keys {sorted(keys)} (want {sorted(TOP_KEYS)} plus optional lang)")
    if q.get("id") != f"nm-u{i:03d}":
        problems.append(f"id {q.get('id')!r}, want nm-u{i:03d}")
    if q.get("answerable") is not False:
        problems.append("answerable is not false")
    if q.get("style") not in STYLES:
        problems.append(f"style {q.get('style')!r} not in {sorted(STYLES)}")
    text = q.get("question", "")
    if not text.strip():
        problems.append("empty question")
    english = not HANGUL_RE.search(text)
    if english != (q.get("lang") == "en") or ("lang" in q and q["lang"] != "en"):
        problems.append(f"lang {q.get('lang')!r} does not match the question's script")
    if squash(text) in dev_questions:
        problems.append("same question as in kolaw-dev")
    gold = q.get("gold", {})
    if set(gold) != GOLD_KEYS:
        problems.append(f"gold keys {sorted(gold)} (want {sorted(GOLD_KEYS)})")
    if not HANGUL_RE.search(gold.get("reason", "")):
        problems.append("gold.reason is empty or not Korean")
    near = gold.get("near_article", "")
    if q.get("style") == "near-miss" and not near:
        problems.append("near-miss question without gold.near_article")
    if near:
        m = NEAR_RE.match(near)
        versions = [d for d in corpus if m and d["id"] == m.group(1)]
        if not m or not versions:
            problems.append(f"near_article {near!r}: not '<corpus law id> 제N조'")
        else:
            heading = re.compile(rf"^##### {re.escape(m.group(2))}(?:\s|$)", re.M)
            missing = [d["version"] for d in versions if not heading.search(d["text"])]
            if missing:
                problems.append(f"near_article {near!r}: no such article in {missing}")
    terms = gold.get("absent_terms", [])
    if not (isinstance(terms, list) and 1 <= len(terms) <= 3):
        problems.append("absent_terms must be a list of 1-3 strings")
        terms = []
    for term in terms:
        needle = squash(term) if isinstance(term, str) else ""
        if not needle:
            problems.append(f"absent term {term!r} is empty")
            continue
        hits = [f"{d['id']}@{d['version']}" for d in corpus if needle in d["squashed"]]
        if hits:
            problems.append(f"absent term {term!r} occurs in {', '.join(hits)}")
    return problems


def main(argv: list[str] | None = None) -> int:
    """Run the checks, print one line per question and a summary; return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, default=HERE / "questions.jsonl")
    parser.add_argument("--corpus", type=Path, default=KOLAW_DEV / "corpus.jsonl")
    parser.add_argument("--dev-questions", type=Path, default=KOLAW_DEV / "questions.jsonl")
    args = parser.parse_args(argv)

    corpus = read_jsonl(args.corpus)
    for doc in corpus:
        doc["squashed"] = squash(doc["text"])
    dev: set[str] = set()
    if args.dev_questions.exists():
        dev = {squash(q["question"]) for q in read_jsonl(args.dev_questions)}
    questions = read_jsonl(args.questions)

    failed = 0
    seen_ids: Counter[str] = Counter(q.get("id", "") for q in questions)
    seen_text: Counter[str] = Counter(squash(q.get("question", "")) for q in questions)
    for i, q in enumerate(questions, 1):
        problems = check_question(i, q, corpus, dev)
        if seen_ids[q.get("id", "")] > 1:
            problems.append("duplicate id")
        if seen_text[squash(q.get("question", ""))] > 1:
            problems.append("duplicate question text")
        if problems:
            failed += 1
            print(f"FAIL {q.get('id', '?')}: " + "; ".join(problems))
        else:
            print(f"OK   {q['id']} [{q['style']}] absent: {', '.join(q['gold']['absent_terms'])}")

    styles = Counter(q.get("style") for q in questions)
    english = sum(1 for q in questions if q.get("lang") == "en")
    versions = ", ".join(f"{d['id']}@{d['version']}" for d in corpus)
    print(f"kolaw-nearmiss: {len(questions)} questions ({dict(sorted(styles.items()))}, english {english}); "
          f"corpus {len(corpus)} texts: {versions}")
    print("FAIL" if failed else "OK", f"({failed} failing)" if failed else "")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
