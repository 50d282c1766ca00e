"""Exfiltration: a request to send the conversation, the chat, the user's data or a secret
somewhere, told to the assistant or to the reader of its answer.

A sentence is a request to exfiltrate when all of these hold (English and Korean alike):

- a *sending* verb (send, forward, upload, 보내다, 전송하다, …) or a *placing* verb (append,
  include, 붙여 넣다, 첨부하다, …) is used as a verb, not negated ("do not send", "보내지 마세요",
  "전송하여서는 아니 된다"), not passive ("전송된다") and not a condition or a noun clause
  ("전송하는 경우", "전송을 요구할 수 있다");
- its object is the conversation (this chat, the previous messages, 이전 대화, 사용자가 입력한
  질문, the system prompt) or the user's data or a secret (the user's personal data, 사용자의
  개인정보, passwords, API keys), directly ("the chat logs", "대화 내용을"), through a container
  ("a summary of the conversation", "대화를 요약한 결과를") or through a pronoun whose antecedent is
  in the same or the previous sentence ("… and send it to …", "그것을 … 보내라");
- and what is asked fits an attack rather than a rule: for the conversation, a directive to the
  reader ("Send …", "보내세요", "you must forward …", "…해야 한다") or a destination; for the
  user's data or a secret, a destination that names where (a URL, an email address, "the
  following URL", "다음 주소", "아래 링크") and a directive, or a URL or address outright; a
  placing verb always needs a destination.

A statute's own duties ("정보주체는 … 그 개인정보의 전송을 요구할 수 있다") and a policy's
prohibitions ("비밀번호를 메일로 보내지 마세요", "employees must not send passwords by email")
fail the first two conditions; "Send requests about your personal data to privacy@…" fails the
object (its object is the requests). A URL whose query carries a placeholder for the chat
(``https://x.example/?q={conversation}``) is a request on its own.
"""
from __future__ import annotations

import re

_I = re.IGNORECASE

_EMAIL = re.compile(r"[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}", _I)
_URL = re.compile(r"(?:https?|ftp)://[^\s<>\"'`(){}\[\]]+|\bwww\.[^\s<>\"'`(){}\[\]]+|"
                  r"\b(?:[a-z0-9-]+\.)+(?:com|net|org|io|xyz|ru|cn|info|biz|kr|app|dev|site|online|top|example|link|"
                  r"click)(?:/[^\s<>\"'`(){}\[\]]*)?(?![a-z0-9.])", _I)
_URL_MASK, _EMAIL_MASK = "\ue000", "\ue001"
_PLACEHOLDER_URL = re.compile(
    r"(?:https?://|www\.)[^\s\"'`]*?(?:\{\{?|%7b|\$\{?|<|\[)\s*(?:conversation|chat|history|messages?|transcript|"
    r"dialog(?:ue)?|system[_ -]?prompt|prompt|previous|secret|password|credentials?|token|api[_ -]?key|"
    r"user[_ -]?(?:data|info|messages?|questions?|input|email|name)|대화|이전|비밀번호|사용자)", _I)
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n")

# -- objects ------------------------------------------------------------------------------
_DET_EN = (r"(?:(?:the|a|an|all|any|every|each|this|that|these|those|our|your|my|their|its|entire|whole|full|"
           r"complete|current|present|ongoing|raw|verbatim|exact|unredacted|plain|base64(?:-encoded)?|encoded|"
           r"so-far)\s+|(?:all|each|every|any|some|part|most)\s+of\s+(?:the\s+)?)*")
_CONV_EN = (r"(?:conversations?|chat(?:\s*(?:history|histories|logs?|transcripts?|messages?|sessions?|contents?|"
            r"threads?|records?))?|chats|chatlogs?|dialog(?:ue)?s?|transcripts?|message history|context window|"
            r"system (?:prompt|message)|session (?:history|data|contents?|transcripts?)|"
            r"(?:previous|prior|earlier|past|recent|last|user'?s?'?|the user'?s|users'|human'?s)\s+(?:\w+\s+)?"
            r"(?:messages?|questions?|inputs?|queries|prompts?|turns|replies|requests|answers|responses)|"
            r"(?:everything|anything|whatever|what|all)\s+(?:that\s+)?(?:the user|the human|i|we|you and i)\s+(?:has\s+|have\s+)?"
            r"(?:said|told you|wrote|written|typed|asked|shared|entered|provided|discussed)|"
            r"(?:questions?|messages?|quer(?:y|ies)|prompts?|inputs?|requests?|repl(?:y|ies)|answers?|turns?)\s+(?:that\s+|which\s+)?"
            r"(?:the\s+|a\s+|any\s+)?users?\s+(?:\w+\s+)?(?:asks?|asked|sends?|sent|types?|typed|writes?|wrote|enters?|entered|"
            r"submits?|submitted|makes?|made|gives?|gave|says?|said)|"
            r"(?:your|the) (?:instructions|prompt|hidden prompt|initial prompt))\b")
