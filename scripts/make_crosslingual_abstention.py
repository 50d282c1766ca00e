"""Turn a NoMIRACL-style set into a cross-lingual one: each question replaced by the same query in
another language, the passages kept. MS MARCO ko is a translation of MS MARCO en with the same
query ids, so English questions over the Korean passages of ``.rag/data/msmarco_ko_abstention.jsonl``
(built by ``scripts/make_msmarco_abstention.py`` from queries never trained on) measure the gate on
English questions about Korean documents::

    python scripts/make_crosslingual_abstention.py --set .rag/data/msmarco_ko_abstention.jsonl \\
        --queries ../shared/data/msmarco/en/queries.jsonl --out .rag/data/msmarco_en2ko_abstention.jsonl
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rag._io import read_jsonl


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", required=True, help="NoMIRACL-style JSONL with query_id")
    ap.add_argument("--queries", required=True, help="BEIR queries.jsonl of the other language (same ids)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    text = {o["_id"]: o["text"] for _, o in read_jsonl(Path(args.queries))}
    rows = [o for _, o in read_jsonl(Path(args.set))]
    missing = [o["query_id"] for o in rows if o["query_id"] not in text]
    if missing:
        print(f"error: {len(missing)} query ids of {args.set} are not in {args.queries} (first: {missing[0]})",
              file=sys.stderr)
        return 2
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as fh:
        for o in rows:
            fh.write(json.dumps(dict(o, question=text[o["query_id"]]), ensure_ascii=False) + "\n")
    print(f"wrote {out}: {len(rows)} questions, {sum(o['answerable'] for o in rows)} answerable")
    return 0


if __name__ == "__main__":
    sys.exit(main())
