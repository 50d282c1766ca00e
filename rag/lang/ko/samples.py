"""Korean sample texts and questions: the fixtures the rag.bench measurements (context, documents,
entailment, languages, serve, validation) build their inputs from when no corpus is given."""
from __future__ import annotations

# rag.bench.context: the subjects and predicates its seeded Korean sentences are made of (subject +
# predicate, ``{n}`` a random number).
CONTEXT_SUBJECTS = ("냉각수 펌프", "압력 센서", "안전 밸브", "제어 서버", "배터리 모듈", "환불 규정", "점검 절차",
                    "보조 전원")
CONTEXT_PREDICATES = ("는 온도가 {n}도를 넘으면 자동으로 정지합니다.", "는 {n}개월마다 교정해야 합니다.",
                      "의 최신 개정판은 {n}년에 발행되었습니다.", "를 교체할 때는 반드시 전원을 차단하세요.",
                      "에 대한 경보는 {n}초 안에 관리자에게 전달됩니다.", "의 허용 오차는 ±{n}% 이내입니다.")
# rag.bench.context: the Korean half of the question its prompt builds answer (the English half follows).
CONTEXT_QUESTION = "냉각수 펌프의 안전 정지 온도는 몇 도인가요?"
# rag.bench.context: the Korean words of the text that loads its tokenizer.
CONTEXT_TOKENIZER_WARMUP = "토크나이저 준비"
# rag.bench.context: its safety guideline, and the Korean keywords of its safety and refund guidelines.
CONTEXT_SAFETY_GUIDELINE = "안전 관련 답변은 경고 문구로 시작하세요."
CONTEXT_SAFETY_KEYWORD = "안전"
CONTEXT_REFUND_KEYWORD = "환불"
# rag.bench.context: the conversation history (role, text) its prompt builds are given.
CONTEXT_HISTORY = (("user", "지난주 점검 결과를 요약해 주세요."), ("assistant", "점검 결과 이상 없음 [S1]."))

# rag.bench.documents: a regex splitting the kolaw-dev statutes before each article heading, and the
# word an article holds (it writes one article per file).
ARTICLE_SPLIT = r"\n(?=#+ 제\d+조)"
ARTICLE_WORD = "제"
# rag.bench.documents: the sample article it writes when the corpus is absent (``{i}`` the article's
# number, ``{days}`` its deadline), the note it appends to a repeated article (``{n}`` the copy's number),
# and the edit it makes to a file before a sync (``{k}`` the edit's number, ``{days}`` the new deadline).
SAMPLE_ARTICLE = "# 제{i}조 (견본)\n\n이 조는 견본 규정 {i}의 내용으로, 신청은 {days}일 이내에 한다."
COPY_NOTE = "\n\n(사본 {n})"
EDIT_NOTE = "\n\n개정 {k}: 신청 기한은 {days}일로 한다.\n"

# rag.bench.entailment: the (evidence, claim) pair whose entailment it times.
ENTAILMENT_PAIR = ("공무원의 1주간 근무시간은 점심시간을 제외하고 40시간으로 한다.", "공무원은 주 40시간 근무한다.")

# rag.bench.languages: the Korean questions it asks the demo (set ko->ko).
LANGUAGE_QUESTIONS = ("연차 휴가는 며칠인가요?", "밀폐공간 진입 전에 무엇을 측정해야 하나요?",
                      "야근할 때 식대는 얼마까지 청구할 수 있나요?", "공장 안에서 지게차 최고 속도는 얼마인가요?",
                      "업무용 이메일은 몇 년 동안 보관되나요?", "부산공장에서 화재가 나면 집결지는 어디인가요?")
# rag.bench.languages: the Korean question its warm-up asks (model loads).
LANGUAGE_WARMUP_QUESTION = "준비 질문은 무엇인가요?"

# rag.bench.serve: the title and text of the documents its writer adds under load (``{n}`` the document's
# number, ``{room}`` and ``{hour}`` derived from it).
LOAD_DOCUMENT_TITLE = "부하 시험 문서"
LOAD_DOCUMENT_TEXT = "부하 시험 문서 {n}: 회의실 {room}번은 오전 {hour}시에 엽니다."

# rag.bench.validation: a stand-in statute (written for that benchmark), used when the kolaw-dev corpus is
# not there.
VALIDATION_STATUTE = """##### 제1조 (목적)

이 규정은 직원의 출장 여비와 휴가에 관한 사항을 정함을 목적으로 한다.

##### 제2조 (여비의 정산)

**①** 출장자는 출장을 마친 날의 다음 날부터 2주일 이내에 증거서류를 갖추어 회계 담당자에게 정산을 신청하여야 한다. <개정 2021.3.2>

**②** 제1항에도 불구하고 국외 출장의 경우에는 30일 이내에 정산을 신청할 수 있다.

**③** 회사 차량을 이용하여 출장하는 경우에는 교통비를 지급하지 아니한다.

##### 제3조 (일비)

**①** 일비는 1일 2만원으로 한다. 다만, 근무지 안의 출장으로서 4시간 미만인 경우에는 1만원을 지급한다.

**②** 같은 곳에 15일을 초과하여 머무르는 경우에는 그 초과일수에 대하여 일비의 10분의 1을 뺀다.

##### 제4조 (연가)

**①** 직원의 연가 일수는 다음과 같다. <개정 2023.1.1>

  1\\. 재직기간 1년 미만: 11일
  2\\. 재직기간 1년 이상 3년 미만: 15일
  3\\. 재직기간 3년 이상: 20일

**②** 부서장은 연가 신청을 받았을 때에는 업무에 특별한 지장이 없으면 승인하여야 한다.

**③** 연가는 반일 단위로 사용할 수 있으며, 반일 연가 2회는 연가 1일로 계산한다.

##### 제5조 (병가)

**①** 부서장은 직원이 질병으로 직무를 수행할 수 없을 때에는 연 60일의 범위에서 병가를 승인할 수 있다.

**②** 병가 일수가 연간 6일을 초과하는 경우에는 의사의 진단서를 첨부하여야 한다.

**③** 부정한 방법으로 병가를 받은 직원에게는 그 일수의 2배를 연가 일수에서 뺀다.
"""
# rag.bench.validation: a regex of the article label (제3조, 제3조의2) it gives a block as its locator.
ARTICLE_LOCATOR = r"제\d+조(?:의\d+)?"
