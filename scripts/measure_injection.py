"""False positives of the injection signals on real corpora: how many documents of each JSONL
corpus (``title`` + ``text``) would be quarantined, with the first few matches.

    python scripts/measure_injection.py data/demo/documents.jsonl ../shared/data/scifact/corpus.jsonl
"""
from __future__ import annotations

import argparse
from pathlib import Path

from rag._io import read_jsonl
from rag.context.sanitize import injection_signals


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpora", nargs="+", type=Path, help="JSONL files with title/text per line")
    ap.add_argument("--show", type=int, default=3, help="matches to print per corpus")
    a = ap.parse_args()
    print(f"{'corpus':<50} {'documents':>10} {'flagged':>8}")
    for path in a.corpora:
        n, flagged, shown = 0, 0, []
        for _, d in read_jsonl(path):
            n += 1
            signals = injection_signals(f"{d.get('title', '')} {d.get('text', '')}".strip())
            if signals:
                flagged += 1
                if len(shown) < a.show:
                    shown.append(f"    {d.get('id', d.get('_id', '?'))}: {signals[0].kind} {signals[0].excerpt!r}")
        print(f"{str(path):<50} {n:>10} {flagged:>8}")
        for line in shown:
            print(line)


if __name__ == "__main__":
    main()
