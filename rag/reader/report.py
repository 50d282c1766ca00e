"""Tables of a built folder's counts (``rag reader data show``; docs/reader.md quotes them)."""
from __future__ import annotations

from collections import defaultdict

PASSAGE_COLUMNS = ("answers", "no_answer", "unknown")
SENTENCE_COLUMNS = ("holds_answer", "passage_answers", "no_answer", "unknown")


def count_rows(manifest: dict) -> list[dict]:
    """One row per (source, split, question language, passage language): questions (answerable /
    unanswerable), passage rows by label, sentence rows by label; sorted."""
    rows: dict[tuple, dict] = defaultdict(lambda: defaultdict(int))
    for c in manifest["counts"]:
        key = (c["source"], c["split"], c["question_lang"], c["passage_lang"])
        if c["level"] in ("question", "passage", "sentence"):
            rows[key][f"{c['level']}:{c['label']}"] += c["count"]
    order = {"train": 0, "calib": 1, "eval": 2}
    out = []
    for (source, split, ql, pl), v in sorted(rows.items(), key=lambda kv: (kv[0][0], order.get(kv[0][1], 9), kv[0][2:])):
        out.append({"source": source, "split": split, "question_lang": ql, "passage_lang": pl, **dict(v)})
    return out


def markdown_table(manifest: dict) -> str:
    head = (["source", "split", "q→p", "questions", "unanswerable"] + [f"passages {c}" for c in PASSAGE_COLUMNS]
            + [f"sentences {c}" for c in SENTENCE_COLUMNS])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    totals: dict[str, int] = defaultdict(int)
    for r in count_rows(manifest):
        nums = [r.get("question:answerable", 0) + r.get("question:unanswerable", 0), r.get("question:unanswerable", 0)]
        nums += [r.get(f"passage:{c}", 0) for c in PASSAGE_COLUMNS] + [r.get(f"sentence:{c}", 0) for c in SENTENCE_COLUMNS]
        for h, n in zip(head[3:], nums):
            totals[h] += n
        lines.append("| " + " | ".join([r["source"], r["split"], f"{r['question_lang']}→{r['passage_lang']}"]
                                       + [f"{n:,}" for n in nums]) + " |")
    lines.append("| **all** | | | " + " | ".join(f"**{totals[h]:,}**" for h in head[3:]) + " |")
    return "\n".join(lines)


def split_totals(manifest: dict) -> dict[str, dict[str, int]]:
    """Questions (counted once per language asked) and passage rows per split."""
    out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for c in manifest["counts"]:
        if c["level"] in ("question", "passage"):
            out[c["split"]][c["level"]] += c["count"]
    return {k: dict(v) for k, v in out.items()}
