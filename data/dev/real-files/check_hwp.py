"""How well the HWP and HWPX loaders read real Korean government / regulation files.

    .venv/bin/python data/dev/real-files/check_hwp.py [FOLDER ...] [--json OUT.json] [--limit N]

FOLDER defaults to /work/realfiles (the files are not in git: most are not clearly public-domain;
SOURCES below says where each folder came from and how to get it back). Every ``*.hwp`` and
``*.hwpx`` under a folder is read through :func:`rag.documents.files.read_file` (format
detection, the loader, the plausibility checks) and compared with the text Hangul itself wrote
into the file as its preview:

- HWP: the ``PrvText`` stream (UTF-16LE); HWPX: ``Preview/PrvText.txt``. The preview is the
  first ~1,000 characters of the body as Hangul renders it, table cells as ``<cell>``;
- both sides are normalised the same way: ``<`` ``>`` (the preview's cell marks, and the
  statutes' ``<개정 …>`` marks on both sides), the ``|`` cell separators and ``#`` heading marks
  removed, NFC, and every whitespace character deleted (the preview joins cells with nothing,
  the loader with `` | ``);
- ``ratio``: difflib ``SequenceMatcher`` ratio (autojunk off) of the preview against the same
  number of leading characters of the extraction; ``covered``: the share of preview characters
  found, in order, in the first 1.5 × that many extracted characters (insensitive to text the
  preview leaves out);
- the preview covers only the opening, so the whole text is checked for structure too:
  ``articles`` is the number of ``제N조`` article headings found at the start of a line and
  ``article_gaps`` the numbers missing between the first and the last (statute-shaped files
  number their articles without gaps, ``제N조 삭제`` included, so a gap is lost or misplaced
  text), ``out_of_order`` the articles whose number is lower than the one before (a second
  regulation or an appendix restarting at 제1조 counts too);
- a file fails when ``ratio`` < 0.9, when the loader raised (an empty file whose preview is
  empty too is fine: Hangul saw no text either), or when the text holds control characters.

Prints one line per file and a summary per folder; ``--json`` writes the rows.
"""
from __future__ import annotations

import argparse
import difflib
import io
import json
import re
import time
import unicodedata
import zipfile
from pathlib import Path


from rag.documents.assemble import control_free
from rag.documents.files import read_file
from rag.errors import FileExtractionError

DEFAULT = Path("/work/realfiles")
PASS_RATIO = 0.9
# folder under FOLDER -> (repository, path in it, what the files are, licence status). Get a
# folder back with the `fetch` tool and `git --git-dir=<mirror> show <commit>:<path> > file`.
SOURCES = {
    "hwpxlib": ("neolord0/hwpxlib", "testFile/** (HEAD)",
                "the library's test files: 강남구·울산 남구 입법예고 공고, 공공데이터 제공 표준, 강북구 제안요청서, "
                "문체부 보도자료, and synthetic feature samples",
                "repo Apache-2.0; the 공고 are 저작권법 제7조 public-domain notices, the 보도자료/제안요청서 are "
                "government works of unclear licence (KOGL at best); not committed"),
    "hwplib": ("neolord0/hwplib", "test/error4/** (commit da38fdf4) and sample_hwp/**",
               "국세청 질의회신 (tax rulings: 문서번호 / 제목 / 요지 / 회신 in one table)",
               "repo Apache-2.0; rulings of a government agency, public-domain status not certain; not committed"),
    "duksung": ("kbannie/RAG_DS_Chatbot", "datasets/** (HEAD)",
                "덕성여자대학교 규정집: 249 regulations with 장/조/항/호 structure",
                "a private university's regulations: not public domain, no licence; not committed"),
}

_DROP = re.compile(r"[<>|]|^#{1,6} |\*\*", re.MULTILINE)
_ARTICLE = re.compile(r"^(?:#{1,6} )?제\s*(\d+)\s*조(?!\s*의\s*\d)", re.MULTILINE)


def articles(text: str) -> tuple[int, list[int], int]:
    """Article headings at line starts: how many, the numbers missing between the first and the
    last of the first run, and how many go backwards."""
    nums = [int(m.group(1)) for m in _ARTICLE.finditer(text)]
    back = sum(1 for a, b in zip(nums, nums[1:]) if b < a)
    first_run = nums
    for i, (a, b) in enumerate(zip(nums, nums[1:])):
        if b < a:
            first_run = nums[:i + 1]
            break
    seen = set(first_run)
    gaps = [n for n in range(min(seen), max(seen) + 1) if n not in seen] if seen else []
    return len(nums), gaps, back


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFC", _DROP.sub("", text))
    return "".join(text.split())


