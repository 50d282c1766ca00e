"""Render every kolaw-dev law as one HWPX file, laid out the way Hangul saves one (development
files for :mod:`rag.documents.hwpx`).

    .venv/bin/python data/dev/kolaw-files/render_hwpx.py

Reads ../shared/data/kolaw-dev/corpus.jsonl (markdown: ``#`` title, ``##`` 장, ``#####`` 조) and
writes ``hwpx/<id>_<version>.hwpx`` next to this script. Each file is an OWPML package built with
the standard library's zipfile:

- ``mimetype`` first and stored (``application/hwp+zip``), then ``version.xml``,
  ``Contents/header.xml``, ``BinData/image1.png``, ``Contents/section0.xml``,
  ``Preview/PrvText.txt``, ``settings.xml``, ``META-INF/container.rdf``, ``Contents/content.hpf``
  (OPF manifest, spine and the law's title in the metadata), ``META-INF/container.xml`` and
  ``META-INF/manifest.xml``, in the order Hangul writes them;
- ``header.xml``: font faces, border fills, character and paragraph shapes, an outline numbering
  whose level heads are empty (the statute headings carry their own numbers), and Hangul's default
  style list (바탕글, 본문, 개요 1 … 7, 쪽 번호, 머리말, 각주, 미주, 메모, 차례 제목, 차례 1 … 3, 캡션);
- ``section0.xml``: the title and every ``##`` … ``#####`` heading (편/장/절/조) as a paragraph in
  the outline style of its markdown level (``개요 1`` for ``#``, ``개요 5`` for ``#####``), each
  article paragraph (``①`` …) one 본문 paragraph (the ``①`` in a bold run), each statute item
  (``1.``, ``가.``, ``1)``) its own 바탕글 paragraph with a hanging indent, amendment notes
  (``<개정 2020. 1. 1.>``) as text. The first paragraph holds the section properties and a
  running header (the title and ``[시행 …]``) and footer (``법제처 - <page number> -
  국가법령정보센터``, the page number an ``autoNum`` control) that a loader must skip;
- the source's ``<img>`` formula blocks: the image as an ``hp:pic`` (with Hangul's "그림입니다"
  shape comment, which is not body text) followed by the box-drawing text as lines in a fixed
  pitch font, except a box that is a grid (``┬`` in its rules), which becomes an ``hp:tbl`` with
  one row per text row (the blank spacer rows dropped). The corpus has no markdown pipe tables.

Markdown markup is stripped (``**①**`` → ``①``, ``1\\.`` → ``1.``, no ``#``), as a Hangul file has
none. :func:`shown_text` is what a reader of the file sees (headings as ``#`` lines, a grid box
as ``cell | cell`` rows); ``rag bench run file-fidelity`` compares the loader's output with it
(through its mirror :mod:`rag.bench.rendered_laws`; a test checks that both agree). The output
is deterministic: fixed ZIP timestamps (the law's version date) and metadata dates.
"""
from __future__ import annotations

import io
import json
import re
import struct
import sys
import zipfile
import zlib
from pathlib import Path
from xml.sax.saxutils import escape


from render_docx_html import load_corpus

from rag.bench.rendered_laws import blocks, file_stem, grid_rows, inline_runs, korean_date, shown_text
from rag.bench.rendered_laws import plain_line as plain

HERE = Path(__file__).resolve().parent

NS = {
    "ha": "http://www.hancom.co.kr/hwpml/2011/app", "hp": "http://www.hancom.co.kr/hwpml/2011/paragraph",
    "hp10": "http://www.hancom.co.kr/hwpml/2016/paragraph", "hs": "http://www.hancom.co.kr/hwpml/2011/section",
    "hc": "http://www.hancom.co.kr/hwpml/2011/core", "hh": "http://www.hancom.co.kr/hwpml/2011/head",
    "hhs": "http://www.hancom.co.kr/hwpml/2011/history", "hm": "http://www.hancom.co.kr/hwpml/2011/master-page",
    "hpf": "http://www.hancom.co.kr/schema/2011/hpf", "dc": "http://purl.org/dc/elements/1.1/",
    "opf": "http://www.idpf.org/2007/opf/", "ooxmlchart": "http://www.hancom.co.kr/hwpml/2016/ooxmlchart",
    "hwpunitchar": "http://www.hancom.co.kr/hwpml/2016/HwpUnitChar",
    "epub": "http://www.idpf.org/2007/ops", "config": "urn:oasis:names:tc:opendocument:xmlns:config:1.0",
}
XMLNS = " ".join(f'xmlns:{k}="{v}"' for k, v in NS.items())
DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes" ?>'