_SECRET_EN = (r"(?:passwords?|passcodes?|pin (?:codes?|numbers?)|credentials|api[ _-]?keys?|access tokens?|auth(?:entication)? tokens?|"
              r"bearer tokens?|session (?:tokens?|cookies?|ids?|keys?)|cookies|secret keys?|private keys?|ssh keys?|"
              r"otp codes?|one-time (?:codes?|passwords?)|2fa codes?|login (?:details|credentials|information)|"
              r"(?:credit |debit )?card (?:numbers?|details)|social security numbers?|ssns?|bank account (?:numbers?|details))")
_DATA_EN = (r"(?:(?:user'?s?'?|users'|the user'?s|human'?s)\s+(?:\w+\s+){0,2}?(?:data|information|info|details|pii|"
            r"e-?mails?(?: address(?:es)?)?|phone(?: numbers?)?|address(?:es)?|names?|accounts?|records|files|documents|"
            r"contacts|location|history|" + _SECRET_EN + r")|" + _SECRET_EN + r"|"
            r"(?:e-?mail addresses|emails|phone numbers|names|addresses|contacts?|contact details|personal (?:data|details|"
            r"information)|account numbers|card numbers|data|information|details)\s+(?:that\s+|which\s+)?(?:the\s+|a\s+|any\s+)?"
            r"users?\s+(?:\w+\s+)?(?:mentions?|mentioned|provides?|provided|shares?|shared|enters?|entered|types?|typed|gives?|"
            r"gave|sends?|sent|writes?|wrote|says?|said)|"
            r"(?:everything|all|anything) (?:you (?:know|have|remember|learned|collected)|(?:stored|saved|collected)) about "
            r"(?:the |this )?users?)\b")
_CONTAINER_EN = re.compile(r"^" + _DET_EN + r"(?:summary|summaries|copy|copies|transcript|logs?|dump|records?|contents?|"
                           r"text|full text|list|digest|excerpts?|snippets?|version|encoding|export|history|rest|"
                           r"remainder|details|parts?|portions?|everything)\s+of\s+", _I)
_ANAPHOR_EN = re.compile(r"^(?:it|them|this|that|these|those|everything|all of (?:it|this|that|them)|"
                         r"the (?:result|results|summary|output|text|whole thing|lot|above)|both)\b", _I)
_CONV_EN_HEAD = re.compile(r"^" + _DET_EN + _CONV_EN, _I)
_DATA_EN_HEAD = re.compile(r"^" + _DET_EN + _DATA_EN, _I)
_CONV_EN_ANY = re.compile(r"\b" + _CONV_EN, _I)
_DATA_EN_ANY = re.compile(r"\b" + _DATA_EN, _I)

_USER_KO = r"(?:사용자|이용자|유저|질문자|user)"
_CONV_KO_ANY = re.compile(r"대화|채팅|챗|프롬프트|(?:이전|앞선|앞의|지금까지의?|과거)\s*(?:질문|메시지|메세지|입력|요청|답변)|"
                          + _USER_KO + r"(?:가|의|께서)?\s*(?:입력한|보낸|한|남긴|작성한)?\s*(?:질문|메시지|메세지|입력|요청|대화)", _I)
_DATA_KO_ANY = re.compile(_USER_KO + r"(?:의|들의)?\s*\S*(?:정보|데이터|연락처|이메일|번호|주소|이름|자료|파일|계정)|"
                          r"비밀\s*번호|패스워드|인증\s*(?:정보|번호|키|토큰)|액세스\s*토큰|API\s*키|세션\s*(?:쿠키|토큰|키)|"
                          r"로그인\s*정보|계정\s*정보", _I)
_CONV_KO_HEADS = {"대화", "채팅", "챗", "대화내용", "대화기록", "대화내역", "채팅기록", "채팅내역", "프롬프트",
                  "시스템프롬프트", "대화록", "대화문"}
