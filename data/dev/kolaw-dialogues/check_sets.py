"""Check the kolaw dialogue and English development sets against the kolaw-dev corpus.

Run from the project root with the project's venv:

    .venv/bin/python data/dev/kolaw-dialogues/check_sets.py [--dataset ../shared/data/kolaw-dev]

Files checked: data/dev/kolaw-dialogues/questions.jsonl (two-turn dialogues, second turn),
data/dev/kolaw-dialogues/full_questions.jsonl (the same follow-ups written out in full) and
data/dev/kolaw-en/questions.jsonl (English versions of kolaw-dev questions).

Per line it prints OK or FAIL with the reasons; then a summary per file, and whether
rag.evaluation.answer_dataset.load_answer_dataset accepts each file. Exit status 1 on any FAIL.

Gold checks (answerable lines): gold.doc_id is a corpus id and gold.version its newest version;
gold.article names an article that exists; the quote occurs in that article's text and starts
in the article at or after the cited paragraph mark (제N항) when one is named; every answer fact occurs in the quote or
the article text; every superseded fact occurs in an older version of the document and not in
the quote. Matching is done after rag.evaluation.answer_scoring.normalize_fact_text (NFKC,
markdown escapes and ** removed, whitespace removed), the normalisation the scorer uses.
"""
from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path


from rag.evaluation.answer_dataset import load_answer_dataset
from rag.evaluation.answer_scoring import normalize_fact_text as norm
from rag.text.sentences import strip_markers

ROOT = Path(__file__).resolve().parents[3]

DIALOGUES = ROOT / "data/dev/kolaw-dialogues/questions.jsonl"
FULL = ROOT / "data/dev/kolaw-dialogues/full_questions.jsonl"
ENGLISH = ROOT / "data/dev/kolaw-en/questions.jsonl"
REFERENCES = {"pronoun", "ellipsis", "condition", "decree"}
_ARTICLE = re.compile(r"^(제\d+조(?:의\d+)?)(?:제(\d+)항)?(?:제(\d+)호)?$")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
MAX_SHARED = 12  # longest run of characters a question may share with its gold quote


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load_corpus(dataset: Path) -> dict[str, dict[str, str]]:
    """``{doc id: {version: text}}``."""
    out: dict[str, dict[str, str]] = {}
    for o in read_jsonl(dataset / "corpus.jsonl"):
        out.setdefault(o["id"], {})[str(o["version"])] = o["text"]
    return out


def article_span(text: str, article: str) -> tuple[str, str] | None:
    """(article text, text from the cited paragraph to the article's end), or None when the
    article or paragraph is not in ``text``."""
    m = _ARTICLE.match(article)
    if not m:
        return None
    head = re.search(rf"^##### {re.escape(m.group(1))}(?: |$)", text, re.M)
    if not head:
        return None
    nxt = re.search(r"^#{2,5} ", text[head.end():], re.M)
    body = text[head.start(): head.end() + nxt.start()] if nxt else text[head.start():]
    if not m.group(2):
        return body, body
    mark = f"**{chr(0x2460 + int(m.group(2)) - 1)}**"
    at = body.find(mark)
    return (body, body[at:]) if at >= 0 else None


def longest_shared(a: str, b: str) -> int:
    best = 0
    for i in range(len(a)):
        for j in range(i + best + 1, len(a) + 1):
            if a[i:j] in b:
                best = j - i
            else:
                break
    return best


def check_gold(row: dict, corpus: dict[str, dict[str, str]]) -> list[str]:
    g = row.get("gold")
    if not isinstance(g, dict):
        return ["no gold object"]
    if not row.get("answerable"):
        bad = [k for k in ("doc_id", "answer_facts", "quote") if k in g]
        return ([] if isinstance(g.get("reason"), str) and g["reason"].strip() else ["unanswerable without gold.reason"]) + (
            [f"unanswerable gold has {bad}"] if bad else [])
    errs: list[str] = []
    versions = corpus.get(g.get("doc_id", ""))
    if not versions:
        return [f"gold.doc_id {g.get('doc_id')!r} not in corpus"]
    newest = max(versions)
    if g.get("version") != newest:
        errs.append(f"gold.version {g.get('version')!r} is not the newest ({newest})")
    text = versions[newest]
    span = article_span(text, g.get("article", ""))
    if span is None:
        return errs + [f"article {g.get('article')!r} not found in {g['doc_id']}"]
    art, from_par = span
    quote = g.get("quote", "")
    q, a = norm(quote), norm(art)
    if not q or q not in norm(text):
        errs.append("quote not in the document text")
    elif q not in a:
        errs.append("quote not inside the cited article")
    elif q not in norm(from_par):
        errs.append("quote does not start in the cited paragraph")
    facts = g.get("answer_facts") or []
    if not facts:
        errs.append("no answer_facts")
    for f in facts:
        if norm(f) not in q and norm(f) not in a:
            errs.append(f"fact {f!r} in neither quote nor article")
    older = [t for v, t in versions.items() if v != newest]
    for f in g.get("superseded_facts") or []:
        if not any(norm(f) in norm(t) for t in older):
            errs.append(f"superseded fact {f!r} not in an older version")
        if norm(f) in q:
            errs.append(f"superseded fact {f!r} is in the current quote")
    return errs


def check_common(row: dict) -> list[str]:
    errs = []
    for key in ("id", "question", "answerable", "gold", "style"):
        if key not in row:
            errs.append(f"missing {key}")
    if not isinstance(row.get("question"), str) or not row.get("question", "").strip():
        errs.append("empty question")
    return errs


