"""Reading users' files: parsing throughput per format, and ``rag sync`` of one changed file in a
large folder.

1. **Parsing**: every file under ``--files`` (default ``data/dev/kolaw-files``: kolaw-dev rendered
   as PDF, DOCX, HTML and HWPX), each read ``--repeats`` times with :func:`rag.documents.read_file`
   (detection, the format's loader, the checks); per format the median over repeats of pages per
   second (files without pages count as one page), files per second and characters per second.
2. **Sync**: a folder of ``--sync-files`` Markdown files (one kolaw-dev article each, a bundled
   sample when the corpus is absent) is synced into a fresh index with the configured embedder;
   then one file is edited and synced again, then synced once more with nothing changed; beside
   them a full rebuild of the same folder. Times are medians over ``--repeats`` edits.
"""
from __future__ import annotations

import re
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from rag.bench.harness import ROOT, data_dir, read_jsonl, repo_path
from rag.bench.measurement import Measurement, Outcome
from rag.lang.ko import samples as ko_samples


@dataclass(frozen=True)
class Options:
    files: str = field(default="data/dev/kolaw-files", metadata={"help": "folder of files, one subfolder per format"})
    repeats: int = 3
    sync_files: int = 1000
    config: str = "configs/default.yaml"


def _parse(o: Options) -> dict[str, dict[str, float]]:
    from rag.documents import read_file
    from rag.documents.folder import candidate_files

    root = repo_path(o.files)
    names, _ = candidate_files(root)
    by_fmt: dict[str, list[tuple[float, int, int]]] = {}
    for rel in names:
        times = []
        for _ in range(o.repeats):
            t0 = time.perf_counter()
            f = read_file(root / rel, name=rel)
            times.append(time.perf_counter() - t0)
        by_fmt.setdefault(f.format, []).append((statistics.median(times), max(1, len(f.extracted.pages)),
                                                len(f.extracted.text)))
    out = {}
    for fmt, rows in sorted(by_fmt.items()):
        secs = sum(r[0] for r in rows)
        out[fmt] = {"files": len(rows), "pages": sum(r[1] for r in rows), "chars": sum(r[2] for r in rows),
                    "seconds": round(secs, 4), "pages_per_s": round(sum(r[1] for r in rows) / secs, 2),
                    "files_per_s": round(len(rows) / secs, 2), "chars_per_s": round(sum(r[2] for r in rows) / secs)}
    return out


def _articles(n: int) -> list[str]:
    corpus = data_dir() / "kolaw-dev" / "corpus.jsonl"
    texts = [d["text"] for d in read_jsonl(corpus)] if corpus.is_file() else []
    arts = [a.strip() for t in texts for a in re.split(ko_samples.ARTICLE_SPLIT, t)
            if ko_samples.ARTICLE_WORD in a and len(a) > 80]
    if not arts:
        arts = [ko_samples.SAMPLE_ARTICLE.format(i=i, days=i % 30 + 1) for i in range(1, 200)]
    return [arts[i % len(arts)] + (ko_samples.COPY_NOTE.format(n=i // len(arts)) if i >= len(arts) else "")
            for i in range(n)]


def _sync(o: Options) -> dict[str, float]:
    from rag.config import load_config
    from rag.pipeline import Pipeline
    from rag.index.sync import sync_folder

    with tempfile.TemporaryDirectory(prefix="rag-bench-sync-") as tmp:
        folder = Path(tmp) / "files"
        folder.mkdir()
        for i, text in enumerate(_articles(o.sync_files)):
            (folder / f"{i:04d}.md").write_text(text + "\n", encoding="utf-8")
        cfg = load_config(repo_path(o.config)).with_overrides({
            "corpus.paths": [str(folder)], "corpus.format": "folder", "index.path": str(Path(tmp) / "index"),
            "embedding.cache_dir": str(Path(tmp) / "cache")})
        p = Pipeline(cfg)
        t0 = time.perf_counter()
        sync_folder(p, folder)
        first = time.perf_counter() - t0
        one, none = [], []
        for k in range(o.repeats):
            target = folder / f"{(k * 37) % o.sync_files:04d}.md"
            target.write_text(target.read_text(encoding="utf-8") + ko_samples.EDIT_NOTE.format(k=k, days=k + 10),
                              encoding="utf-8")
            t0 = time.perf_counter()
            rep = sync_folder(p, folder)
            one.append(time.perf_counter() - t0)
            if rep.updated != (target.name,):
                raise RuntimeError(f"sync after editing {target.name} did not update just it: {rep.summary()}")
            t0 = time.perf_counter()
            sync_folder(p, folder)
            none.append(time.perf_counter() - t0)
        rebuild_cfg = cfg.with_overrides({"index.path": str(Path(tmp) / "rebuilt"),
                                          "embedding.cache_dir": str(Path(tmp) / "cache2")})
        t0 = time.perf_counter()
        Pipeline(rebuild_cfg).build_index()
        rebuild = time.perf_counter() - t0
    return {"files": o.sync_files, "first_sync_s": round(first, 2), "one_changed_s": round(statistics.median(one), 3),
            "nothing_changed_s": round(statistics.median(none), 3), "rebuild_s": round(rebuild, 2),
            "rebuild_over_one_changed": round(rebuild / statistics.median(one), 1)}


def run(o: Options) -> Outcome:
    parse = _parse(o)
    sync = _sync(o)
    lines = [f"parsing ({o.files}, median of {o.repeats} reads per file)",
             f"{'format':<9}{'files':>6}{'pages':>7}{'pages/s':>10}{'files/s':>9}{'chars/s':>11}"]
    lines += [f"{fmt:<9}{r['files']:>6}{r['pages']:>7}{r['pages_per_s']:>10.1f}{r['files_per_s']:>9.1f}"
              f"{r['chars_per_s']:>11,}" for fmt, r in parse.items()]
    lines += ["", f"sync of a {sync['files']}-file folder ({o.config}, median of {o.repeats})",
              f"  first sync (everything new)  {sync['first_sync_s']:>8.2f} s",
              f"  one file changed             {sync['one_changed_s']:>8.3f} s",
              f"  nothing changed              {sync['nothing_changed_s']:>8.3f} s",
              f"  full rebuild                 {sync['rebuild_s']:>8.2f} s  "
              f"({sync['rebuild_over_one_changed']}x the one-file sync)"]
    return Outcome({"parse": parse, "sync": sync}, "\n".join(lines))


def _requires(o: Options) -> list[str]:
    return [] if repo_path(o.files).is_dir() else [f"{o.files} not found (the rendered kolaw files, under {ROOT})"]


MEASUREMENT = Measurement("documents", "file parsing throughput per format, and rag sync of one changed file "
                          "in a 1,000-file folder", Options, run, _requires)