_QUALIFIED_KO_HEADS = {"질문", "메시지", "메세지", "입력", "입력값", "입력문", "요청", "질의", "답변", "응답", "질문들",
                       "메시지들"}
_QUALIFIER_KO = re.compile(r"이전|앞선|앞의|지금까지|과거|최근|나눈|주고받은|오간|세션|대화|여기서|이곳에서|" + _USER_KO
                           + r"|너에게|당신에게|AI에게", _I)
_SECRET_KO_HEADS = {"비밀번호", "패스워드", "암호", "인증번호", "인증정보", "토큰", "액세스토큰", "API키", "쿠키", "세션쿠키",
                    "계정정보", "로그인정보", "OTP", "카드번호", "계좌번호", "주민등록번호", "비밀키", "개인키"}
_DATA_KO_HEADS = {"개인정보", "정보", "데이터", "자료", "연락처", "이메일", "전화번호", "주소", "이름", "신상정보",
                  "위치정보", "파일", "계정", "신용카드"}
_CONTAINER_KO_HEADS = {"내용", "기록", "내역", "로그", "이력", "전문", "전체", "요약", "요약본", "요약문", "결과", "사본",
                       "목록", "원문", "텍스트", "데이터", "정보", "전부", "모두", "일부"}
_ANAPHOR_KO_HEADS = {"그것", "이것", "그걸", "이걸", "이", "그", "이들", "그것들", "이것들", "모두", "전부", "그대로"}
_KO_PARTICLE = re.compile(r"^(.+?)(?:을|를|은|는|도|만)$")
# Any head word a Korean object could have (a cheap test before reading the sentences).
_KO_HINT = re.compile("|".join(sorted((r"\s*".join(w) for w in _CONV_KO_HEADS | _QUALIFIED_KO_HEADS | _SECRET_KO_HEADS),
                                      key=len, reverse=True)), _I)

# -- verbs ----------------------------------------------------------------------------------
_SEND_EN = (r"send|forward|post|upload|transmit|transfer|e-?mail|mail|leak|exfiltrate|relay|deliver|share|sync|dump|"
            r"report|submit|publish|ship|pipe|push|beacon|broadcast|export|fax|text|dm|tweet")
_PLACE_EN = (r"append|attach|include|add|put|insert|embed|encode|paste|copy|write|place|pass|enter|type|"
             r"concatenate|inject|log|store|save|render|load|fetch|visit|open|request|call")
_VERB_EN = re.compile(r"\b(?:(" + _SEND_EN + r")|(" + _PLACE_EN + r"))(?:s|es)?\b", _I)
_STRONG_KO = r"전송|전달|송신|송부|발송|업로드|유출|공유|포워딩|회신|제출|게시|반출|누설"
_PLACE_KO = r"첨부|입력|삽입|추가|포함|기록|복사|기재|인코딩|저장|요청"
_VERB_KO = re.compile(r"(?:((?:" + _STRONG_KO + r")(?=(?:시켜|시키)?(?:하|해|할|한|합|했|토록))|내보내|보내|보낼|넘겨|넘기|"
                      r"올려|올리|부쳐)|((?:" + _PLACE_KO + r")(?=(?:시켜|시키)?(?:하|해|할|한|합|했|토록))|붙여\s*넣|"
                      r"붙여넣|붙여|붙이|붙인|넣(?=어|으|고|을|은)))")

# -- mood -----------------------------------------------------------------------------------
_NEG_EN = re.compile(r"(?:\b(?:not|never|cannot|nor|no one|nobody)\b|n't)\s+(?:\w+\s+){0,2}$", _I)
_NOT_FORGET_EN = re.compile(r"(?:not|n't)\s+forget\s+to\s+$", _I)
_DIRECTIVE_EN = re.compile(
    r"(?:^|[,;:—–-]|\b(?:and|then|or|also|please|kindly|now|next|finally|first|afterwards|immediately|quietly|"
    r"silently|secretly|just|simply|always)\b)\s*(?:(?:please|kindly|now|then|also|immediately|quietly|silently|"
    r"secretly|just|simply|always|first|finally|next)[,]?\s+)*$|"
    r"\b(?:you|assistant|ai|model|bot|chatbot|llm|gpt|agent)\s+(?:must|should|shall|will|need to|needs to|have to|has to|"
    r"are to|is to|are required to|is required to|are instructed to|is instructed to|are expected to|can|may)\s+"
    r"(?:now\s+|also\s+|always\s+|immediately\s+|then\s+|quietly\s+|silently\s+|secretly\s+)?$|"
    r"\b(?:remember|make sure|be sure|forget|you are|your (?:task|job|goal|mission|next step|instruction) is|"
    r"i need you|i want you|we need you|we want you|(?:important|essential|necessary|required|mandatory) (?:that you|to)|"
    r"(?:tell|ask|instruct|remind|urge|get|have) (?:the )?(?:users?|readers?|them|customers?)|"
    r"(?:is|are) (?:required|instructed|expected|asked) to)\s+(?:to\s+)?$", _I)
