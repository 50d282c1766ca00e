"""A corpus that gives no document says where it looked, for which formats, and what it passed
over (issue 42): ``rag index`` and ``rag sync`` on such a folder, and a JSONL file with no line."""
from __future__ import annotations

from pathlib import Path

import pytest

from rag.cli.main import main
from rag.config import load_config
from rag.errors import EmptyCorpusError, InputError
from rag.index.loaders import check_corpus, folder_formats, read_corpus
from rag.pipeline import Pipeline
from rag.index.sync import sync_folder
from tests.conftest import write_config


def _no_documents(root: Path) -> Path:
    """A folder with files, none of them a document: a spreadsheet, an image, a 0-byte PDF."""
    (root / "sub").mkdir(parents=True)
    (root / "budget.xlsx").write_bytes(b"PK\x03\x04not really")
    (root / "sub" / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (root / "scan.pdf").write_bytes(b"")
    return root


def test_a_folder_without_documents_names_the_folder_the_formats_and_the_skipped_files(tmp_path):
    folder = _no_documents(tmp_path / "docs")
    cfg = write_config(tmp_path, corpus={"paths": [str(folder)], "format": "folder"})
    with pytest.raises(EmptyCorpusError) as e:
        Pipeline(load_config(cfg)).load_corpus()
    msg = str(e.value)
    assert isinstance(e.value, InputError)
    assert str(folder) in msg and e.value.paths == (str(folder),)
    assert "PDF (.pdf)" in msg and "DOCX (.docx)" in msg and "Markdown (.md" in msg and "HWP (.hwp)" in msg
    assert e.value.formats == folder_formats()
    assert "2 file(s) skipped" in msg and "budget.xlsx" in msg and "sub/photo.png" in msg
    assert "1 file(s) could not be read (scan.pdf: empty)" in msg
    assert (e.value.skipped, e.value.failed) == (2, 1)
    assert "corpus.paths" in msg  # what to do


def test_an_empty_folder_and_an_empty_jsonl_file(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(EmptyCorpusError, match="holds no such file") as e:
        check_corpus(read_corpus(tmp_path / "empty", "folder"))
    assert str(tmp_path / "empty") in str(e.value) and (e.value.skipped, e.value.failed) == (0, 0)
    (tmp_path / "docs.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(EmptyCorpusError, match=r"docs\.jsonl: looked for JSONL \(one JSON object a line"):
        check_corpus(read_corpus(tmp_path / "docs.jsonl", "jsonl"))


def test_rag_index_prints_it(tmp_path, capsys):
    folder = _no_documents(tmp_path / "docs")
    cfg = write_config(tmp_path, corpus={"paths": [str(folder)], "format": "folder"})
    assert main(["index", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert f"error: no documents to index in {folder}: looked for PDF (.pdf)" in err and "2 file(s) skipped" in err


def test_a_first_sync_of_a_folder_without_documents_names_it(tmp_path):
    folder = _no_documents(tmp_path / "docs")
    p = Pipeline(load_config(write_config(tmp_path)))
    with pytest.raises(EmptyCorpusError) as e:
        sync_folder(p, folder)
    assert e.value.paths == (str(folder),) and (e.value.skipped, e.value.failed) == (2, 1)
    assert "looked for PDF (.pdf)" in str(e.value)
    for f in list(folder.rglob("*")):  # nothing at all, or only files the manifest excludes
        if f.is_file():
            f.unlink()
    (folder / "a.md").write_text("# A\n\nsome text\n", encoding="utf-8")
    (folder / "rag-manifest.yaml").write_text("files:\n  a.md: {exclude: true}\n", encoding="utf-8")
    with pytest.raises(EmptyCorpusError, match=r"1 file\(s\) skipped as another format or excluded by the manifest \(a\.md\)"):
        sync_folder(p, folder)
