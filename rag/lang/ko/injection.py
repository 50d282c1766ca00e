"""Korean words and patterns that tell a request to send the conversation, the user's data or a secret
away (exfiltration): read by the context stage (rag.context.exfiltration)."""
from __future__ import annotations

# -- objects --------------------------------------------------------------------------------------
# The user, as Korean text names them (the loanword "user" included): part of the object patterns below.
USER = r"(?:사용자|이용자|유저|질문자|user)"

# The conversation mentioned anywhere in a sentence (an anaphor's antecedent, a container's scope,
# the cheap test before reading sentences). Compiled with re.IGNORECASE by rag.context.exfiltration.
CONVERSATION = (r"대화|채팅|챗|프롬프트|(?:이전|앞선|앞의|지금까지의?|과거)\s*(?:질문|메시지|메세지|입력|요청|답변)|"
                + USER + r"(?:가|의|께서)?\s*(?:입력한|보낸|한|남긴|작성한)?\s*(?:질문|메시지|메세지|입력|요청|대화)")
# The user's data or a secret mentioned anywhere in a sentence (as CONVERSATION, for data).
DATA = (USER + r"(?:의|들의)?\s*\S*(?:정보|데이터|연락처|이메일|번호|주소|이름|자료|파일|계정)|"
        r"비밀\s*번호|패스워드|인증\s*(?:정보|번호|키|토큰)|액세스\s*토큰|API\s*키|세션\s*(?:쿠키|토큰|키)|"
        r"로그인\s*정보|계정\s*정보")

# Head nouns of an object noun phrase (without its particle), by what they name; rag.context.exfiltration
# reads the last object- or topic-marked noun before a Korean verb against them.
# The conversation itself.
CONVERSATION_HEADS = frozenset({"대화", "채팅", "챗", "대화내용", "대화기록", "대화내역", "채팅기록", "채팅내역", "프롬프트",
                                "시스템프롬프트", "대화록", "대화문"})
# A head that ends in one of these names the conversation too (이전대화, 시스템프롬프트).
CONVERSATION_ENDINGS = ("대화", "채팅", "프롬프트")
# Messages that are the conversation only when QUALIFIER says whose or which (이전 질문, 사용자가 입력한 메시지).
QUALIFIED_HEADS = frozenset({"질문", "메시지", "메세지", "입력", "입력값", "입력문", "요청", "질의", "답변", "응답", "질문들",
                             "메시지들"})
# What makes a QUALIFIED_HEADS noun the conversation (searched in the words before it; re.IGNORECASE).
QUALIFIER = (r"이전|앞선|앞의|지금까지|과거|최근|나눈|주고받은|오간|세션|대화|여기서|이곳에서|" + USER
             + r"|너에게|당신에게|AI에게")
# Secrets.
SECRET_HEADS = frozenset({"비밀번호", "패스워드", "암호", "인증번호", "인증정보", "토큰", "액세스토큰", "API키", "쿠키", "세션쿠키",
                          "계정정보", "로그인정보", "OTP", "카드번호", "계좌번호", "주민등록번호", "비밀키", "개인키"})
# A head that ends in one of these names a secret too (관리자비밀번호).
SECRET_ENDINGS = ("비밀번호", "패스워드")
# Data: the user's only when USER is named before it.
DATA_HEADS = frozenset({"개인정보", "정보", "데이터", "자료", "연락처", "이메일", "전화번호", "주소", "이름", "신상정보",
                        "위치정보", "파일", "계정", "신용카드"})
# Containers (대화 내용, 요약본): what they hold is read from the words before them.
CONTAINER_HEADS = frozenset({"내용", "기록", "내역", "로그", "이력", "전문", "전체", "요약", "요약본", "요약문", "결과", "사본",
                             "목록", "원문", "텍스트", "데이터", "정보", "전부", "모두", "일부"})
# Containers that mean "all of it": what they hold is read from the previous sentence too.
ALL_HEADS = ("전부", "모두")
# Pronouns: their antecedent is read from this and the previous sentence.
ANAPHOR_HEADS = frozenset({"그것", "이것", "그걸", "이걸", "이", "그", "이들", "그것들", "이것들", "모두", "전부", "그대로"})

# A token that ends in an object or topic particle; group 1 is the noun.
PARTICLE = r"^(.+?)(?:을|를|은|는|도|만)$"
# The object particles: a noun with one is the verb's object.
OBJECT_PARTICLES = ("을", "를")
# A token that ends in a topic particle (회사는); group 1 is the noun.
TOPIC = r"^(.+?)(?:은|는)$"
# A conjunct of the object (주민등록번호와 전화번호를); group 1 is the noun.
CONJUNCT = r"^(.+?)(?:와|과|및|,)$"

