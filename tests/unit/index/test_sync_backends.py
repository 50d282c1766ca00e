"""``rag sync`` on every backend: editing, adding and deleting files, then syncing, gives the same
index as a rebuild from the folder; a sync killed between batches is finished by the next one;
a file that stops parsing keeps what the index already had."""
from __future__ import annotations

from pathlib import Path

import pytest

from rag.config import load_config
from rag.documents import files as files_mod
from rag.documents.files import READER_VERSION
from rag.pipeline import Pipeline
from rag.index import sync as sync_mod
from rag.index.sync import plan_sync, sync_folder
from tests.conftest import write_config


def _folder(root: Path) -> Path:
    (root / "hr").mkdir(parents=True)
    (root / "leave.md").write_text("# 휴가 규정\n\n## 연차\n\n연차 휴가는 15일이다.\n\n## 병가\n\n병가는 연 60일까지다.\n",
                                   encoding="utf-8")
    (root / "hr" / "remote.txt").write_text("재택근무는 주 2일까지 신청할 수 있다.\n\n신청은 팀장이 승인한다.\n",
                                            encoding="utf-8")
    (root / "travel.md").write_text("# Travel\n\nThe per diem is 50 dollars a day.\n", encoding="utf-8")
    return root


def _pipeline(target, tmp: Path, folder: Path) -> Pipeline:
    return Pipeline(load_config(write_config(tmp, index=target.index, corpus={"paths": [str(folder)], "format": "auto"})))


def _state(p: Pipeline):
    docs = {k: (r.title, r.uri, r.text_sha256, r.n_chunks, r.metadata) for k, r in p.index.documents.items()}
    every = p.index.chunks() if callable(p.index.chunks) else p.index.chunks  # a method on Milvus, a list locally
    chunks = sorted((c.evidence_id, c.text, c.start_char, c.end_char, c.locator, c.file) for c in every)
    return docs, chunks


def _edit(folder: Path) -> None:
    (folder / "leave.md").write_text("# 휴가 규정\n\n## 연차\n\n연차 휴가는 20일이다.\n", encoding="utf-8")
    (folder / "travel.md").unlink()
    (folder / "hr" / "overtime.txt").write_text("연장근로는 주 12시간을 넘을 수 없다.\n", encoding="utf-8")


def test_sync_after_edits_equals_a_rebuild(target, tmp_path):
    folder = _folder(tmp_path / "docs")
    p = _pipeline(target, tmp_path / "a", folder)
    first = sync_folder(p, folder)
    assert sorted(first.added) == ["hr/remote.txt", "leave.md", "travel.md"] and not first.failed
    again = sync_folder(p, folder)
    assert again.added == again.updated == again.removed == () and len(again.unchanged) == 3
    _edit(folder)
    rep = sync_folder(p, folder)
    assert (rep.added, rep.updated, rep.removed, rep.unchanged) == (
        ("hr/overtime.txt",), ("leave.md",), ("travel.md",), ("hr/remote.txt",))
    rebuilt = _pipeline(target, tmp_path / "b", folder)
    rebuilt.build_index()
    assert _state(p) == _state(rebuilt)
    leave = [c for c in _state(p)[1] if c[5] == "leave.md"]
    assert leave and any("20일" in c[1] for c in leave) and not any("15일" in c[1] for c in leave)


def test_a_killed_sync_is_finished_by_the_next_one(target, tmp_path, monkeypatch):
    folder = _folder(tmp_path / "docs")
    p = _pipeline(target, tmp_path / "a", folder)
    sync_folder(p, folder)
    for i in range(4):
        (folder / f"new{i}.txt").write_text(f"새 규정 {i}: 보고서는 {i + 1}일 안에 낸다.\n", encoding="utf-8")
    monkeypatch.setattr(sync_mod, "BATCH", 2)
    real = p.write
    calls = []

    def dies_on_second_batch(op):
        calls.append(op)
        if len(calls) == 2:
            raise KeyboardInterrupt  # as if killed between two persisted batches
        return real(op)

    with pytest.raises(KeyboardInterrupt):
        sync_folder(p, folder, write=dies_on_second_batch)
    reopened = _pipeline(target, tmp_path / "a", folder)
    plan = plan_sync(reopened, folder)
    assert len(plan.add) == 2 and not plan.update  # the first batch was persisted
    sync_folder(reopened, folder)
    rebuilt = _pipeline(target, tmp_path / "b", folder)
    rebuilt.build_index()
    assert _state(reopened) == _state(rebuilt)


def test_a_file_that_breaks_keeps_its_indexed_version(target, tmp_path):
    folder = _folder(tmp_path / "docs")
    p = _pipeline(target, tmp_path / "a", folder)
    sync_folder(p, folder)
    before = {k: r for k, r in p.index.documents.items() if k[0] == "hr/remote"}
    (folder / "hr" / "remote.txt").write_bytes(b"\x00" * 4096)  # overwritten by garbage
    rep = sync_folder(p, folder)
    assert [(f.file, f.reason) for f in rep.failed] == [("hr/remote.txt", "garbage")]
    assert rep.updated == () and rep.removed == ()
    assert {k: r for k, r in p.index.documents.items() if k[0] == "hr/remote"} == before


def test_files_read_by_another_version_of_the_loaders_are_read_again(target, tmp_path, monkeypatch):
    folder = _folder(tmp_path / "docs")
    p = _pipeline(target, tmp_path / "a", folder)
    sync_folder(p, folder)
    assert {r.meta["reader"] for r in p.index.documents.values()} == {READER_VERSION}
    for module in (sync_mod, files_mod):  # the loaders now write another text
        monkeypatch.setattr(module, "READER_VERSION", READER_VERSION + 1)
    rep = sync_folder(p, folder)
    assert sorted(rep.updated) == ["hr/remote.txt", "leave.md", "travel.md"] and rep.unchanged == ()
    assert len(sync_folder(p, folder).unchanged) == 3
