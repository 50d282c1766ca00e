"""HWP 5 and HWPX loaders on the fixtures of tests/fixtures/files/make_hwpx.py (and variants
built in memory with its builders)."""
from __future__ import annotations

import importlib.util
import io
import struct
import zipfile
from pathlib import Path

import pytest

from rag.documents import hwp as hwp_mod
from rag.documents import hwpx as hwpx_mod
from rag.documents.assemble import control_free
from rag.documents.files import read_file
from rag.documents.hwp import HwpLoader, decode_para_text
from rag.documents.hwpx import HwpxLoader
from rag.errors import CorruptFileError, EncryptedFileError

FILES = Path(__file__).resolve().parents[2] / "fixtures" / "files"
_spec = importlib.util.spec_from_file_location("make_hwpx", FILES / "make_hwpx.py")
mk = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mk)

EXPECTED_BLOCKS = [
    ("paragraph", "표본 복무 규정"),
    ("heading", "## 제1장 총칙"),  # a statute's chapter: level 2 whatever the outline level
    ("heading", "##### 제1조 (목적)"),  # an article run into its paragraph: written as statute markdown
    ("paragraph", "이 규정은 표본기관 직원의 복무에 필요한 사항을 정함을 목적으로 한다."),
    ("heading", "##### 제2조 (근무시간)"),
    ("paragraph", "**①** 직원의 근무시간은 1일 8시간으로 한다."),  # a statute's paragraph marks in bold
    ("paragraph", "**②** 점심시간은 낮 12시부터 오후 1시까지로 한다."),
    ("table_row", "구 분 | 근무시간 | 비고"),
    ("table_row", "평일 | 09:00~18:00 | 점심 1시간"),
    ("paragraph", "부칙 이 규정은 공포한 날부터 시행한다."),
    ("paragraph", mk.FOOTNOTE),  # footnotes come after the body
]
# every character the made-up document is written with: anything else is a leaked control
ALPHABET = set("".join(t for _, t in EXPECTED_BLOCKS)) | {"\n"}


def blocks(ex):
    return [(b.kind, ex.text[b.start:b.end]) for b in ex.blocks]


def hwpx(**kw):
    return HwpxLoader().extract(mk.hwpx_bytes(**kw), "t.hwpx")


def hwp(**kw):
    return HwpLoader().extract(mk.hwp_bytes(**kw), "t.hwp")


@pytest.mark.parametrize("load", [hwpx, hwp], ids=["hwpx", "hwp"])
def test_text_blocks_and_tables_come_in_reading_order(load):
    ex = load()
    assert blocks(ex) == EXPECTED_BLOCKS
    assert [b.level for b in ex.blocks if b.kind == "heading"] == [2, 5, 5]
    assert ex.title == mk.TITLE
    assert ex.pages == ()


@pytest.mark.parametrize("load", [hwpx, hwp], ids=["hwpx", "hwp"])
def test_no_control_character_or_control_id_leaks_into_the_text(load):
    ex = load()
    assert control_free(ex.text)
    assert set(ex.text) <= ALPHABET, set(ex.text) - ALPHABET  # e.g. '捤獥' is 'secd' read as text
    assert mk.HEADER_TEXT not in ex.text  # page headers are not body text


def test_committed_fixtures_are_what_the_script_writes():
    for name, build in mk.FIXTURES.items():
        assert (FILES / name).read_bytes() == build(), f"rerun tests/fixtures/files/make_hwpx.py ({name})"


@pytest.mark.parametrize("name,fmt", [("sample_statute.hwpx", "hwpx"), ("sample_statute.hwp", "hwp")])
def test_read_file_detects_and_reads_the_committed_fixtures(name, fmt):
    ex = read_file(FILES / name).extracted
    assert ex.format == fmt and blocks(ex) == EXPECTED_BLOCKS


def test_the_2016_namespaces_read_like_the_2011_ones():
    assert hwpx(ns="2016").text == hwpx().text


def test_hwpx_metadata_and_a_stale_title():
    assert hwpx().metadata["author"] == "표본기관"
    stale = hwpx(title="기성회규약")  # a template's leftover title that the text never mentions
    assert stale.title == mk.TITLE and stale.metadata["file_title"] == "기성회규약"
    assert hwpx(title="").title == mk.TITLE  # no declared title: the first paragraph


def test_hwp_title_from_the_summary_information_and_a_stale_one():
    assert hwp(title="표본 복무 규정").title == mk.TITLE
    stale = hwp(title="대학원 통합학칙(안)")
    assert stale.title == mk.TITLE and stale.metadata["file_title"] == "대학원 통합학칙(안)"
    assert hwp().metadata["hwp_version"] == "5.0.3.0"


def test_uncompressed_hwp_reads_the_same():
    assert hwp(flags=0).text == hwp().text


def test_encrypted_hwpx_is_refused():
    with pytest.raises(EncryptedFileError, match="password-protected"):
        HwpxLoader().extract((FILES / "sample_statute_encrypted.hwpx").read_bytes(), "e.hwpx")