# Page furniture (furniture.json, read by rag.bench.rendered_laws too): in the header/footer controls
# only, never in what a loader extracts. None of these strings occurs in any law text.
_FURNITURE = json.loads((Path(__file__).resolve().parent / "furniture.json").read_text(encoding="utf-8"))["hwpx"]
FOOTER_LEFT, FOOTER_RIGHT = _FURNITURE["footer_left"], _FURNITURE["footer_right"]
PICTURE_COMMENT = _FURNITURE["picture_comment"]


def header_line(doc: dict) -> str:
    return f"{doc['title']} [{_FURNITURE['in_force']} {korean_date(doc['version'])}]"


def boilerplate(doc: dict) -> tuple[str, ...]:
    """Strings of the running header/footer and the picture comment (must not be extracted)."""
    return (header_line(doc), f"[{_FURNITURE['in_force']} {korean_date(doc['version'])}]", FOOTER_LEFT, FOOTER_RIGHT,
            PICTURE_COMMENT)


# ----------------------------------------------------------------------------- what is shown

_ITEM_STYLES = ((re.compile(r"^\d+(?:의\d+)?\.\s"), 1), (re.compile(r"^[가-힣]\.\s"), 2),
                (re.compile(r"^\d+\)\s"), 3))


def item_level(line: str) -> int:
    """1 for ``1.``/``1의2.``, 2 for ``가.``, 3 for ``1)``, 0 for any other line."""
    return next((lvl for rx, lvl in _ITEM_STYLES if rx.match(line)), 0)


# ----------------------------------------------------------------------------- header.xml

FONTS = ("함초롬바탕", "함초롬돋움", "굴림체")
# charPr ids: 0 body, 1 body bold, 2 title, 3 heading, 4 fixed pitch, 5 header/footer
CHAR_SHAPES = ((1000, 0, False, "#000000"), (1000, 0, True, "#000000"), (1600, 1, True, "#000000"),
               (1100, 1, True, "#000000"), (900, 2, False, "#000000"), (900, 1, False, "#666666"))
# paraPr ids: 0 바탕글, 1 본문, 2..8 개요 1..7, 9..11 items, 12 fixed pitch, 13 header/footer, 14 title
BODY, OUTLINE0, ITEM0, FIXED, FURNITURE, TITLE_PARA = 1, 2, 8, 12, 13, 14
LANGS = ("HANGUL", "LATIN", "HANJA", "JAPANESE", "OTHER", "SYMBOL", "USER")
STYLES = (("바탕글", "Normal", "PARA", 0, 0), ("본문", "Body", "PARA", 1, 0),
          *((f"개요 {n}", f"Outline {n}", "PARA", OUTLINE0 + n - 1, 0) for n in range(1, 8)),
          ("쪽 번호", "Page Number", "CHAR", 0, 0), ("머리말", "Header", "PARA", FURNITURE, 5),
          ("각주", "Footnote", "PARA", 0, 0), ("미주", "Endnote", "PARA", 0, 0), ("메모", "Memo", "PARA", 0, 0),
          ("차례 제목", "TOC Heading", "PARA", 0, 3), ("차례 1", "TOC 1", "PARA", 0, 0),
          ("차례 2", "TOC 2", "PARA", 0, 0), ("차례 3", "TOC 3", "PARA", 0, 0), ("캡션", "Caption", "PARA", 0, 0))
STYLE_NORMAL, STYLE_BODY, STYLE_OUTLINE0, STYLE_HEADER = 0, 1, 2, 10


def _per_lang(name: str, value: object) -> str:
    keys = ("hangul", "latin", "hanja", "japanese", "other", "symbol", "user")
    return f"<hh:{name} " + " ".join(f'{k}="{value}"' for k in keys) + "/>"


