"""The comparisons of ``rag bench run file-fidelity`` and ``rag bench run real-files`` on small literal
inputs, the mirror of the kolaw-files renderers' page furniture, and the options / SKIP rules."""
from __future__ import annotations

import importlib.util
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

from rag.bench import file_fidelity as ff
from rag.bench import real_files as rf
from rag.bench import rendered_laws as rendered
from rag.bench.errors import BenchOptionError
from rag.bench.registry import get, missing_inputs, parse_options

from tests.conftest import ROOT

RENDERERS = ROOT / "data" / "dev" / "kolaw-files"


def load_renderers(monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, ModuleType]:
    """render_docx_html and render_hwpx, loaded from their files (render_hwpx imports the other by its
    bare name, so it is registered in sys.modules for the test's duration)."""
    mods = []
    for name in ("render_docx_html", "render_hwpx"):
        spec = importlib.util.spec_from_file_location(name, RENDERERS / f"{name}.py")
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, name, mod)
        spec.loader.exec_module(mod)
        mods.append(mod)
    return mods[0], mods[1]


# --------------------------------------------------------------------------- normalisation and ratio
def test_collapse_and_unmarked_drop_our_marks_and_whitespace():
    assert ff.collapse("  a \n\n b\tc ") == "a b c"
    assert ff.unmarked("# 제1조\n**①** 목적  \n본문 # 아님") == "제1조 ① 목적 본문 # 아님"
    compat = "\uf9d1"  # a CJK compatibility ideograph; NFC makes it the unified one
    assert ff.unmarked(compat) == compat
    assert ff.unmarked(compat, nfc=True) == "\u516d"


def test_ratio_is_difflibs_and_one_for_equal_text():
    assert ff.ratio("", "") == 1.0
    assert ff.ratio("abcd", "abcd") == 1.0
    assert ff.ratio("abcd", "abce") == 0.75
    assert ff.ratio("abcd", "wxyz") == 0.0


def test_pdf_shown_and_plain_remove_marks_escapes_and_compose():
    shown = ff.pdf_shown("# 법\n\n##### 제1조\n**①** 1\\. 항목 \uf9d1")
    assert ff.collapse(shown) == "법 제1조 ① 1. 항목 \u516d"
    assert ff.pdf_plain("# 법\n##### 제1조\n**①** 본문") == "법\n제1조\n① 본문"


# --------------------------------------------------------------------------- words, headers and footers
def test_word_errors_count_a_glued_and_a_split_word():
    src = "정근수당 가산금을 받은 교육공무원등의 수당".split()
    ext = "정근수당가산금을 받은 교육공무원 등의 수당".split()
    got = ff.word_errors(src, ext)
    assert (got["glued"], got["split"], got["other_tokens"]) == (1, 1, 0)
    assert got["examples"] == ["'정근수당 가산금을' -> '정근수당가산금을'", "'교육공무원등의' -> '교육공무원 등의'"]


def test_word_errors_other_tokens_are_not_glued_and_equal_text_is_clean():
    assert ff.word_errors(["a", "b"], ["a", "b"]) == {"glued": 0, "split": 0, "other_tokens": 0, "examples": []}
    got = ff.word_errors(["a", "b", "c"], ["a", "x", "c", "|"])
    assert (got["glued"], got["split"], got["other_tokens"]) == (0, 0, 2)
    assert got["examples"] == ["replace: 'b' -> 'x'", "insert: '' -> '|'"]


def test_word_errors_keep_at_most_twelve_examples():
    src, ext = [], []
    for i in range(20):  # a glued pair between words that agree
        src += [f"w{i}", f"v{i}", f"same{i}"]
        ext += [f"w{i}v{i}", f"same{i}"]
    got = ff.word_errors(src, ext)
    assert got["glued"] == 20 and len(got["examples"]) == ff.EXAMPLES