@pytest.mark.parametrize("flags,match", [
    (0x1 | 0x4, "distribution"), (0x1 | 0x10, "DRM"), (0x1 | 0x400, "DRM"), (0x1 | 0x2, "password"),
    (0x1 | 0x100, "password"),
])
def test_protected_hwp_is_refused_with_what_to_do(flags, match):
    with pytest.raises(EncryptedFileError, match=match) as err:
        hwp(flags=flags)
    assert "t.hwp" in str(err.value) and err.value.file == "t.hwp"


def test_distribution_fixture_says_how_to_get_a_readable_copy():
    with pytest.raises(EncryptedFileError, match="save it as a normal HWP, HWPX or PDF"):
        read_file(FILES / "sample_statute_distribution.hwp")


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for n, b in members.items():
            zf.writestr(n, b)
    return buf.getvalue()


@pytest.mark.parametrize("data", [
    mk.hwpx_bytes()[:1500],  # truncated archive
    b"PK\x03\x04" + b"\0" * 100,
    _zip({"mimetype": b"application/hwp+zip", "Contents/section0.xml": b"<hs:sec><hp:p>"}),  # broken XML
    _zip({"mimetype": b"application/hwp+zip"}),  # no section at all
    mk.hwpx_bytes(extra={"Contents/section0.xml": '<?xml version="1.0"?><!DOCTYPE s [<!ENTITY a "aaaa">]>'
                                                  "<sec>&a;</sec>"}),
], ids=["truncated", "not-a-zip", "broken-xml", "no-section", "dtd"])
def test_corrupt_hwpx_raises_corrupt_file_error(data):
    with pytest.raises(CorruptFileError) as err:
        HwpxLoader().extract(data, "bad.hwpx")
    assert "bad.hwpx" in str(err.value)


def test_hwpx_zip_bomb_guard(monkeypatch):
    monkeypatch.setattr(hwpx_mod, "MAX_UNCOMPRESSED", 1000)
    with pytest.raises(CorruptFileError, match="unpacks to"):
        hwpx()


def _with_stream(path: tuple[str, ...], data: bytes, flags: int = 0x1) -> bytes:
    """An HWP file whose stream ``path`` is replaced by ``data`` (written as is)."""
    good = mk.hwp_bytes(flags=flags)
    import olefile

    ole = olefile.OleFileIO(io.BytesIO(good))
    streams = {tuple(p): ole.openstream(p).read() for p in ole.listdir()}
    streams[path] = data
    return mk.compound_file(streams)


@pytest.mark.parametrize("data", [
    mk.hwp_bytes()[:1024],  # truncated compound file
    b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\xff" * 600,
    _with_stream(("BodyText", "Section0"), b"\x00garbage that is not deflate\xff" * 10),  # bad compression
    _with_stream(("BodyText", "Section0"), struct.pack("<I", 0x42 | 200 << 20) + b"x" * 10, flags=0),  # record past end
    _with_stream(("FileHeader",), b"Not an HWP header".ljust(256, b"\0")),
], ids=["truncated", "garbage-ole", "bad-deflate", "record-past-end", "bad-signature"])
def test_corrupt_hwp_raises_corrupt_file_error(data):
    with pytest.raises(CorruptFileError) as err:
        HwpLoader().extract(data, "bad.hwp")
    assert "bad.hwp" in str(err.value)


def test_hwp_inflate_guard(monkeypatch):
    monkeypatch.setattr(hwp_mod, "MAX_UNCOMPRESSED", 300)
    with pytest.raises(CorruptFileError, match="inflates to more than"):
        hwp()


def test_para_text_controls_become_the_right_characters_or_nothing():
    text = ("가" + mk.inline_ctrl(9) + "나" + chr(10) + "다" + chr(24) + chr(30) + chr(31) + chr(0)
            + mk.ext_ctrl(11, b"tbl ") + "라" + mk.inline_ctrl(4) + mk.ext_ctrl(17, b"fn  ") + "\r")
    segments, ids = decode_para_text(text.encode("utf-16le"))
    assert ids == [b"tbl ", b"fn  "]
    assert segments == ["가\t나\n다-\u00a0 ", "라", ""]


def test_table_cells_are_placed_by_their_address():
    cells = [(1, 1, "d"), (0, 1, "b"), (1, 0, "c"), (0, 0, "a")]  # (row, col, text) in stored order
    assert hwp_mod._grid(cells, 2, 2) == [["a", "b"], ["c", "d"]]
    # addresses that do not fit the table: stored order, ncols to a row
    assert hwp_mod._grid([(9, 9, "x"), (9, 9, "y"), (9, 9, "z")], 2, 2) == [["x", "y"], ["z"]]


def test_a_table_inside_a_cell_is_flattened_into_the_cell():
    inner = ('<hp:tbl><hp:tr>' + mk._cell("안쪽1", 0, 0) + mk._cell("안쪽2", 1, 0) + "</hp:tr></hp:tbl>")
    section = mk.section_xml().replace("<hp:t>평일</hp:t>", "<hp:t>평일</hp:t>" + inner.replace(
        "<hp:tbl>", '</hp:run><hp:run charPrIDRef="0"><hp:tbl>'), 1)
    ex = HwpxLoader().extract(mk.hwpx_bytes(extra={"Contents/section0.xml": section}), "n.hwpx")
    assert "평일 안쪽1 안쪽2 | 09:00~18:00 | 점심 1시간" in ex.text
    assert [w.code for w in ex.warnings] == ["table_flattened"]
