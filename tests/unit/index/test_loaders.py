"""Loaders: JSONL, folders, BEIR; decoding and duplicate checks."""
from __future__ import annotations

import hashlib

import json
import shutil
from pathlib import Path

import pytest

from rag.errors import (
    UnsupportedFileError,
    DatasetError,
    DocumentDecodeError,
    DuplicateDocumentError,
    EmptyCorpusError,
    InputError,
)
from rag.index import (
    check_unique,
    load_beir,
    load_beir_corpus,
    load_documents,
    folder_documents,
    read_corpus,
    load_jsonl_documents,
)
from rag.types import Document

TINY_BEIR = Path(__file__).resolve().parents[2] / "fixtures" / "tiny_beir"


def _write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


# -- JSONL -------------------------------------------------------------------------
def test_jsonl_documents_fields_and_defaults(tmp_path):
    p = _write_jsonl(
        tmp_path / "docs.jsonl",
        [
            {"id": "a", "text": "연차 휴가 규정"},
            {"id": 7, "text": "second", "version": 2, "title": "T", "uri": "http://x/7", "metadata": {"lang": "en", "n": 1}},
            {"_id": "c", "text": ""},
        ],
    )
    docs = load_jsonl_documents(p)
    assert [d.id for d in docs] == ["a", "7", "c"]
    a, b, c = docs
    assert (a.text, a.version, a.title, a.uri, dict(a.metadata)) == ("연차 휴가 규정", "1", "", "docs.jsonl#a", {})
    assert (b.version, b.title, b.uri, dict(b.metadata)) == ("2", "T", "http://x/7", {"lang": "en", "n": 1})
    assert c.version == "1" and c.text == ""
    with pytest.raises(TypeError):
        b.metadata["lang"] = "ko"  # metadata is read-only


def test_jsonl_skips_blank_lines_and_accepts_bom(tmp_path):
    p = tmp_path / "bom.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + '{"id": "a", "text": "x"}\n\n   \n{"id": "b", "text": "y"}\n'.encode())
    assert [d.id for d in load_jsonl_documents(p)] == ["a", "b"]


