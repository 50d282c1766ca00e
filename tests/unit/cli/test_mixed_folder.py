"""A folder of the files users keep (md, txt, pdf, docx, html, hwp, hwpx), one encrypted PDF, one
file of random bytes and a PDF with a scanned page: `rag index` takes every good file, reports the
bad ones (exit 3, and the JSON report), and `rag ask` cites the file, the page and the article."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from rag.cli.main import main

from tests.conftest import write_config

FILES = Path(__file__).resolve().parents[2] / "fixtures" / "files"
GOOD = ("statute_3p.pdf", "scanned_middle.pdf", "structured.docx", "page.html", "sample_statute.hwp",
        "sample_statute.hwpx", "statute.txt", "front_matter.md")
BAD = {"encrypted.pdf": "encrypted", "random.txt": "garbage"}


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in (*GOOD, *BAD):
        shutil.copy(FILES / name, folder / name)
    return write_config(tmp_path, corpus={"paths": [str(folder)], "format": "folder"},
                        gate={"fallback_threshold": -1.0})  # hashing embedder: let the questions through


def test_a_mixed_folder_indexes_the_good_files_and_reports_the_bad(tmp_path, capsys):
    cfg = _folder(tmp_path)
    assert main(["index", "--config", str(cfg)]) == 3
    out, err = capsys.readouterr()
    assert f"indexed {len(GOOD)} documents" in out and "2 files failed" in out
    for name, reason in BAD.items():
        assert f"failed  {name}: [{reason}]" in err
    assert "scanned_middle.pdf p. 2: [scanned_page]" in err

    report = json.loads((tmp_path / ".rag" / "files-report.json").read_text(encoding="utf-8"))
    failed = {Path(f["file"]).name: f["reason"] for f in report["failed"]}
    assert failed == BAD
    assert any(Path(w["file"]).name == "scanned_middle.pdf" and w["page"] == 2 for w in report["warnings"])

    assert main(["ask", "측정 결과 기록은 몇 년 동안 보존해야 하나요?", "--config", str(cfg), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["status"] == "answered" and "3년" in res["answer"]
    cite = res["citations"][0]
    assert (Path(cite["file"]).name, cite["page"], cite["locator"]) == ("statute_3p.pdf", 1, "제3조제1항")
    assert cite["where"] == "statute_3p.pdf p. 1 · 제3조제1항"

    assert main(["ask", "직원의 근무시간은 1일 몇 시간인가요?", "--config", str(cfg)]) == 0
    out = capsys.readouterr().out
    assert "1일 8시간" in out
    assert "sample_statute.hwp · 제2조제1항" in out or "sample_statute.hwpx · 제2조제1항" in out
