"""Check the demo-dialogues-en set (standard library only).

Run from the repository root:

    python data/dev/demo-dialogues-en/check_set.py

Prints one line per problem and exits with status 1 if there is any; otherwise prints the counts
and exits 0. Files are read from this script's folder, so the working directory does not matter.
"""
from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus.jsonl"
FOLLOW = HERE / "questions.jsonl"
FULL = HERE / "full_questions.jsonl"

REFERENCES = ("pronoun", "ellipsis", "condition", "connective")
ANSWER_IN = ("same_paragraph", "other_paragraph", "other_document")
MARKER = re.compile(r"\[S\d+\]")
ID_FORM = re.compile(r"^edlg-\d{3}$")

problems: list[str] = []


def problem(msg: str) -> None:
    problems.append(msg)


def read_jsonl(path: Path) -> list[dict]:
    if not path.is_file():
        problem(f"{path}: file not found")
        return []
    rows = []
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                o = json.loads(line)
            except json.JSONDecodeError as exc:
                problem(f"{path.name}:{n}: not valid JSON ({exc})")
                continue
            if not isinstance(o, dict):
                problem(f"{path.name}:{n}: not a JSON object")
                continue
            rows.append(o)
    return rows


def version_key(v: str) -> tuple:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"[^0-9A-Za-z]+", v) if p)


def nonempty(x) -> bool:
    return isinstance(x, str) and bool(x.strip())


def check_gold(qid: str, answerable, gold, texts: dict, newest: dict, assistant: str | None) -> None:
    if not isinstance(answerable, bool):
        problem(f"{qid}: 'answerable' must be true or false")
        return
    if not isinstance(gold, dict):
        problem(f"{qid}: 'gold' must be an object")
        return
    if not answerable:
        if not nonempty(gold.get("reason")):
            problem(f"{qid}: unanswerable but gold has no 'reason'")
        extra = set(gold) - {"reason"}
        if extra:
            problem(f"{qid}: unanswerable gold should only hold 'reason', also has {sorted(extra)}")
        return
    doc, ver = gold.get("doc_id"), gold.get("version")
    if (doc, ver) not in texts:
        problem(f"{qid}: gold doc_id/version {doc!r}/{ver!r} is not in corpus.jsonl")
        return
    if newest.get(doc) != ver:
        problem(f"{qid}: gold version {ver!r} of {doc!r} is not its newest version {newest.get(doc)!r}")
    text = texts[(doc, ver)]
    facts = gold.get("answer_facts")
    if not isinstance(facts, list) or not 1 <= len(facts) <= 2 or not all(nonempty(f) for f in facts):
        problem(f"{qid}: answer_facts must be a list of 1-2 non-empty strings, got {facts!r}")
        facts = [f for f in facts or [] if nonempty(f)] if isinstance(facts, list) else []
    quote = gold.get("quote")
    if not nonempty(quote):
        problem(f"{qid}: answerable gold has no quote")
        quote = ""
    elif quote not in text:
        problem(f"{qid}: quote is not a verbatim substring of {doc} {ver}: {quote!r}")
    for f in facts:
        if f not in text:
            problem(f"{qid}: answer fact {f!r} is not a verbatim substring of {doc} {ver}")
        elif quote and f not in quote:
            problem(f"{qid}: answer fact {f!r} is not inside the quote")
        if assistant is not None and f in assistant:
            problem(f"{qid}: answer fact {f!r} already occurs in the history's assistant turn")