def test_bad_json_line_reports_path_and_line(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text('{"id": "a", "text": "ok"}\n\n{"id": "b", "text": "ok"}\n{"id": "c", "text": oops}\n', encoding="utf-8")
    with pytest.raises(InputError) as e:
        load_jsonl_documents(p)
    assert f"{p}:4:" in str(e.value)
    assert "not valid JSON" in str(e.value)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('["a", "b"]', "expected a JSON object"),
        ('{"text": "no id"}', "missing or empty 'id'"),
        ('{"id": " ", "text": "blank id"}', "missing or empty 'id'"),
        ('{"id": "a"}', "no string 'text'"),
        ('{"id": "a", "text": 5}', "no string 'text'"),
        ('{"id": "a", "text": "t", "metadata": [1]}', "'metadata' must be an object"),
    ],
)
def test_invalid_jsonl_rows_name_path_and_line(tmp_path, line, message):
    p = tmp_path / "rows.jsonl"
    p.write_text('{"id": "ok", "text": "fine"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(InputError) as e:
        load_jsonl_documents(p)
    assert f"{p}:2:" in str(e.value)
    assert message in str(e.value)


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\x85"])
def test_jsonl_text_with_unicode_line_separator(tmp_path, sep):
    p = _write_jsonl(tmp_path / "u.jsonl", [{"id": "a", "text": f"first{sep}second"}, {"id": "b", "text": "x"}])
    docs = load_jsonl_documents(p)
    assert [d.text for d in docs] == [f"first{sep}second", "x"]


# -- decoding ------------------------------------------------------------------------
def test_cp949_jsonl_raises_decode_error_naming_file(tmp_path):
    p = tmp_path / "korean_cp949.jsonl"
    p.write_bytes(json.dumps({"id": "a", "text": "연차 휴가"}, ensure_ascii=False).encode("cp949") + b"\n")
    with pytest.raises(DocumentDecodeError) as e:
        load_jsonl_documents(p)
    assert str(p) in str(e.value)
    assert "UTF-8" in str(e.value)
    assert isinstance(e.value, InputError)


def test_cp949_txt_in_folder_is_decoded_with_a_warning(tmp_path):
    (tmp_path / "good.txt").write_text("괜찮다", encoding="utf-8")
    bad = tmp_path / "bad.txt"
    bad.write_bytes("한국어 문서는 CP949로 저장되곤 한다".encode("cp949"))
    load = read_corpus(tmp_path, "folder")
    assert {d.id: d.text for d in load.documents}["bad"] == "한국어 문서는 CP949로 저장되곤 한다"
    assert [(w.file, w.code) for w in load.warnings] == [("bad.txt", "encoding_guessed")]
    (d,) = load_documents(bad)
    assert d.text.startswith("한국어 문서")


# -- folder --------------------------------------------------------------------------
def test_folder_loader_reads_documents_recursively_sorted(tmp_path):
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "b.txt").write_text("\n\nsecond doc body", encoding="utf-8")
    (tmp_path / "a.md").write_text("# Heading A\n\nbody of a", encoding="utf-8")
    (tmp_path / "sub" / "c.TXT").write_text("upper-case suffix", encoding="utf-8")
    (tmp_path / "sub" / "deeper" / "d.md").write_text("## 연차 휴가\n내용", encoding="utf-8")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF")  # a PDF with nothing after its magic: reported, not indexed
    (tmp_path / "sub" / "ignored.json").write_text("{}", encoding="utf-8")
    (tmp_path / "dir.txt").mkdir()  # a folder named like a document is skipped

    load = read_corpus(tmp_path, "folder")
    docs = load.documents
    ids = [d.id for d in docs]
    assert ids == ["a", "b", "sub/c", "sub/deeper/d"]  # the relative path without its extension
    by_id = {d.id: d for d in docs}
    assert by_id["a"].title == "Heading A"
    assert by_id["a"].text == "# Heading A\n\nbody of a"
    assert by_id["sub/deeper/d"].title == "연차 휴가"
    assert by_id["b"].text == "second doc body"
    assert by_id["b"].version == hashlib.sha256((tmp_path / "b.txt").read_bytes()).hexdigest()[:16]
    assert by_id["b"].uri == str(tmp_path / "b.txt")
    assert by_id["b"].metadata["file"] == "b.txt" and by_id["sub/c"].metadata["format"] == "text"
    assert [(f.file, f.reason) for f in load.failures] == [("broken.pdf", "corrupt")]
    assert load.ignored == ("sub/ignored.json",)
    assert [d.id for d in folder_documents(tmp_path)] == ids  # the documents alone


def test_folder_loader_reports_an_empty_file(tmp_path):
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    (tmp_path / "ok.txt").write_text("본문", encoding="utf-8")
    load = read_corpus(tmp_path, "folder")
    assert [d.id for d in load.documents] == ["ok"]
    assert [(f.file, f.reason) for f in load.failures] == [("empty.txt", "empty")]


# -- BEIR ----------------------------------------------------------------------------
def test_beir_fixture_loads():
    ds = load_beir(TINY_BEIR, "test")
    assert ds.name == "tiny_beir"
    assert len(ds.corpus) == 12
    assert [d.id for d in ds.corpus] == [f"d{i:02d}" for i in range(1, 13)]
    # only queries that have qrels are loaded (q7 is in queries.jsonl but not in qrels)
    assert sorted(ds.queries) == ["q1", "q2", "q3", "q4", "q5", "q6"]
    assert set(ds.qrels) == set(ds.queries)
    assert ds.qrels["q1"] == {"d01": 2, "d02": 1, "d03": 0}
    assert ds.queries["q2"] == "연차 휴가 이월"
    d02 = next(d for d in ds.corpus if d.id == "d02")
    assert d02.title == "연차 휴가 규정"
    assert d02.text.startswith("연차 휴가 규정\n\n정규직 직원은")  # title and text indexed together
    assert d02.uri == "beir:tiny_beir/d02"


def test_beir_corpus_via_load_documents_auto():
    docs = load_documents(TINY_BEIR)
    assert [d.id for d in docs] == [d.id for d in load_beir_corpus(TINY_BEIR)]


