"""Write ``rag-manifest.yaml`` into each rendered format folder (pdf/, docx/, html/, hwpx/) so the
files carry kolaw-dev's ids, versions, titles and URIs (two versions of one decree are two files of
one id). Files are named ``<id>_<version>.<ext>`` by the render scripts.

    python data/dev/kolaw-files/write_manifests.py [--shared ../shared/data/kolaw-dev]
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=str(HERE.parents[2].parent / "shared" / "data" / "kolaw-dev"))
    args = ap.parse_args()
    docs = [json.loads(line) for line in open(Path(args.shared) / "corpus.jsonl", encoding="utf-8") if line.strip()]
    for fmt in ("pdf", "docx", "html", "hwpx"):
        folder = HERE / fmt
        if not folder.is_dir():
            continue
        files = {}
        for d in docs:
            name = f"{d['id']}_{d['version']}.{fmt}"
            if (folder / name).is_file():
                files[name] = {"id": d["id"], "version": d["version"], "title": d["title"], "uri": d["uri"]}
        text = "# Written by write_manifests.py: kolaw-dev's ids and versions for the rendered files.\n"
        text += yaml.safe_dump({"files": files}, allow_unicode=True, sort_keys=True)
        (folder / "rag-manifest.yaml").write_text(text, encoding="utf-8")
        print(f"{folder.relative_to(HERE)}: {len(files)} files")


if __name__ == "__main__":
    main()