def check_dialogue(row: dict, corpus: dict[str, dict[str, str]], dev: dict[str, dict]) -> list[str]:
    errs = check_common(row)
    h = row.get("history")
    if not (isinstance(h, list) and len(h) == 2 and [t.get("role") for t in h] == ["user", "assistant"]
            and all(isinstance(t.get("content"), str) and t["content"].strip() for t in h)):
        return errs + ["history must be [user, assistant] with non-empty content"]
    if strip_markers(h[1]["content"]) != " ".join(h[1]["content"].split()):
        errs.append("assistant turn carries [S#] markers")
    for key in ("full_question", "depends"):
        if not isinstance(row.get(key), str) or not row[key].strip():
            errs.append(f"missing {key}")
    if row.get("reference") not in REFERENCES:
        errs.append(f"reference {row.get('reference')!r} not one of {sorted(REFERENCES)}")
    if row.get("style") != "followup":
        errs.append("style must be followup")
    src = row.get("first_turn_source")
    if src is not None and (src not in dev or norm(dev[src]["question"]) != norm(h[0]["content"])) and not (
            src in dev and dev[src].get("lang") == "en"):
        errs.append(f"first_turn_source {src!r} does not match the first turn")
    if len(row.get("question", "")) >= len(row.get("full_question", "")):
        errs.append("follow-up is not shorter than its full form")
    if row.get("answerable"):
        g = row.get("gold", {})
        shared = longest_shared(norm(row["question"]), norm(g.get("quote", "")))
        if shared > MAX_SHARED:
            errs.append(f"follow-up shares {shared} characters with the quote")
    return errs + check_gold(row, corpus)


def check_full(row: dict, dialogue: dict | None, corpus: dict[str, dict[str, str]]) -> list[str]:
    errs = check_common(row)
    if dialogue is None:
        return errs + ["id not in the dialogue file"]
    if "history" in row:
        errs.append("full question carries a history")
    if row.get("question") != dialogue.get("full_question"):
        errs.append("question differs from the dialogue's full_question")
    if row.get("gold") != dialogue.get("gold") or row.get("answerable") != dialogue.get("answerable"):
        errs.append("gold/answerable differ from the dialogue")
    return errs + check_gold(row, corpus)


def check_english(row: dict, dev: dict[str, dict], corpus: dict[str, dict[str, str]]) -> list[str]:
    errs = check_common(row)
    src = dev.get(row.get("source_id", ""))
    if src is None:
        return errs + [f"source_id {row.get('source_id')!r} not in kolaw-dev"]
    if row.get("id") != f"{src['id']}-en":
        errs.append("id is not source_id + '-en'")
    if src.get("lang") == "en":
        errs.append("source question is already English")
    if row.get("gold") != src["gold"] or row.get("answerable") != src["answerable"]:
        errs.append("gold/answerable differ from the Korean original")
    if row.get("lang") != "en":
        errs.append("lang must be en")
    if _HANGUL.search(row.get("question", "")):
        errs.append("question contains Hangul")
    return errs + check_gold(row, corpus)


def report(name: str, rows: list[dict], results: list[list[str]]) -> int:
    fails = 0
    for row, errs in zip(rows, results):
        print(f"{'OK  ' if not errs else 'FAIL'} {name} {row.get('id')}" + ("" if not errs else ": " + "; ".join(errs)))
        fails += bool(errs)
    return fails


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", type=Path, default=ROOT.parent / "shared/data/kolaw-dev")
    args = ap.parse_args()
    corpus = load_corpus(args.dataset)
    dev = {o["id"]: o for o in read_jsonl(args.dataset / "questions.jsonl")}
    dlg, full, en = read_jsonl(DIALOGUES), read_jsonl(FULL), read_jsonl(ENGLISH)
    by_id = {r["id"]: r for r in dlg}
    fails = 0
    for name, rows, res in (
            ("dialogues", dlg, [check_dialogue(r, corpus, dev) for r in dlg]),
            ("full", full, [check_full(r, by_id.get(r.get("id")), corpus) for r in full]),
            ("en", en, [check_english(r, dev, corpus) for r in en])):
        fails += report(name, rows, res)
    for name, rows in (("dialogues", dlg), ("full", full), ("en", en)):
        ids = [r.get("id") for r in rows]
        if len(set(ids)) != len(ids):
            print(f"FAIL {name}: duplicate ids")
            fails += 1
    if {r["id"] for r in full} != set(by_id):
        print("FAIL full: ids differ from the dialogue file")
        fails += 1
    print()
    for name, rows in (("dialogues", dlg), ("en", en)):
        n_ans = sum(bool(r.get("answerable")) for r in rows)
        laws = Counter(r["gold"].get("doc_id", "-") for r in rows if r.get("answerable"))
        print(f"{name}: {len(rows)} lines, answerable {n_ans}, unanswerable {len(rows) - n_ans}; "
              f"answerable per law {dict(sorted(laws.items()))}")
    refs = Counter((r.get("reference"), bool(r.get("answerable"))) for r in dlg)
    print("dialogues by reference (answerable/unanswerable): " + ", ".join(
        f"{k} {refs[(k, True)]}/{refs[(k, False)]}" for k in sorted(REFERENCES)))
    for name, path in (("dialogues", DIALOGUES), ("full", FULL), ("en", ENGLISH)):
        try:
            data = load_answer_dataset(args.dataset, [path])
            print(f"OK   load_answer_dataset accepts {name}: {len(data.questions)} questions "
                  "(the dataset's own and this file's)")
        except Exception as exc:  # report, never hide, what the loader rejects
            print(f"FAIL load_answer_dataset rejects {name}: {exc}")
            fails += 1
    print(f"\n{'ALL OK' if not fails else f'{fails} FAIL'}")
    return 1 if fails else 0


if __name__ == "__main__":
    raise SystemExit(main())