_LIST_START = re.compile(r"^\s*(?:[-*•>]\s*|\(?\d+[.)]\s*|\(?[a-z][.)]\s+|step \d+[:.]?\s*)?$", _I)

_NEG_KO = re.compile(r"^\s*(?:하|해|시키|시켜)?\s*(?:지\s*(?:마|말|않|못|아니)|서는\s*(?:안|아니)|선\s*안|면\s*안\s*(?:되|됩|돼))")
_PASSIVE_KO = re.compile(r"^(?:되|돼|됩|된|될|받|지(?!\s*(?:마|말|않|못|아니))|진|집)")
_NOMINAL_KO = re.compile(r"^(?:시키|시켜)?(?:하|해)?(?:는|은|ㄴ|한|할|을|낸|낼|린|릴|긴|길)?\s*(?:것(?!\s*[.!]?\s*$)|경우|때|행위|자\b|"
                         r"사람|수\s|바\b|목적|기능|서비스|방법|방식|절차)|^(?:하|해)?(?:면|려면|려는|려고|거나|든지)")
_DIRECTIVE_KO = re.compile(r"(?:라|세요|십시오|시오|주세요|줘|줘요|주십시오|[할을낼릴길일킬둘줄]\s*것|해|어|봐|렴|거라|바람|바랍니다|"
                           r"요망|하자|합시다)\s*[\"'」』)\]]*\s*[!.。]*\s*$")
_OBLIGATION_KO = re.compile(r"(?:야|어야|여야)\s*(?:한다|합니다|함|해|돼|된다|됩니다|할\s*것)|하도록\s*(?:한다|합니다|되어)")
_AI_SUBJECT_KO = re.compile(r"(?:(?<![A-Za-z])(?:AI|GPT|LLM)|인공지능|챗봇|어시스턴트|언어\s*모델|(?<![가-힣])(?:너|당신|그대))"
                            r"(?:은|는|이|가)\s", _I)

# -- destinations ---------------------------------------------------------------------------
_DEIXIS_EN = re.compile(
    r"\b(?:this|that|the following|following|the below|below|the above|my|our|an? external|external|a remote|remote|"
    r"the attacker'?s?|attacker'?s?|a third[- ]party|third[- ]party|another|the specified|specified|given|provided|"
    r"the|an?|hidden|secret)\s+(?:url|link|address|endpoint|server|webhook|site|website|web ?page|domain|host|inbox|"
    r"mailbox|e-?mail(?: address)?|api|bucket|channel|ip(?: address)?|pastebin)\b|"
    r"\b(?:url|link|address|endpoint|webhook|server)\s+(?:below|above|provided|given|here)\b|"
    r"\b(?:pastebin|webhook|telegram|discord|slack channel)\b|(?<![\w.])@[a-z0-9_]{3,}\b|"
    r"\b(?:search query|tool call|api call|web request|http request|get request|post request|image url|browser)\b", _I)
_DEIXIS_KO = re.compile(
    r"(?<![가-힣])(?:다음|아래|위|이|해당|지정된|지정한|특정|외부|공격자(?:의)?|원격|제3자(?:의)?|별도(?:의)?|알려\s*준|"
    r"알려\s*드린|적힌|명시된|상기|내)(?:\s*의)?\s+(?:주소(?!지)|링크|URL|url|서버|사이트|웹\s*사이트|홈페이지|웹훅|엔드포인트|이메일(?:\s*주소)?|"
    r"메일(?:\s*주소)?|메일함|웹\s*페이지|도메인|채널|API|텔레그램|디스코드)|웹훅|텔레그램|디스코드|"
    r"(?<![\w.])@[A-Za-z0-9_]{3,}", _I)