def _char_pr(i: int, height: int, font: int, bold: bool, color: str) -> str:
    return (f'<hh:charPr id="{i}" height="{height}" textColor="{color}" shadeColor="none" useFontSpace="0" '
            f'useKerning="0" symMark="NONE" borderFillIDRef="2">{_per_lang("fontRef", font)}'
            f'{_per_lang("ratio", 100)}{_per_lang("spacing", 0)}{_per_lang("relSz", 100)}{_per_lang("offset", 0)}'
            + ("<hh:bold/>" if bold else "") +
            '<hh:underline type="NONE" shape="SOLID" color="#000000"/><hh:strikeout shape="NONE" color="#000000"/>'
            '<hh:outline type="NONE"/><hh:shadow type="NONE" color="#B2B2B2" offsetX="10" offsetY="10"/></hh:charPr>')


def _para_pr(i: int, align: str = "JUSTIFY", outline: int = -1, left: int = 0, indent: int = 0,
             spacing: int = 160, prev: int = 0, keep_next: bool = False) -> str:
    heading = (f'<hh:heading type="OUTLINE" idRef="1" level="{outline}"/>' if outline >= 0
               else '<hh:heading type="NONE" idRef="0" level="0"/>')
    return (f'<hh:paraPr id="{i}" tabPrIDRef="0" condense="0" fontLineHeight="0" snapToGrid="1" '
            f'suppressLineNumbers="0" checked="0"><hh:align horizontal="{align}" vertical="BASELINE"/>{heading}'
            '<hh:breakSetting breakLatinWord="KEEP_WORD" breakNonLatinWord="KEEP_WORD" widowOrphan="0" '
            f'keepWithNext="{int(keep_next)}" keepLines="0" pageBreakBefore="0" lineWrap="BREAK"/>'
            '<hh:autoSpacing eAsianEng="0" eAsianNum="0"/><hh:margin>'
            f'<hc:intent value="{indent}" unit="HWPUNIT"/><hc:left value="{left}" unit="HWPUNIT"/>'
            f'<hc:right value="0" unit="HWPUNIT"/><hc:prev value="{prev}" unit="HWPUNIT"/>'
            '<hc:next value="0" unit="HWPUNIT"/></hh:margin>'
            f'<hh:lineSpacing type="PERCENT" value="{spacing}" unit="HWPUNIT"/>'
            '<hh:border borderFillIDRef="2" offsetLeft="0" offsetRight="0" offsetTop="0" offsetBottom="0" '
            'connect="0" ignoreMargin="0"/></hh:paraPr>')


def _border_fill(i: int, line: str) -> str:
    sides = "".join(f'<hh:{s}Border type="{line}" width="0.12 mm" color="#000000"/>'
                    for s in ("left", "right", "top", "bottom"))
    return (f'<hh:borderFill id="{i}" threeD="0" shadow="0" centerLine="NONE" breakCellSeparateLine="0">'
            '<hh:slash type="NONE" Crooked="0" isCounter="0"/><hh:backSlash type="NONE" Crooked="0" isCounter="0"/>'
            f'{sides}<hh:diagonal type="SOLID" width="0.1 mm" color="#000000"/></hh:borderFill>')