def test_header_footer_left_counts_titles_and_page_numbers_beyond_the_source():
    title = "공무원 여비 규정"
    src = "공무원 여비 규정 제1조 목적 제2조 정의"
    assert ff.header_footer_left(src, src, title) == 0
    assert ff.header_footer_left(src, "공무원 여비 규정 제1조 목적 - 1 - 공무원 여비 규정 제2조 정의 - 2 -", title) == 3
    assert ff.header_footer_left("금액 - 3 - 원", "금액 - 3 - 원", title) == 0  # in the source too
    assert ff.header_footer_left("", "1-2-3 제-1-조", title) == 0  # not a page number


def test_heading_levels_and_chunk_articles():
    assert ff.heading_levels("# 법\n본문\n##### 제1조 (목적)\n#######x\n## 제2장") == [1, 5, 2]

    @dataclass
    class C:
        locator: str

    chunks = [C("제1조"), C("제1조제2항"), C("제8조의2제2항"), C("부칙"), C("제8조의2"), C("제9조")]
    assert ff.chunk_articles(chunks) == ["제1조", "제8조의2", "제9조"]


# --------------------------------------------------------------------------- what the renderers show
SOURCE = """# 시험법

##### 제1조 (목적)

**①** 이 법은 \\*시험\\*을 위한다.
1\\. 첫째

<img src="x.png" alt="표">
┌───┬───┐
│ 구분 │ 금액 │
│      │      │
│ 갑   │ 10 │
└───┴───┘
</img>"""


def test_visible_and_shown_text_of_a_small_law():
    assert rendered.visible_text(SOURCE).splitlines()[:5] == [
        "# 시험법", "", "##### 제1조 (목적)", "", "① 이 법은 *시험*을 위한다."]
    shown = rendered.shown_text(SOURCE)
    assert shown.endswith("구분 | 금액\n갑 | 10")
    assert rendered.source_table_rows(SOURCE) == 2
    assert rendered.hwpx_boilerplate({"title": "시험법", "version": "2026-01-02"})[:2] == (
        "시험법 [시행 2026. 1. 2.]", "[시행 2026. 1. 2.]")


def test_the_renderers_read_the_laws_with_the_measurements_functions(monkeypatch):
    docx_html, hwpx = load_renderers(monkeypatch)
    assert rendered.boilerplate_html() == docx_html.BOILERPLATE_HTML and len(docx_html.BOILERPLATE_HTML) == 20
    assert rendered.boilerplate_docx() == docx_html.BOILERPLATE_DOCX
    doc = {"id": "시험법", "version": "2026-01-02", "title": "시험법", "text": SOURCE}
    assert rendered.hwpx_boilerplate(doc) == hwpx.boilerplate(doc)
    for name in ("blocks", "inline_runs", "file_stem"):  # one definition, not a copy to keep in step
        assert getattr(docx_html, name) is getattr(rendered, name)
    assert hwpx.shown_text is rendered.shown_text and hwpx.grid_rows is rendered.grid_rows


# --------------------------------------------------------------------------- options and SKIP
def test_file_fidelity_options_and_missing_inputs(tmp_path):
    m = get("file-fidelity")
    assert m is ff.MEASUREMENT and get("real-files") is rf.MEASUREMENT
    o, out = parse_options(m, ["--formats", "pdf", "hwpx", "--runs", "1", "--data", str(tmp_path)])
    assert (o.formats, o.runs, out) == (("pdf", "hwpx"), 1, None)
    assert any("corpus.jsonl not found" in s for s in missing_inputs(m, o))
    with pytest.raises(BenchOptionError, match="unknown format"):
        parse_options(m, ["--formats", "odt"])
    with pytest.raises(BenchOptionError, match="at least 1"):
        parse_options(m, ["--runs", "0"])


def test_real_files_is_skipped_without_its_folder(tmp_path):
    m = get("real-files")
    o, _ = parse_options(m, ["--files", str(tmp_path / "absent")])
    assert len(missing := missing_inputs(m, o)) == 1 and "SOURCES" in missing[0]
    o, _ = parse_options(m, ["--files", str(tmp_path), "--formats", "hwp", "docx"])
    assert missing_inputs(m, o) == []