# -- verbs ----------------------------------------------------------------------------------------
# Sending verbs (group 1 of VERB) and placing verbs (group 2): a sentence's request to exfiltrate.
STRONG_VERBS = r"전송|전달|송신|송부|발송|업로드|유출|공유|포워딩|회신|제출|게시|반출|누설"
PLACE_VERBS = r"첨부|입력|삽입|추가|포함|기록|복사|기재|인코딩|저장|요청"
VERB = (r"(?:((?:" + STRONG_VERBS + r")(?=(?:시켜|시키)?(?:하|해|할|한|합|했|토록))|내보내|보내|보낼|넘겨|넘기|"
        r"올려|올리|부쳐)|((?:" + PLACE_VERBS + r")(?=(?:시켜|시키)?(?:하|해|할|한|합|했|토록))|붙여\s*넣|"
        r"붙여넣|붙여|붙이|붙인|넣(?=어|으|고|을|은)))")

# -- mood (each matched at the text right after the verb, except AI_SUBJECT) ------------------------
# A negated verb (보내지 마세요, 전송하여서는 아니 된다).
NEGATION = r"^\s*(?:하|해|시키|시켜)?\s*(?:지\s*(?:마|말|않|못|아니)|서는\s*(?:안|아니)|선\s*안|면\s*안\s*(?:되|됩|돼))"
# A passive verb (전송된다, 전송받은).
PASSIVE = r"^(?:되|돼|됩|된|될|받|지(?!\s*(?:마|말|않|못|아니))|진|집)"
# A verb in a noun clause or a condition (전송하는 경우, 전송할 수, 보내려면).
NOMINAL = (r"^(?:시키|시켜)?(?:하|해)?(?:는|은|ㄴ|한|할|을|낸|낼|린|릴|긴|길)?\s*(?:것(?!\s*[.!]?\s*$)|경우|때|행위|자\b|"
           r"사람|수\s|바\b|목적|기능|서비스|방법|방식|절차)|^(?:하|해)?(?:면|려면|려는|려고|거나|든지)")
# A directive ending (보내세요, 전송할 것), matched at the end of the verb's clause.
DIRECTIVE = (r"(?:라|세요|십시오|시오|주세요|줘|줘요|주십시오|[할을낼릴길일킬둘줄]\s*것|해|어|봐|렴|거라|바람|바랍니다|"
             r"요망|하자|합시다)\s*[\"'」』)\]]*\s*[!.。]*\s*$")
# An obligation (보내야 한다), a directive unless a third party owes it.
OBLIGATION = r"(?:야|어야|여야)\s*(?:한다|합니다|함|해|돼|된다|됩니다|할\s*것)|하도록\s*(?:한다|합니다|되어)"
# The assistant as the topic or subject (AI는, 너는): whatever it is told is a directive (re.IGNORECASE).
AI_SUBJECT = (r"(?:(?<![A-Za-z])(?:AI|GPT|LLM)|인공지능|챗봇|어시스턴트|언어\s*모델|(?<![가-힣])(?:너|당신|그대))"
              r"(?:은|는|이|가)\s")

# -- destinations -----------------------------------------------------------------------------------
# A named destination (다음 주소, 아래 링크, 외부 서버, a webhook, an @handle); re.IGNORECASE.
DESTINATION = (r"(?<![가-힣])(?:다음|아래|위|이|해당|지정된|지정한|특정|외부|공격자(?:의)?|원격|제3자(?:의)?|별도(?:의)?|알려\s*준|"
               r"알려\s*드린|적힌|명시된|상기|내)(?:\s*의)?\s+(?:주소(?!지)|링크|URL|url|서버|사이트|웹\s*사이트|홈페이지|웹훅|"
               r"엔드포인트|이메일(?:\s*주소)?|"
               r"메일(?:\s*주소)?|메일함|웹\s*페이지|도메인|채널|API|텔레그램|디스코드)|웹훅|텔레그램|디스코드|"
               r"(?<![\w.])@[A-Za-z0-9_]{3,}")

# -- placeholders -----------------------------------------------------------------------------------
# Words in a URL's placeholder that stand for the chat ({대화}, ${사용자}): after the English ones.
PLACEHOLDER_WORDS = r"대화|이전|비밀번호|사용자"