def header_xml() -> str:
    faces = "".join(
        f'<hh:fontface lang="{lang}" fontCnt="{len(FONTS)}">' + "".join(
            f'<hh:font id="{i}" face="{f}" type="TTF" isEmbedded="0"><hh:typeInfo familyType="FCAT_GOTHIC" '
            'weight="6" proportion="0" contrast="0" strokeVariation="1" armStyle="1" letterform="1" midline="1" '
            'xHeight="1"/></hh:font>' for i, f in enumerate(FONTS)) + "</hh:fontface>" for lang in LANGS)
    chars = "".join(_char_pr(i, h, f, b, c) for i, (h, f, b, c) in enumerate(CHAR_SHAPES))
    paras = [_para_pr(0), _para_pr(1, indent=-1310, left=0)]
    paras += [_para_pr(OUTLINE0 + n, "LEFT", outline=n, left=0, prev=600 if n < 4 else 400, keep_next=True)
              for n in range(7)]
    paras += [_para_pr(ITEM0 + k, left=1000 * k, indent=-1310 - 200 * k) for k in (1, 2, 3)]
    paras += [_para_pr(FIXED, "LEFT", spacing=100), _para_pr(FURNITURE, "RIGHT", spacing=100),
              _para_pr(TITLE_PARA, "CENTER", outline=0, prev=0, keep_next=True)]
    heads = "".join(f'<hh:paraHead start="1" level="{n}" align="LEFT" useInstWidth="1" autoIndent="1" '
                    'widthAdjust="0" textOffsetType="PERCENT" textOffset="50" numFormat="DIGIT" '
                    'charPrIDRef="4294967295" checkable="0"/>' for n in range(1, 8))
    styles = "".join(f'<hh:style id="{i}" type="{t}" name="{n}" engName="{e}" paraPrIDRef="{p}" '
                     f'charPrIDRef="{c}" nextStyleIDRef="{i if t == "PARA" else 0}" langID="1042" lockForm="0"/>'
                     for i, (n, e, t, p, c) in enumerate(STYLES))
    return (f'{DECL}<hh:head {XMLNS} version="1.4" secCnt="1"><hh:beginNum page="1" footnote="1" endnote="1" '
            'pic="1" tbl="1" equation="1"/><hh:refList>'
            f'<hh:fontfaces itemCnt="{len(LANGS)}">{faces}</hh:fontfaces>'
            f'<hh:borderFills itemCnt="3">{_border_fill(1, "NONE")}{_border_fill(2, "NONE")}'
            f'{_border_fill(3, "SOLID")}</hh:borderFills>'
            f'<hh:charProperties itemCnt="{len(CHAR_SHAPES)}">{chars}</hh:charProperties>'
            '<hh:tabProperties itemCnt="1"><hh:tabPr id="0" autoTabLeft="0" autoTabRight="0"/></hh:tabProperties>'
            f'<hh:numberings itemCnt="1"><hh:numbering id="1" start="0">{heads}</hh:numbering></hh:numberings>'
            f'<hh:paraProperties itemCnt="{len(paras)}">{"".join(paras)}</hh:paraProperties>'
            f'<hh:styles itemCnt="{len(STYLES)}">{styles}</hh:styles></hh:refList>'
            '<hh:compatibleDocument targetProgram="HWP201X"><hh:layoutCompatibility/></hh:compatibleDocument>'
            '<hh:docOption><hh:linkinfo path="" pageInherit="0" footnoteInherit="0"/></hh:docOption>'
            '<hh:trackchageConfig flags="56"/></hh:head>')


# ----------------------------------------------------------------------------- section0.xml

