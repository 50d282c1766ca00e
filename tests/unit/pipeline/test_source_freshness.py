"""An answer says when a cited document's file changed or disappeared after it was indexed
(``AnswerResult.warnings``), in Python, ``rag ask`` and the service; cheaply, and only for cited documents."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rag.cli.main import main
from rag.config import load_config
from rag.pipeline import Pipeline
from rag.pipeline.freshness import FileHashes, source_warnings
from tests.conftest import write_config

Q = "재택근무는 주 며칠까지 신청할 수 있나요?"
REMOTE = "# 재택근무\n\n재택근무는 주 2일까지 신청할 수 있다. 신청은 팀장에게 한다.\n"
TRAVEL = "# 출장비\n\n출장비는 실비로 지급한다. 영수증을 첨부한다.\n"


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "handbook"
    folder.mkdir()
    (folder / "remote.md").write_text(REMOTE, encoding="utf-8")
    (folder / "travel.md").write_text(TRAVEL, encoding="utf-8")
    return folder


def _config(tmp_path: Path, folder: Path) -> Path:
    return write_config(tmp_path, corpus={"paths": [str(folder)], "format": "folder"}, gate={"fallback_threshold": -1.0})


def _touch_later(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000_000))  # a later mtime, whatever the clock


def test_a_changed_or_deleted_source_file_is_a_warning(tmp_path):
    folder = _folder(tmp_path)
    p = Pipeline(load_config(_config(tmp_path, folder)))
    p.build_index()
    res = p.answer(Q)
    assert res.status == "answered" and any(c.document_id == "remote" for c in res.citations)
    assert res.warnings == () and res.to_json()["warnings"] == []
    _touch_later(folder / "remote.md", REMOTE.replace("2일", "3일"))
    res = p.answer(Q)
    assert [(w.code, w.document_id, w.file) for w in res.warnings] == [("source_changed", "remote", "remote.md")]
    assert str(folder) not in json.dumps(res.to_json()["warnings"], ensure_ascii=False)  # names the file only
    (folder / "remote.md").unlink()
    assert [w.code for w in p.answer(Q).warnings] == ["source_missing"]
    (folder / "travel.md").unlink()  # not cited: not checked, not named
    assert all(w.document_id == "remote" for w in p.answer(Q).warnings)


def test_files_are_hashed_once_per_mtime_and_size(tmp_path):
    f = tmp_path / "a.txt"
    f.write_text("one", encoding="utf-8")
    hashes = FileHashes(capacity=2)
    first = hashes.sha256(f)
    assert hashes.sha256(f) == first and hashes.hashed == 1  # unchanged: a stat, no read
    _touch_later(f, "two")
    assert hashes.sha256(f) != first and hashes.hashed == 2
    assert hashes.sha256(tmp_path / "gone.txt") is None
    for name in ("b", "c", "d"):
        (tmp_path / name).write_text(name, encoding="utf-8")
        hashes.sha256(tmp_path / name)
    assert len(hashes._cache) == 2  # bounded


def test_documents_not_read_from_a_folder_are_not_checked():
    class Rec:
        meta = {"folder": "/nowhere/at/all", "file": "x.md", "sha256": "0" * 64}

    class Cite:
        document_id, document_version = "x", "1"

    assert source_warnings([Cite()], {("x", "1"): Rec()}) == ()  # folder not there: index built elsewhere
    assert source_warnings([Cite()], {}) == ()


def test_rag_ask_shows_the_warning(tmp_path, capsys):
    folder = _folder(tmp_path)
    cfg = _config(tmp_path, folder)
    assert main(["index", "--config", str(cfg)]) == 0
    _touch_later(folder / "remote.md", REMOTE.replace("2일", "3일"))
    capsys.readouterr()
    assert main(["ask", Q, "--config", str(cfg)]) == 0
    out = capsys.readouterr().out
    assert "warning: remote.md changed on disk after it was indexed" in out
    assert main(["ask", Q, "--config", str(cfg), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["warnings"][0]["code"] == "source_changed"


def test_the_service_says_so(tmp_path):
    pytest.importorskip("fastapi")
    from tests.unit.serve.conftest import live

    folder = _folder(tmp_path)
    with live(tmp_path / "srv", corpus={"paths": [str(folder)], "format": "folder"},
              gate={"fallback_threshold": -1.0}) as (_, c):
        assert c.post("/v1/answer", json={"question": Q, "trace": False}).json()["warnings"] == []
        _touch_later(folder / "remote.md", REMOTE.replace("2일", "3일"))
        body = c.post("/v1/answer", json={"question": Q, "trace": False}).json()
        assert [w["code"] for w in body["warnings"]] == ["source_changed"]
        assert str(folder) not in json.dumps(body["warnings"], ensure_ascii=False)
        chat = c.post("/v1/chat/completions", json={"model": "rag", "messages": [{"role": "user", "content": Q}]})
        assert chat.json()["rag"]["warnings"][0]["file"] == "remote.md"