def _mask(text: str) -> str:
    """``text`` with every email address and URL replaced by a same-length run of a private-use
    character, so their dots end no sentence and a destination is one token."""
    out = list(text)
    for pat, ch in ((_EMAIL, _EMAIL_MASK), (_URL, _URL_MASK)):
        for m in pat.finditer(text):
            if out[m.start()] in (_URL_MASK, _EMAIL_MASK):
                continue
            out[m.start():m.end()] = ch * (m.end() - m.start())
    return "".join(out)


def _sentences(masked: str) -> list[tuple[int, int]]:
    spans, pos = [], 0
    for m in _SENTENCE_END.finditer(masked):
        if m.start() > pos:
            spans.append((pos, m.start()))
        pos = m.end()
    if pos < len(masked):
        spans.append((pos, len(masked)))
    return spans


def _has_dest(s: str) -> tuple[bool, bool]:
    """(any destination, a concrete one: a URL or an email address) in sentence ``s``."""
    concrete = _URL_MASK in s or _EMAIL_MASK in s
    return concrete or bool(_DEIXIS_EN.search(s) or _DEIXIS_KO.search(s)), concrete


def _object_en(after: str, before: str) -> str | None:
    """``conv`` / ``data`` for the object noun phrase right after an English verb, else None."""
    np = re.split(r"\s+(?:to|into|onto|in|at|via|through|using|with|by|on|as|over|for|from|inside|within|then|so|"
                  r"before|after|when|if|because|while|and)\s+|[,;:.!?]", after.strip(), maxsplit=1, flags=_I)[0][:120]
    np = re.sub(r"^(?:me|us|him|her|them)\s+(?=\S)", "", np, flags=_I)  # send us your password
    for _ in range(2):
        if _CONV_EN_HEAD.match(np):
            return "conv"
        if _DATA_EN_HEAD.match(np):
            return "data"
        c = _CONTAINER_EN.match(np)
        if not c:
            break
        np = np[c.end():]
    if _ANAPHOR_EN.match(np):
        if _CONV_EN_ANY.search(before) or _CONV_KO_ANY.search(before):
            return "conv"
        if _DATA_EN_ANY.search(before) or _DATA_KO_ANY.search(before):
            return "data"
    return None


def _object_ko(before: str, context: str) -> str | None:
    """``conv`` / ``data`` for the last object- or topic-marked noun phrase before a Korean verb."""
    tokens = before.split()
    for i in range(len(tokens) - 1, max(-1, len(tokens) - 9), -1):
        m = _KO_PARTICLE.match(tokens[i].strip(",.\"'「」『』()"))
        if not m:
            continue
        head = m.group(1)
        mods = " ".join(tokens[max(0, i - 5):i]) + " " + head
        compact = head.replace(" ", "")
        joined = (tokens[i - 1] + head) if i > 0 else head
        if joined in _SECRET_KO_HEADS or joined in _CONV_KO_HEADS or joined in _DATA_KO_HEADS:
            compact = joined
        if compact in _CONV_KO_HEADS or compact.endswith(("대화", "채팅", "프롬프트")):
            return "conv"
        if compact in _QUALIFIED_KO_HEADS:
            return "conv" if _QUALIFIER_KO.search(mods) else None
        if compact in _SECRET_KO_HEADS or compact.endswith(("비밀번호", "패스워드")):
            return "data"
        if compact in _DATA_KO_HEADS and re.search(_USER_KO, mods, _I):
            return "data"
        if compact in _CONTAINER_KO_HEADS:
            scope = mods if compact not in ("전부", "모두") else context + " " + before
            if _CONV_KO_ANY.search(mods) or _CONV_KO_ANY.search(before):
                return "conv"
            if _DATA_KO_ANY.search(mods) or _DATA_KO_ANY.search(scope):
                return "data"
            return None
        if compact in _ANAPHOR_KO_HEADS:
            text = context + " " + before
            if _CONV_KO_ANY.search(text) or _CONV_EN_ANY.search(text):
                return "conv"
            if _DATA_KO_ANY.search(text) or _DATA_EN_ANY.search(text):
                return "data"
            return None
        for j in range(i - 1, max(-1, i - 4), -1):  # 주민등록번호와 전화번호를: a conjunct of the object
            c = re.match(r"^(.+?)(?:와|과|및|,)$", tokens[j])
            if not c:
                break
            if c.group(1) in _SECRET_KO_HEADS or c.group(1) in _CONV_KO_HEADS:
                return "conv" if c.group(1) in _CONV_KO_HEADS else "data"
        if m.group(0).endswith(("을", "를")):  # the verb's object, and it is something else
            return None
    return None


