"""``rag sync`` reports its progress (issue 42): each stage (check, read, embed, write) goes to the
``progress(stage, done, total)`` callback, and the CLI draws it with ``progress_bars()`` on stderr."""
from __future__ import annotations

from pathlib import Path

from rag.cli.main import main
from rag.config import load_config
from rag.pipeline import Pipeline
from rag.index import sync as sync_mod
from rag.index.sync import sync_folder
from tests.conftest import write_config


def _folder(root: Path) -> Path:
    (root / "hr").mkdir(parents=True)
    (root / "leave.md").write_text("# 휴가 규정\n\n연차 휴가는 15일이다.\n", encoding="utf-8")
    (root / "hr" / "remote.txt").write_text("재택근무는 주 2일까지 신청할 수 있다.\n", encoding="utf-8")
    (root / "travel.md").write_text("# Travel\n\nThe per diem is 50 dollars a day.\n", encoding="utf-8")
    return root


def _recorder():
    calls: list[tuple[str, int, int]] = []
    return calls, lambda stage, done, total: calls.append((stage, done, total))


def test_a_first_sync_reports_checking_reading_and_embedding(tmp_path):
    folder = _folder(tmp_path / "docs")
    p = Pipeline(load_config(write_config(tmp_path)))
    calls, progress = _recorder()
    rep = sync_folder(p, folder, progress=progress)
    assert len(rep.added) == 3
    assert [c for c in calls if c[0] == "check"] == [("check", 1, 3), ("check", 2, 3), ("check", 3, 3)]
    assert [c for c in calls if c[0] == "read"] == [("read", 1, 3), ("read", 2, 3), ("read", 3, 3)]
    embedded = [c for c in calls if c[0] == "embed"]  # increments, total not known ahead
    assert embedded and sum(n for _, n, _ in embedded) == len(p.index) and {t for *_, t in embedded} == {0}


def test_an_update_reports_its_writes_in_batches(tmp_path, monkeypatch):
    folder = _folder(tmp_path / "docs")
    p = Pipeline(load_config(write_config(tmp_path)))
    sync_folder(p, folder)
    for i in range(3):
        (folder / f"new{i}.txt").write_text(f"새 규정 {i}: 보고서는 {i + 1}일 안에 낸다.\n", encoding="utf-8")
    monkeypatch.setattr(sync_mod, "BATCH", 2)
    calls, progress = _recorder()
    rep = sync_folder(p, folder, progress=progress)
    assert sorted(rep.added) == ["new0.txt", "new1.txt", "new2.txt"] and len(rep.unchanged) == 3
    assert [c for c in calls if c[0] == "check"][-1] == ("check", 6, 6)
    assert [c for c in calls if c[0] == "read"][-1] == ("read", 3, 3)
    assert [c for c in calls if c[0] == "write"] == [("write", 2, 3), ("write", 3, 3)]
    assert sum(n for s, n, _ in calls if s == "embed") == rep.chunks_embedded > 0


def test_rag_sync_draws_the_stages(tmp_path, monkeypatch, capsys):
    import rag.cli.common as common

    folder = _folder(tmp_path / "docs")
    calls, progress = _recorder()
    closed = []

    class Bar:
        def close(self) -> None:
            closed.append(self)

    monkeypatch.setattr(common, "progress_bars", lambda: (progress, {"check": Bar(), "read": Bar()}))
    assert main(["sync", str(folder), "--config", str(write_config(tmp_path))]) == 0
    assert {c[0] for c in calls} == {"check", "read", "embed"} and len(closed) == 2
    assert "synced" in capsys.readouterr().out