# --------------------------------------------------------------------------- real files
def test_squeezed_deletes_whitespace_marks_and_preview_cells():
    assert rf.squeezed("# 제1조 (목적)\n**①** a | b\n<개정 2020. 1. 1.>") == "제1조(목적)①ab<개정2020.1.1.>"
    assert rf.squeezed("<표><셀> a\r\n", preview=True) == "표셀a"


def test_articles_count_gaps_and_going_backwards():
    text = "제1조(목적)\n제2조 정의\n본문 제9조 인용\n##### 제4조\n제5조의2(특례)\n제1조(부칙)"
    assert rf.articles(text) == (4, [3], 1)
    assert rf.articles("본문뿐") == (0, [], 0)


def test_compare_preview_ratio_and_coverage():
    assert rf.compare_preview("가나다라", "가나다라마바") == (1.0, 1.0)
    r, covered = rf.compare_preview("가나다라", "가다라마")
    assert r == 0.75 and covered == 0.75
    assert all(math.isnan(x) for x in rf.compare_preview("", "가나"))


def test_repeating_edge_lines_are_dropped_from_the_reference():
    names = ("갑", "을", "병", "정")
    pages = [f"법제처 {n + 1} 국가법령정보센터\n{names[n]} 첫 줄\n가운데\n가운데\n가운데\n{names[n]} 끝 줄\n"
             f"[전문개정 2008. 6. 13.]\n- {n + 1} -" for n in range(4)]
    rep = rf.repeating(pages)
    assert {"법제처0국가법령정보센터", "-0-", "[전문개정0.0.0.]", "가운데"} == rep
    clean, dropped = rf.without_repeating(pages[0], rep)
    assert clean == "갑 첫 줄\n가운데\n가운데\n갑 끝 줄" and dropped == 4  # the body's 가운데 kept
    assert rf.repeating(pages[:2]) == set()  # too few pages to tell


def test_aligned_matches_groups_of_the_reference():
    parts = ["가" * 10, "나" * 10]
    assert rf.aligned(parts, "가" * 10 + "나" * 10) == (20, 20, 20)
    m, a, b = rf.aligned(parts, "가" * 10)
    assert (m, a, b) == (10, 20, 10)


def test_failed_rules():
    ok = {"ext": "hwp", "ratio": 0.95, "control_free": True}
    assert not rf.failed(ok)
    assert rf.failed({**ok, "ratio": 0.85})  # under PASS_RATIO
    assert not rf.failed({**ok, "ratio": float("nan")})  # no preview: nothing to fail on
    assert rf.failed({**ok, "control_free": False})
    assert not rf.failed({"ext": "hwp", "error": "EmptyFileError(empty)", "preview_chars": 0})
    assert rf.failed({"ext": "hwp", "error": "EmptyFileError(empty)", "preview_chars": 619})
    assert rf.failed({"ext": "pdf", "error": "EmptyFileError(empty)", "preview_chars": 0})
    assert rf.failed({"ext": "pdf", "ratio": 0.99, "ratio_clean": 0.85, "control_free": True})
    assert not rf.failed({"ext": "pdf", "ratio": 0.85, "ratio_clean": 0.95, "control_free": True})


def test_real_files_reads_a_docx_against_its_xml(tmp_path):
    docx = pytest.importorskip("docx")
    folder = tmp_path / "docx" / "one"
    folder.mkdir(parents=True)
    d = docx.Document()
    d.add_heading("제1조(목적)", 1)
    d.add_paragraph("이 규정은 시험을 위한 것이다.")
    d.save(str(folder / "a.docx"))
    out = rf.run(rf.Options(files=str(tmp_path), formats=("docx",)))
    (row,) = out.metrics["files"]
    assert (row["folder"], row["ratio"], row["covered"], row["headings"]) == ("docx/one", 1.0, 1.0, 1)
    assert out.metrics["summary"]["docx/one"]["failed"] == 0
    assert Path(row["file"]).name == "a.docx"