def main() -> int:
    corpus = read_jsonl(CORPUS)
    texts: dict[tuple[str, str], str] = {}
    titles: dict[str, str] = {}
    newest: dict[str, str] = {}
    for o in corpus:
        doc, ver = o.get("id"), str(o.get("version"))
        texts[(doc, ver)] = o.get("text", "")
        if doc not in newest or version_key(ver) > version_key(newest[doc]):
            newest[doc] = ver
            titles[doc] = o.get("title", "")
    if corpus and not texts:
        problem("corpus.jsonl: no documents")

    follow = read_jsonl(FOLLOW)
    full = read_jsonl(FULL)

    # ids
    for name, rows in (("questions.jsonl", follow), ("full_questions.jsonl", full)):
        ids = [r.get("id") for r in rows]
        for qid, n in Counter(ids).items():
            if n > 1:
                problem(f"{name}: id {qid!r} used {n} times")
        for qid in ids:
            if not isinstance(qid, str) or not ID_FORM.match(qid):
                problem(f"{name}: id {qid!r} is not of the form edlg-NNN")
    if [r.get("id") for r in follow] != [r.get("id") for r in full]:
        a, b = {r.get("id") for r in follow}, {r.get("id") for r in full}
        if a != b:
            problem(f"ids differ between the two files: only in questions {sorted(a - b, key=str)}, "
                    f"only in full_questions {sorted(b - a, key=str)}")
        else:
            problem("the two files list the same ids in a different order")

    # follow-ups
    by_id = {}
    for r in follow:
        qid = r.get("id", "?")
        by_id[qid] = r
        for key in ("question", "full_question", "depends"):
            if not nonempty(r.get(key)):
                problem(f"{qid}: '{key}' must be a non-empty string")
        if r.get("style") != "followup":
            problem(f"{qid}: style must be 'followup', got {r.get('style')!r}")
        if r.get("reference") not in REFERENCES:
            problem(f"{qid}: reference must be one of {REFERENCES}, got {r.get('reference')!r}")
        if nonempty(r.get("question")) and r.get("question") == r.get("full_question"):
            problem(f"{qid}: the follow-up equals its full form")
        h = r.get("history")
        assistant = None
        if (not isinstance(h, list) or len(h) != 2 or not all(isinstance(t, dict) for t in h)
                or [t.get("role") for t in h] != ["user", "assistant"]):
            problem(f"{qid}: history must be [user, assistant] turns")
        else:
            for t in h:
                if not nonempty(t.get("content")):
                    problem(f"{qid}: empty {t.get('role')} turn in history")
                elif MARKER.search(t["content"]):
                    problem(f"{qid}: [S#] marker in the {t['role']} turn")
            assistant = h[1].get("content") if nonempty(h[1].get("content")) else None
        ftd = r.get("first_turn_doc")
        if ftd not in newest:
            problem(f"{qid}: first_turn_doc {ftd!r} is not in corpus.jsonl")
        elif assistant is not None:
            title = titles[ftd]
            m = re.search(r"\(([^()]*)\)\s*$", title)  # a bilingual title: its English part
            if title not in assistant and not (m and m.group(1) in assistant):
                problem(f"{qid}: the assistant turn does not name {ftd}'s title {title!r}")
        check_gold(qid, r.get("answerable"), r.get("gold"), texts, newest, assistant)
        if r.get("answerable") is True:
            where = r.get("answer_in")
            if where not in ANSWER_IN:
                problem(f"{qid}: answer_in must be one of {ANSWER_IN}, got {where!r}")
            elif isinstance(r.get("gold"), dict):
                other_doc = r["gold"].get("doc_id") != ftd
                if other_doc != (where == "other_document"):
                    problem(f"{qid}: answer_in {where!r} does not fit gold doc {r['gold'].get('doc_id')!r} "
                            f"vs first_turn_doc {ftd!r}")
        elif "answer_in" in r:
            problem(f"{qid}: unanswerable line has answer_in")

    # full questions
    for r in full:
        qid = r.get("id", "?")
        f = by_id.get(qid)
        if "history" in r:
            problem(f"full {qid}: must not have a history")
        if r.get("style") != "full":
            problem(f"full {qid}: style must be 'full', got {r.get('style')!r}")
        if f is None:
            continue
        if r.get("question") != f.get("full_question"):
            problem(f"full {qid}: question differs from the follow-up's full_question")
        if r.get("answerable") != f.get("answerable"):
            problem(f"full {qid}: answerable differs from questions.jsonl")
        if r.get("gold") != f.get("gold"):
            problem(f"full {qid}: gold differs from questions.jsonl")

    if problems:
        for p in problems:
            print("PROBLEM", p)
        print(f"\n{len(problems)} problem(s)")
        return 1

    ans = [r for r in follow if r["answerable"]]
    una = [r for r in follow if not r["answerable"]]
    print(f"dialogues: {len(follow)}; answerable {len(ans)}, unanswerable {len(una)}")
    refs = ", ".join(f"{k} {sum(r['reference'] == k for r in ans)}/{sum(r['reference'] == k for r in una)}"
                     for k in REFERENCES)
    print(f"by reference (answerable/unanswerable): {refs}")
    where = Counter(r["answer_in"] for r in ans)
    print("answer location (answerable): " + ", ".join(f"{k} {where[k]}" for k in ANSWER_IN))
    gold_docs = Counter(r["gold"]["doc_id"] for r in ans)
    print("answerable per gold document: " + ", ".join(f"{k} {v}" for k, v in sorted(gold_docs.items())))
    first = Counter(r["first_turn_doc"] for r in una)
    print("unanswerable per first-turn document: " + ", ".join(f"{k} {v}" for k, v in sorted(first.items())))
    print("ALL OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