class Section:
    """Builds section0.xml paragraph by paragraph (ids counted from 1, as a freshly saved file)."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.next_id = 0
        self.tables = 0

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id

    def para(self, runs: list[tuple[str, int]], style: int, para_pr: int, prefix: str = "") -> None:
        """One ``hp:p``: ``runs`` (text, charPr) after ``prefix`` (runs of controls), and one line segment."""
        body = "".join(f'<hp:run charPrIDRef="{c}"><hp:t>{escape(t)}</hp:t></hp:run>' for t, c in runs if t)
        self.parts.append(f'<hp:p id="{self._id()}" paraPrIDRef="{para_pr}" styleIDRef="{style}" pageBreak="0" '
                          f'columnBreak="0" merged="0">{prefix}{body}{_lineseg()}</hp:p>')

    def picture(self, alt: str) -> None:
        pic = (f'<hp:pic id="{self._id() + 1000000}" zOrder="{self.tables}" numberingType="PICTURE" '
               'textWrap="TOP_AND_BOTTOM" textFlow="BOTH_SIDES" lock="0" dropcapstyle="None" href="" groupLevel="0" '
               'instid="0" reverse="0"><hp:offset x="0" y="0"/><hp:orgSz width="28000" height="6000"/>'
               '<hp:curSz width="28000" height="6000"/><hp:flip horizontal="0" vertical="0"/>'
               '<hp:rotationInfo angle="0" centerX="14000" centerY="3000" rotateimage="1"/>'
               '<hp:renderingInfo><hc:transMatrix e1="1" e2="0" e3="0" e4="0" e5="1" e6="0"/></hp:renderingInfo>'
               '<hc:img binaryItemIDRef="image1" bright="0" contrast="0" effect="REAL_PIC" alpha="0"/>'
               '<hp:imgRect><hc:pt0 x="0" y="0"/><hc:pt1 x="28000" y="0"/><hc:pt2 x="28000" y="6000"/>'
               '<hc:pt3 x="0" y="6000"/></hp:imgRect><hp:imgClip left="0" right="75" top="0" bottom="75"/>'
               '<hp:inMargin left="0" right="0" top="0" bottom="0"/><hp:imgDim dimwidth="75" dimheight="75"/>'
               '<hp:effects/><hp:sz width="28000" widthRelTo="ABSOLUTE" height="6000" heightRelTo="ABSOLUTE" '
               'protect="0"/><hp:pos treatAsChar="1" affectLSpacing="0" flowWithText="1" allowOverlap="0" '
               'holdAnchorAndSO="0" vertRelTo="PARA" horzRelTo="PARA" vertAlign="TOP" horzAlign="LEFT" '
               'vertOffset="0" horzOffset="0"/><hp:outMargin left="0" right="0" top="0" bottom="0"/>'
               f'<hp:shapeComment>{PICTURE_COMMENT}\n원본 그림의 이름: {escape(alt)}.png\n'
               '원본 그림의 크기: 가로 75pixel, 세로 75pixel</hp:shapeComment></hp:pic>')
        self.parts.append(f'<hp:p id="{self._id()}" paraPrIDRef="0" styleIDRef="0" pageBreak="0" columnBreak="0" '
                          f'merged="0"><hp:run charPrIDRef="0">{pic}<hp:t/></hp:run>{_lineseg()}</hp:p>')

    def table(self, rows: list[list[str]]) -> None:
        cols = max(len(r) for r in rows)
        width = 42520 // cols
        trs = []
        for r, row in enumerate(rows):
            cells = []
            for c in range(cols):
                text = row[c] if c < len(row) else ""
                run = f'<hp:run charPrIDRef="{1 if r == 0 else 0}"><hp:t>{escape(text)}</hp:t></hp:run>' if text \
                    else '<hp:run charPrIDRef="0"/>'
                cells.append(
                    f'<hp:tc name="" header="{int(r == 0)}" hasMargin="0" protect="0" editable="0" dirty="0" '
                    'borderFillIDRef="3"><hp:subList id="" textDirection="HORIZONTAL" lineWrap="BREAK" '
                    'vertAlign="CENTER" linkListIDRef="0" linkListNextIDRef="0" textWidth="0" textHeight="0" '
                    f'hasTextRef="0" hasNumRef="0"><hp:p id="0" paraPrIDRef="0" styleIDRef="0" pageBreak="0" '
                    f'columnBreak="0" merged="0">{run}{_lineseg(width - 1020)}</hp:p></hp:subList>'
                    f'<hp:cellAddr colAddr="{c}" rowAddr="{r}"/><hp:cellSpan colSpan="1" rowSpan="1"/>'
                    f'<hp:cellSz width="{width}" height="1282"/>'
                    '<hp:cellMargin left="510" right="510" top="141" bottom="141"/></hp:tc>')
            trs.append("<hp:tr>" + "".join(cells) + "</hp:tr>")
        self.tables += 1
        tbl = (f'<hp:tbl id="{self._id() + 2000000}" zOrder="{self.tables}" numberingType="TABLE" '
               'textWrap="TOP_AND_BOTTOM" textFlow="BOTH_SIDES" lock="0" dropcapstyle="None" pageBreak="CELL" '
               f'repeatHeader="1" rowCnt="{len(rows)}" colCnt="{cols}" cellSpacing="0" borderFillIDRef="3" '
               f'noAdjust="0"><hp:sz width="{width * cols}" widthRelTo="ABSOLUTE" height="{1282 * len(rows)}" '
               'heightRelTo="ABSOLUTE" protect="0"/><hp:pos treatAsChar="1" affectLSpacing="0" flowWithText="1" '
               'allowOverlap="0" holdAnchorAndSO="0" vertRelTo="PARA" horzRelTo="COLUMN" vertAlign="TOP" '
               'horzAlign="LEFT" vertOffset="0" horzOffset="0"/><hp:outMargin left="283" right="283" top="283" '
               'bottom="283"/><hp:inMargin left="510" right="510" top="141" bottom="141"/>'
               + "".join(trs) + "</hp:tbl>")
        self.parts.append(f'<hp:p id="{self._id()}" paraPrIDRef="0" styleIDRef="0" pageBreak="0" columnBreak="0" '
                          f'merged="0"><hp:run charPrIDRef="0">{tbl}<hp:t/></hp:run>{_lineseg()}</hp:p>')

    def xml(self) -> str:
        return f'{DECL}<hs:sec {XMLNS}>' + "".join(self.parts) + "</hs:sec>"


def _lineseg(width: int = 42520) -> str:
    return ('<hp:linesegarray><hp:lineseg textpos="0" vertpos="0" vertsize="1000" textheight="1000" '
            f'baseline="850" spacing="600" horzpos="0" horzsize="{width}" flags="393216"/></hp:linesegarray>')


def section_prefix(doc: dict) -> str:
    """The first paragraph's controls: section and column properties, the running header and
    the footer with its page number."""
    sec = ('<hp:run charPrIDRef="0"><hp:secPr id="" textDirection="HORIZONTAL" spaceColumns="1134" '
           'tabStop="8000" tabStopVal="4000" tabStopUnit="HWPUNIT" outlineShapeIDRef="1" memoShapeIDRef="0" '
           'textVerticalWidthHead="0" masterPageCnt="0"><hp:grid lineGrid="0" charGrid="0" wonggojiFormat="0"/>'
           '<hp:startNum pageStartsOn="BOTH" page="0" pic="0" tbl="0" equation="0"/>'
           '<hp:visibility hideFirstHeader="0" hideFirstFooter="0" hideFirstMasterPage="0" border="SHOW_ALL" '
           'fill="SHOW_ALL" hideFirstPageNum="0" hideFirstEmptyLine="0" showLineNumber="0"/>'
           '<hp:lineNumberShape restartType="0" countBy="0" distance="0" startNumber="0"/>'
           '<hp:pagePr landscape="WIDELY" width="59528" height="84186" gutterType="LEFT_ONLY">'
           '<hp:margin header="4252" footer="4252" gutter="0" left="8504" right="8504" top="5668" bottom="4252"/>'
           '</hp:pagePr><hp:footNotePr><hp:autoNumFormat type="DIGIT" userChar="" prefixChar="" suffixChar=")" '
           'supscript="0"/><hp:noteLine length="-1" type="SOLID" width="0.12 mm" color="#000000"/>'
           '<hp:noteSpacing betweenNotes="283" belowLine="567" aboveLine="850"/>'
           '<hp:numbering type="CONTINUOUS" newNum="1"/><hp:placement place="EACH_COLUMN" beneathText="0"/>'
           '</hp:footNotePr><hp:pageBorderFill type="BOTH" borderFillIDRef="1" textBorder="PAPER" '
           'headerInside="0" footerInside="0" fillArea="PAPER"><hp:offset left="1417" right="1417" top="1417" '
           'bottom="1417"/></hp:pageBorderFill></hp:secPr><hp:ctrl><hp:colPr id="" type="NEWSPAPER" '
           'layout="LEFT" colCount="1" sameSz="1" sameGap="0"/></hp:ctrl></hp:run>')

    def sub_list(inner: str) -> str:
        return ('<hp:subList id="" textDirection="HORIZONTAL" lineWrap="BREAK" vertAlign="TOP" linkListIDRef="0" '
                'linkListNextIDRef="0" textWidth="42520" textHeight="4252" hasTextRef="0" hasNumRef="0">'
                f'<hp:p id="0" paraPrIDRef="{FURNITURE}" styleIDRef="{STYLE_HEADER}" pageBreak="0" columnBreak="0" '
                f'merged="0">{inner}{_lineseg()}</hp:p></hp:subList>')

    head_runs = f'<hp:run charPrIDRef="5"><hp:t>{escape(header_line(doc))}</hp:t></hp:run>'
    head = (f'<hp:run charPrIDRef="0"><hp:ctrl><hp:header id="1" applyPageType="BOTH">{sub_list(head_runs)}'
            '</hp:header></hp:ctrl></hp:run>')
    page = ('<hp:run charPrIDRef="5"><hp:ctrl><hp:autoNum num="1" numType="PAGE"><hp:autoNumFormat type="DIGIT" '
            'userChar="" prefixChar="" suffixChar="" supscript="0"/></hp:autoNum></hp:ctrl></hp:run>')
    foot_runs = (f'<hp:run charPrIDRef="5"><hp:t>{FOOTER_LEFT}<hp:tab width="14000" leader="0" type="1"/>- </hp:t>'
                 f'</hp:run>{page}<hp:run charPrIDRef="5"><hp:t> -<hp:tab width="14000" leader="0" type="1"/>'
                 f'{FOOTER_RIGHT}</hp:t></hp:run>')
    foot = (f'<hp:run charPrIDRef="0"><hp:ctrl><hp:footer id="2" applyPageType="BOTH">{sub_list(foot_runs)}'
            '</hp:footer></hp:ctrl></hp:run>')
    return sec + head + foot


def section_xml(doc: dict) -> str:
    s = Section()
    prefix = section_prefix(doc)
    for level, lines in blocks(doc["text"]):
        if level > 0:
            text = plain(lines[0])
            style = STYLE_OUTLINE0 + min(level, 7) - 1
            para_pr = TITLE_PARA if level == 1 else OUTLINE0 + min(level, 7) - 1
            s.para([(text, 2 if level == 1 else 3)], style, para_pr, prefix)
            prefix = ""
            continue
        if prefix:  # a law without a title heading: the controls go into an empty first paragraph
            s.para([], STYLE_NORMAL, 0, prefix)
            prefix = ""
        if level < 0:
            alt = re.search(r'alt="([^"]*)"', lines[0])
            s.picture(alt.group(1) if alt else "image")
            rows = grid_rows(lines)
            if rows is not None:
                s.table(rows)
                continue
            for ln in lines:
                if plain(ln):
                    s.para([(plain(ln), 4)], STYLE_NORMAL, FIXED)
            continue
        for ln in lines:
            runs = [(t, 1 if bold else 0) for t, bold in inline_runs(ln)]
            text = "".join(t for t, _ in runs).strip()
            if not text:
                continue
            runs[0] = (runs[0][0].lstrip(), runs[0][1])
            runs[-1] = (runs[-1][0].rstrip(), runs[-1][1])
            item = item_level(text)
            if item:
                s.para(runs, STYLE_NORMAL, ITEM0 + item)
            else:
                s.para(runs, STYLE_BODY, BODY)
    return s.xml()


# ----------------------------------------------------------------------------- the package

def _png() -> bytes:
    """A 75x75 white PNG (the stand-in for a formula image)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\0" + b"\xff" * 75 for _ in range(75))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 75, 75, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def content_hpf(doc: dict) -> str:
    when = f"{doc['version']}T00:00:00Z"
    meta = "".join(f'<opf:meta name="{k}" content="text">{escape(v)}</opf:meta>' if v else
                   f'<opf:meta name="{k}" content="text"/>' for k, v in (
                       ("creator", "kolaw-dev renderer"), ("subject", "대한민국 법령 (kolaw-dev)"),
                       ("description", ""), ("lastsaveby", "kolaw-dev renderer"), ("CreatedDate", when),
                       ("ModifiedDate", when), ("date", f"{doc['version']} 00:00:00"), ("keyword", doc["id"])))
    items = (("header", "Contents/header.xml", "application/xml", ""),
             ("image1", "BinData/image1.png", "image/png", ' isEmbeded="1"'),
             ("section0", "Contents/section0.xml", "application/xml", ""),
             ("settings", "settings.xml", "application/xml", ""))
    return (f'{DECL}<opf:package {XMLNS} version="" unique-identifier="" id=""><opf:metadata>'
            f'<opf:title>{escape(doc["title"])}</opf:title><opf:language>ko</opf:language>{meta}</opf:metadata>'
            '<opf:manifest>' + "".join(f'<opf:item id="{i}" href="{h}" media-type="{m}"{x}/>' for i, h, m, x in items)
            + '</opf:manifest><opf:spine><opf:itemref idref="header" linear="yes"/>'
            '<opf:itemref idref="section0" linear="yes"/></opf:spine></opf:package>')


