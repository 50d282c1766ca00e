"""Korean words and patterns the document loaders (rag.documents) read: Word style names and list
numbering, HWP outline styles, HTML page furniture, PDF page numbers, line joins and block starts."""
from __future__ import annotations

from rag.lang.ko.statute import ENUMERATORS

# The Korean name of Word's heading styles (제목 1 … 제목 9) and of its title style (제목); read by
# rag.documents.docx (regex alternatives, matched case-insensitively).
DOCX_HEADING_STYLE = "제목"
DOCX_TITLE_STYLE = "제목"
# The Korean name of Word's table-of-contents styles (목차 1 …); read by rag.documents.docx.
DOCX_TOC_STYLE = "목차"
# A word that makes a Word style a list style (목록 단락); read by rag.documents.docx.
DOCX_LIST_STYLE = "목록"

# Word's Korean automatic numbering, in order: ``ganada`` (가, 나, …), ``chosung`` (ㄱ, ㄴ, …) and the
# Korean numerals one to ten (``koreanDigital``, ``koreanLegal``); read by rag.documents.docx.
GANADA = ENUMERATORS
CHOSUNG = "ㄱㄴㄷㄹㅁㅂㅅㅇㅈㅊㅋㅌㅍㅎ"
DIGITS = "일이삼사오육칠팔구십"

# The Korean name of the Hangul word processor's outline styles (개요 1 …); read by rag.documents.hangul.
HWP_OUTLINE_STYLE = "개요"
# What Hangul calls a distribution document (배포용 문서), named in rag.documents.hwp's error message.
HWP_DISTRIBUTION = "배포용"

# Words in an element's id, class or aria-label that mark page furniture on Korean sites (skip links, menus,
# cookie notices, breadcrumbs, share buttons); read by rag.documents.html after its markup names.
HTML_FURNITURE_WORDS = ("바로가기", "메뉴", "쿠키", "이동경로", "공유하기")
# The text of a Korean skip link (본문 바로가기, 건너뛰기); read by rag.documents.html after the English.
HTML_SKIP_LINK_WORDS = ("바로가기", "건너뛰기")

# What follows the number of a Korean page number line (3쪽, 3 페이지, 3면), as regex alternatives; read by
# rag.documents.pdf_layout.
PDF_PAGE_SUFFIXES = "쪽|페이지|면"
# The Hangul letter araea (ㆍ) written as a middle dot: it attaches to the characters on both sides of a
# line break; read by rag.documents.pdf_join (beside the middle dot ·).
PDF_MIDDLE_DOT = "ㆍ"
# A statute unit label that ends in 의 (제18조의 | 6): a branch number follows, without a space; a regex
# read by rag.documents.pdf_join.
PDF_BRANCH_LABEL = r"제\d+(?:편|장|절|관|조|항|호|목)의$"
# A line that starts a statute article (제3조(목적), 제3조의2 (…)); a regex read by rag.documents.pdf_paragraphs
# (before the paragraph marks).
PDF_ARTICLE_START = r"제\s*\d+\s*조(?:\s*의\s*\d+)?\s*\("
# A list item lettered 가. 나. …; a regex read by rag.documents.pdf_paragraphs.
PDF_LETTER_ITEM = "[" + GANADA + r"]\.\s"
# Starts of a line that also occur inside a sentence: a part heading (제2장, 제1절의2), the supplementary
# provisions (부칙), an appended table (별표 1), a lettered item; a regex read by rag.documents.pdf_paragraphs,
# which starts a block there only where the previous line did not run to the margin.
PDF_WEAK_START = (r"제\s*\d+\s*(?:편|장|절|관)(?:\s*의\s*\d+)?(?:\s|$)|부\s*칙(?:\s|<|$)"
                  r"|별표\s*\d*(?:\s|$)|" + PDF_LETTER_ITEM)