def test_beir_missing_split_lists_splits_present(tmp_path):
    with pytest.raises(DatasetError) as e:
        load_beir(TINY_BEIR, "train")
    assert "qrels/train.tsv" in str(e.value)
    assert "test" in str(e.value)
    root = tmp_path / "ds"
    shutil.copytree(TINY_BEIR, root)
    shutil.copy(root / "qrels" / "test.tsv", root / "qrels" / "dev.tsv")
    with pytest.raises(DatasetError, match=r"\['dev', 'test'\]"):
        load_beir(root, "train")


def test_beir_missing_folder_and_files(tmp_path):
    with pytest.raises(DatasetError, match="not found"):
        load_beir(tmp_path / "nope", "test")
    (tmp_path / "noqrels").mkdir()
    with pytest.raises(DatasetError, match="none"):
        load_beir(tmp_path / "noqrels", "test")
    with pytest.raises(DatasetError, match="corpus.jsonl"):
        load_beir_corpus(tmp_path / "noqrels")


def test_beir_qrels_for_unknown_query_are_dropped_and_header_is_optional(tmp_path):
    root = tmp_path / "ds"
    shutil.copytree(TINY_BEIR, root)
    (root / "qrels" / "test.tsv").write_text("q1\td01\t1\nq99\td02\t1\nq3\td04\t2.0\n", encoding="utf-8")
    ds = load_beir(root, "test")
    assert ds.qrels == {"q1": {"d01": 1}, "q3": {"d04": 2}}
    assert sorted(ds.queries) == ["q1", "q3"]


@pytest.mark.parametrize(("row", "message"), [("q1\td01", "expected"), ("q1\td01\thigh", "not a number")])
def test_beir_bad_qrels_rows(tmp_path, row, message):
    root = tmp_path / "ds"
    shutil.copytree(TINY_BEIR, root)
    qp = root / "qrels" / "test.tsv"
    qp.write_text("query-id\tcorpus-id\tscore\nq1\td01\t1\n" + row + "\n", encoding="utf-8")
    with pytest.raises(DatasetError) as e:
        load_beir(root, "test")
    assert f"{qp}:3:" in str(e.value) and message in str(e.value)


def test_beir_corpus_row_without_id(tmp_path):
    root = tmp_path / "ds"
    root.mkdir()
    _write_jsonl(root / "corpus.jsonl", [{"_id": "x", "text": "a"}, {"title": "t", "text": "b"}])
    with pytest.raises(DatasetError, match=r"corpus.jsonl:2: missing '_id'"):
        load_beir_corpus(root)


# -- load_documents ------------------------------------------------------------------------
def test_load_documents_dispatch(tmp_path):
    j = _write_jsonl(tmp_path / "c.jsonl", [{"id": "x", "text": "t"}])
    assert [d.id for d in load_documents(j)] == ["x"]
    t = tmp_path / "note.md"
    t.write_text("hello", encoding="utf-8")
    (d,) = load_documents(t)
    assert (d.id, d.title, d.text) == ("note", "note", "hello")
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "x.txt").write_text("x", encoding="utf-8")
    assert [d.id for d in load_documents(folder)] == ["x"]
    with pytest.raises(InputError, match="not found"):
        load_documents(tmp_path / "missing.jsonl")
    image = tmp_path / "scan.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    with pytest.raises(UnsupportedFileError, match="scan.png: this is a PNG image"):
        load_documents(image)


# -- check_unique --------------------------------------------------------------------------
def test_check_unique_drops_exact_duplicates_keeping_order():
    a1, b, a1_again = Document("a", "text a"), Document("b", "text b"), Document("a", "text a")
    a2 = Document("a", "text a v2", version="2")
    assert check_unique([a1, b, a1_again, a2]) == [a1, b, a2]


def test_check_unique_same_id_version_different_text_raises():
    with pytest.raises(DuplicateDocumentError) as e:
        check_unique([Document("a", "one"), Document("b", "x"), Document("a", "two")])
    assert "'a'" in str(e.value) and "'1'" in str(e.value)


def test_check_unique_empty_raises():
    with pytest.raises(EmptyCorpusError):
        check_unique([])