def preview_text(doc: dict) -> str:
    """Hangul's preview: the opening text, paragraphs ended by CR LF, cut near 1,000 characters."""
    out = ""
    for line in shown_text(doc["text"]).split("\n"):
        line = line.lstrip("#").strip()
        if line:
            out += line.replace(" | ", "><") + "\r\n"
        if len(out) > 1000:
            break
    return out[:1024]


VERSION_XML = (f'{DECL}<hv:HCFVersion xmlns:hv="http://www.hancom.co.kr/hwpml/2011/version" '
               'tagetApplication="WORDPROCESSOR" major="5" minor="1" micro="1" buildNumber="0" os="1" '
               'xmlVersion="1.4" application="Hancom Office Hangul" appVersion="12, 0, 0, 535 WIN32LEWindows_10"/>')
SETTINGS_XML = (f'{DECL}<ha:HWPApplicationSetting xmlns:ha="{NS["ha"]}" xmlns:config="{NS["config"]}">'
                '<ha:CaretPosition listIDRef="0" paraIDRef="0" pos="0"/></ha:HWPApplicationSetting>')
_PKG = "http://www.hancom.co.kr/hwpml/2016/meta/pkg#"
CONTAINER_RDF = (f'{DECL}<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">' + "".join(
    f'<rdf:Description rdf:about=""><ns0:hasPart xmlns:ns0="{_PKG}" rdf:resource="{p}"/></rdf:Description>'
    f'<rdf:Description rdf:about="{p}"><rdf:type rdf:resource="{_PKG}{t}"/></rdf:Description>'
    for p, t in (("Contents/header.xml", "HeaderFile"), ("Contents/section0.xml", "SectionFile")))
    + f'<rdf:Description rdf:about=""><rdf:type rdf:resource="{_PKG}Document"/></rdf:Description></rdf:RDF>')
