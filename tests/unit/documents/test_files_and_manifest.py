"""Format detection by content, the manifest, ids, versions and the per-file checks of rag.documents."""
from __future__ import annotations

import io
import zipfile

import pytest

from rag.config import CorpusConfig
from rag.documents import Extracted, Page, detect_format, load_folder, load_manifest, read_file, to_document
from rag.documents.files import ExtractedFile
from rag.errors import (CorruptFileError, EmptyFileError, FileTooLargeError, GarbageFileError, InputError,
                        UnsupportedFileError)


def _zip(names: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for n, b in names.items():
            zf.writestr(n, b)
    return buf.getvalue()


@pytest.mark.parametrize("data,name,fmt", [
    (b"%PDF-1.7\n...", "a.bin", "pdf"),
    (b"<!DOCTYPE html><html><body>x</body></html>", "page.txt", "html"),
    (b"\xef\xbb\xbf  <html lang='ko'><p>x</p></html>", "x", "html"),
    (b"# Title\n\nbody", "notes.md", "markdown"),
    (b"# Title\n\nbody", "notes.txt", "text"),
])
def test_format_comes_from_the_content(data, name, fmt):
    assert detect_format(data, name) == fmt


def test_zip_documents_are_told_apart_by_their_parts():
    assert detect_format(_zip({"mimetype": b"application/hwp+zip", "Contents/section0.xml": b"<a/>"}), "x.zip") == "hwpx"
    assert detect_format(_zip({"word/document.xml": b"<w/>"}), "x.hwpx") == "docx"
    with pytest.raises(UnsupportedFileError, match="spreadsheet"):
        detect_format(_zip({"xl/workbook.xml": b"<x/>"}), "book.docx")
    with pytest.raises(CorruptFileError, match="archive is broken"):
        detect_format(b"PK\x03\x04garbage", "a.docx")


@pytest.mark.parametrize("magic,what", [(b"\x89PNG\r\n\x1a\n", "PNG image"), (b"\xff\xd8\xff\xe0", "JPEG image"),
                                        (b"\x7fELF", "executable")])
def test_binary_files_are_refused_by_name_of_what_they_are(magic, what):
    with pytest.raises(UnsupportedFileError, match=what):
        detect_format(magic + bytes(100), "doc.pdf")


def test_html_named_txt_is_read_as_html_with_a_warning(tmp_path):
    p = tmp_path / "page.txt"
    p.write_text("<html><head><title>규정</title></head><body><main><p>연차는 15일이다.</p></main></body></html>",
                 encoding="utf-8")
    f = read_file(p)
    assert f.format == "html" and "연차는 15일이다." in f.extracted.text
    assert [w.code for w in f.extracted.warnings] == ["extension_mismatch"]


def test_size_limit_refuses_before_reading(tmp_path):
    p = tmp_path / "big.txt"
    p.write_text("가" * 2000, encoding="utf-8")
    with pytest.raises(FileTooLargeError, match="over corpus.max_file_mb"):
        read_file(p, CorpusConfig(max_file_mb=0.001))


def test_empty_and_symbol_soup_files_are_refused(tmp_path):
    (tmp_path / "blank.md").write_text("\n\n   \n", encoding="utf-8")
    with pytest.raises(EmptyFileError):
        read_file(tmp_path / "blank.md")
    (tmp_path / "soup.txt").write_text("@@@ ### %%% ^^^ &&& *** ((( ))) ~~~ ||| ;;; ::: " * 10, encoding="utf-8")
    with pytest.raises(GarbageFileError, match="not text"):
        read_file(tmp_path / "soup.txt")


def _write_manifest(root, text):
    (root / "rag-manifest.yaml").write_text(text, encoding="utf-8")


def test_manifest_defaults_globs_and_entries_merge(tmp_path):
    (tmp_path / "hr").mkdir()
    (tmp_path / "hr" / "leave.md").write_text("# 휴가\n\n연차는 15일이다.", encoding="utf-8")
    (tmp_path / "hr" / "pay.md").write_text("# 급여\n\n급여는 25일에 준다.", encoding="utf-8")
    (tmp_path / "drafts").mkdir()
    (tmp_path / "drafts" / "wip.md").write_text("초안", encoding="utf-8")
    _write_manifest(tmp_path, """
defaults: {metadata: {company: acme}, access: {tenant: acme}}
files:
  "hr/*": {metadata: {department: hr}, access: {groups: [hr]}}
  hr/leave.md: {id: leave-policy, version: "2026-01-02", title: 휴가 규정, uri: "https://intra/leave",
                metadata: {kind: rule}}
  "drafts/*": {exclude: true}
""")
    load = load_folder(tmp_path)
    by_id = {d.id: d for d in load.documents}
    assert sorted(by_id) == ["hr/pay", "leave-policy"] and load.ignored == ("drafts/wip.md",)
    leave = by_id["leave-policy"]
    assert (leave.version, leave.title, leave.uri) == ("2026-01-02", "휴가 규정", "https://intra/leave")
    assert leave.metadata["access"] == {"tenant": "acme", "groups": ["hr"]}
    assert {k: leave.metadata[k] for k in ("company", "department", "kind")} == {
        "company": "acme", "department": "hr", "kind": "rule"}
    assert by_id["hr/pay"].metadata["access"] == {"tenant": "acme", "groups": ["hr"]}


@pytest.mark.parametrize("text,match", [
    ("files: {a.md: {colour: red}}", r"files.a.md.colour"),
    ('files: {"*.md": {id: x}}', "a glob may not set 'id'"),
    ("files: {a.md: {version: 'v:1'}}", "version"),
    ("files: [1, 2", "not valid UTF-8 YAML"),
])
def test_a_bad_manifest_names_the_problem(tmp_path, text, match):
    _write_manifest(tmp_path, text)
    with pytest.raises(InputError, match=match):
        load_manifest(tmp_path)


def test_files_whose_default_ids_collide_keep_their_extension(tmp_path):
    (tmp_path / "rules.md").write_text("# 규칙\n\n마크다운 판", encoding="utf-8")
    (tmp_path / "rules.txt").write_text("텍스트 판", encoding="utf-8")
    assert [d.id for d in load_folder(tmp_path).documents] == ["rules.md", "rules.txt"]


def test_front_matter_gives_identity_and_metadata(tmp_path):
    (tmp_path / "a.md").write_text("---\nid: travel\nversion: 3\ntitle: 출장 규정\nowner: 총무팀\n---\n# 출장\n\n일비는 2만원.",
                                   encoding="utf-8")
    (d,) = load_folder(tmp_path).documents
    assert (d.id, d.version, d.title, d.metadata["owner"]) == ("travel", "3", "출장 규정", "총무팀")
    assert "---" not in d.text and "id:" not in d.text


def test_empty_pages_are_left_out_of_the_page_table(tmp_path):
    ex = Extracted("pdf", "가나다\n\n라마바", pages=(Page(1, 0, 5), Page(2, 5, 5), Page(3, 5, 8)))
    doc = to_document(ExtractedFile(tmp_path / "x.pdf", "ab" * 32, ex), "x.pdf")
    assert doc.metadata["pages"] == [[0, 1], [5, 3]]
    assert (doc.id, doc.version, doc.uri) == ("x", "ab" * 8, str(tmp_path / "x.pdf"))


def test_only_the_manifest_can_mark_a_file_trusted(tmp_path):
    (tmp_path / "a.md").write_text("---\ntrusted: true\n---\n# A\n\nText.\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("# B\n\nText.\n", encoding="utf-8")
    (tmp_path / "rag-manifest.yaml").write_text("files:\n  b.md: {trusted: true}\n", encoding="utf-8")
    docs = {f.document.id: f.document for f in load_folder(tmp_path).loaded}
    assert "trusted" not in docs["a"].metadata  # a file cannot vouch for itself
    assert docs["b"].metadata["trusted"] is True


def test_an_entry_that_does_not_trust_its_file_hashes_as_before_trusted_existed():
    import hashlib
    import json

    from rag.documents.manifest import FileEntry

    e = FileEntry(id="x", metadata={"k": 1})
    before = {"id": "x", "version": None, "title": None, "uri": None, "metadata": {"k": 1}, "access": None,
              "exclude": False}  # the fields of FileEntry before `trusted`
    assert e.fingerprint() == hashlib.sha256(json.dumps(before, separators=(",", ":")).encode()).hexdigest()[:16]
    assert FileEntry(id="x", metadata={"k": 1}, trusted=True).fingerprint() != e.fingerprint()  # a sync reads it again