def preview(path: Path) -> str:
    """The preview text Hangul stored in the file ('' when there is none)."""
    data = path.read_bytes()
    if data[:4] == b"PK\x03\x04":
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = {n.lower(): n for n in zf.namelist()}
            name = names.get("preview/prvtext.txt")
            return zf.read(name).decode("utf-8", "replace") if name else ""
    import olefile

    with olefile.OleFileIO(io.BytesIO(data)) as ole:
        return ole.openstream("PrvText").read().decode("utf-16le", "replace") if ole.exists("PrvText") else ""


def compare(ref: str, got: str) -> tuple[float, float]:
    if not ref:
        return float("nan"), float("nan")
    head = got[:len(ref)]
    ratio = difflib.SequenceMatcher(None, ref, head, autojunk=False).ratio()
    sm = difflib.SequenceMatcher(None, ref, got[:int(len(ref) * 1.5)], autojunk=False)
    covered = sum(b.size for b in sm.get_matching_blocks()) / len(ref)
    return ratio, covered


def check(path: Path) -> dict:
    row: dict = {"file": str(path), "ext": path.suffix.lower().lstrip(".")}
    try:
        ref = normalise(preview(path))
    except Exception as exc:  # noqa: BLE001 - a file whose preview cannot be read is still checked
        ref, row["preview_error"] = "", f"{type(exc).__name__}: {exc}"
    t0 = time.perf_counter()
    try:
        ex = read_file(path).extracted
    except FileExtractionError as exc:
        row.update(error=f"{type(exc).__name__}({exc.reason})", message=str(exc)[:200],
                   seconds=round(time.perf_counter() - t0, 3), preview_chars=len(ref))
        return row
    row["seconds"] = round(time.perf_counter() - t0, 3)
    ratio, covered = compare(ref, normalise(ex.text))
    kinds = [b.kind for b in ex.blocks]
    n_art, gaps, back = articles(ex.text)
    row.update(format=ex.format, chars=len(ex.text), preview_chars=len(ref), ratio=round(ratio, 4),
               covered=round(covered, 4), paragraphs=kinds.count("paragraph"), headings=kinds.count("heading"),
               table_rows=kinds.count("table_row"), title=ex.title, file_title=ex.metadata.get("file_title", ""),
               warnings=[w.code for w in ex.warnings], control_free=control_free(ex.text),
               replacement_chars=ex.text.count("\ufffd"), articles=n_art, article_gaps=gaps,
               out_of_order=back)
    return row


def failed(row: dict) -> bool:
    if "error" in row:
        return not (row["error"].startswith("EmptyFileError") and row.get("preview_chars") == 0)
    return (row["ratio"] == row["ratio"] and row["ratio"] < PASS_RATIO) or not row["control_free"]


def files_by_folder(top: Path, suffixes: tuple[str, ...], limit: int = 0) -> dict[Path, list[Path]]:
    """The files under ``top`` with one of ``suffixes``, by the folder that holds them (sorted), at most
    ``limit`` per folder (0: all)."""
    groups: dict[Path, list[Path]] = {}
    for p in sorted(top.rglob("*")):
        if p.suffix.lower() in suffixes and p.is_file():
            groups.setdefault(p.parent, []).append(p)
    return {folder: files[:limit] if limit else files for folder, files in groups.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="*", type=Path, default=[DEFAULT])
    ap.add_argument("--json", type=Path)
    ap.add_argument("--limit", type=int, default=0, help="at most N files per folder (0: all)")
    args = ap.parse_args(argv)
    rows: list[dict] = []
    for top in args.folders:
        for folder, files in files_by_folder(top, (".hwp", ".hwpx"), args.limit).items():
            part = [check(p) for p in files]
            for r in part:
                r["folder"] = folder.relative_to(top).as_posix() if folder != top else "."
                flag = "FAIL" if failed(r) else "ok  "
                what = r.get("error") or (f"ratio {r['ratio']:.3f} covered {r['covered']:.3f} chars {r['chars']} "
                                          f"rows {r['table_rows']} art {r['articles']} gaps {r['article_gaps'][:5]} "
                                          f"title {r['title'][:30]!r}")
                print(f"{flag} {Path(r['file']).name[:60]:60s} {what}")
            rows += part
            scored = [r for r in part if "ratio" in r and r["ratio"] == r["ratio"]]
            mean = sum(r["ratio"] for r in scored) / len(scored) if scored else float("nan")
            print(f"== {folder}: {len(part)} files, {sum(map(failed, part))} failed, {len(scored)} with a preview, "
                  f"mean ratio {mean:.4f}, mean covered "
                  f"{(sum(r['covered'] for r in scored) / len(scored)) if scored else float('nan'):.4f}\n")
    if args.json:
        args.json.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    return 1 if any(map(failed, rows)) else 0


if __name__ == "__main__":
    raise SystemExit(main())