CONTAINER_XML = (f'{DECL}<ocf:container xmlns:ocf="urn:oasis:names:tc:opendocument:xmlns:container" '
                 'xmlns:hpf="http://www.hancom.co.kr/schema/2011/hpf"><ocf:rootfiles>'
                 '<ocf:rootfile full-path="Contents/content.hpf" media-type="application/hwpml-package+xml"/>'
                 '<ocf:rootfile full-path="Preview/PrvText.txt" media-type="text/plain"/>'
                 '<ocf:rootfile full-path="META-INF/container.rdf" media-type="application/rdf+xml"/>'
                 '</ocf:rootfiles></ocf:container>')
MANIFEST_XML = f'{DECL}<odf:manifest xmlns:odf="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"/>'


def render_hwpx(doc: dict) -> bytes:
    y, m, d = (int(x) for x in doc["version"].split("-"))
    members: list[tuple[str, bytes]] = [
        ("mimetype", b"application/hwp+zip"),
        ("version.xml", VERSION_XML.encode()),
        ("Contents/header.xml", header_xml().encode()),
        ("BinData/image1.png", _png()),
        ("Contents/section0.xml", section_xml(doc).encode()),
        ("Preview/PrvText.txt", preview_text(doc).encode()),
        ("settings.xml", SETTINGS_XML.encode()),
        ("META-INF/container.rdf", CONTAINER_RDF.encode()),
        ("Contents/content.hpf", content_hpf(doc).encode()),
        ("META-INF/container.xml", CONTAINER_XML.encode()),
        ("META-INF/manifest.xml", MANIFEST_XML.encode()),
    ]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(y, m, d, 9, 0, 0))
            info.compress_type = zipfile.ZIP_STORED if name in ("mimetype", "BinData/image1.png") \
                else zipfile.ZIP_DEFLATED
            info.create_system = 0  # as Hangul on Windows writes it
            zf.writestr(info, data)
    return buf.getvalue()


def main() -> int:
    out = HERE / "hwpx"
    out.mkdir(exist_ok=True)
    for doc in load_corpus():
        stem = file_stem(doc)
        (out / f"{stem}.hwpx").write_bytes(render_hwpx(doc))
        print(f"{stem}: hwpx written", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