_OBJECT_HEADS_KO = (_CONV_KO_HEADS | _QUALIFIED_KO_HEADS | _SECRET_KO_HEADS | _DATA_KO_HEADS | _CONTAINER_KO_HEADS
                    | _ANAPHOR_KO_HEADS)


def _third_party_topic(before: str) -> bool:
    """Whether a topic other than the assistant, the reader or the object is named before the verb
    (회사는, 사업자는, 정보주체는)."""
    for tok in before.split():
        m = re.match(r"^(.+?)(?:은|는)$", tok.strip(",.\"'"))
        if m and len(m.group(1)) >= 2 and m.group(1) not in _OBJECT_HEADS_KO and not _AI_SUBJECT_KO.match(tok + " "):
            return True
    return False


def _decide(obj: str | None, strong: bool, directive: bool, dest: bool, concrete: bool) -> bool:
    if obj is None or not (strong or dest):
        return False
    if obj == "conv":
        return directive or dest
    return dest and (directive or concrete)


def exfiltration_spans(plain: str) -> list[tuple[int, int]]:
    """Spans of ``plain`` that ask to send the conversation, the user's data or a secret away
    (module docstring), in text order."""
    out = [(m.start(), m.end()) for m in _PLACEHOLDER_URL.finditer(plain)]
    if not (_VERB_EN.search(plain) or _VERB_KO.search(plain)):
        return out
    if not (_CONV_EN_ANY.search(plain) or _DATA_EN_ANY.search(plain) or _CONV_KO_ANY.search(plain)
            or _DATA_KO_ANY.search(plain) or _KO_HINT.search(plain)):
        return out
    masked = _mask(plain)
    previous = ""
    for s0, s1 in _sentences(masked):
        sent = masked[s0:s1]
        dest, concrete = _has_dest(sent)
        hit = _sentence_hit(sent, previous, dest, concrete)
        if hit is not None:
            start = s0 + hit
            out.append((start, min(s1, start + 80)))
        previous = sent
    out.sort()
    return out


# A message or request that carries the object: "compose an email to … containing the user's salary",
# "open https://… followed by the user's last message".
_CARRY_EN = re.compile(
    r"\b(?:compose|write|draft|send|create|make|issue|open|visit|load|fetch|call|render)\s+(?:an?\s+|the\s+)?(?:\w+\s+)?"
    r"(?:e-?mail|message|request|post|api call|webhook call|link|url|image|" + _URL_MASK + r"+)[^.\n]{0,80}?"
    r"\b(?:containing|with|including|that (?:contains|includes)|carrying|attaching|followed by|plus|appending)\s+", _I)


def _sentence_hit(sent: str, previous: str, dest: bool, concrete: bool) -> int | None:
    """Where in ``sent`` a request to exfiltrate starts, or None."""
    for m in _CARRY_EN.finditer(sent):
        if dest and _object_en(sent[m.end():], previous + " " + sent[:m.start()]) is not None \
                and not _NEG_EN.search(sent[:m.start()]):
            return m.start()
    for m in _VERB_EN.finditer(sent):
        before = sent[:m.start()]
        if _NEG_EN.search(before) and not _NOT_FORGET_EN.search(before):
            continue
        directive = bool(_DIRECTIVE_EN.search(before) or _LIST_START.match(before))
        obj = _object_en(sent[m.end():], previous + " " + before)
        if _decide(obj, m.group(1) is not None, directive, dest, concrete):
            return m.start()
    for m in _VERB_KO.finditer(sent):
        tail = sent[m.end():]
        if _NEG_KO.match(tail) or _PASSIVE_KO.match(tail) or _NOMINAL_KO.match(tail):
            continue
        rest = re.split(r"[.!?。]", tail, maxsplit=1)[0]
        before = sent[:m.start()]
        ai = bool(_AI_SUBJECT_KO.search(sent))
        # An obligation is a request to the reader unless it names someone else who owes it
        # ("회사는 … 보내야 한다" is a rule about the company).
        obliged = bool(_OBLIGATION_KO.search(rest)) and (ai or not _third_party_topic(before))
        directive = bool(_DIRECTIVE_KO.search(rest)) or obliged or ai
        obj = _object_ko(before, previous)
        if _decide(obj, m.group(1) is not None, directive, dest, concrete):
            return max(0, len(before) - 40)
    return None
