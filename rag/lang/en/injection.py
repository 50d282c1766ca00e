"""English words and patterns that tell a request to send the conversation, the user's data or a secret
away (exfiltration): read by the context stage (rag.context.exfiltration)."""
from __future__ import annotations

# -- objects (rag.context.exfiltration compiles these with re.IGNORECASE) ----------------------------
# Determiners and quantifiers before an object noun ("the entire", "all of the").
DETERMINERS = (r"(?:(?:the|a|an|all|any|every|each|this|that|these|those|our|your|my|their|its|entire|whole|full|"
               r"complete|current|present|ongoing|raw|verbatim|exact|unredacted|plain|base64(?:-encoded)?|encoded|"
               r"so-far)\s+|(?:all|each|every|any|some|part|most)\s+of\s+(?:the\s+)?)*")
# The conversation: the chat, its messages, the user's questions, the system prompt.
CONVERSATION = (r"(?:conversations?|chat(?:\s*(?:history|histories|logs?|transcripts?|messages?|sessions?|contents?|"
                r"threads?|records?))?|chats|chatlogs?|dialog(?:ue)?s?|transcripts?|message history|context window|"
                r"system (?:prompt|message)|session (?:history|data|contents?|transcripts?)|"
                r"(?:previous|prior|earlier|past|recent|last|user'?s?'?|the user'?s|users'|human'?s)\s+(?:\w+\s+)?"
                r"(?:messages?|questions?|inputs?|queries|prompts?|turns|replies|requests|answers|responses)|"
                r"(?:everything|anything|whatever|what|all)\s+(?:that\s+)?(?:the user|the human|i|we|you and i)\s+"
                r"(?:has\s+|have\s+)?"
                r"(?:said|told you|wrote|written|typed|asked|shared|entered|provided|discussed)|"
                r"(?:questions?|messages?|quer(?:y|ies)|prompts?|inputs?|requests?|repl(?:y|ies)|answers?|turns?)\s+"
                r"(?:that\s+|which\s+)?"
                r"(?:the\s+|a\s+|any\s+)?users?\s+(?:\w+\s+)?(?:asks?|asked|sends?|sent|types?|typed|writes?|wrote|enters?|"
                r"entered|"
                r"submits?|submitted|makes?|made|gives?|gave|says?|said)|"
                r"(?:your|the) (?:instructions|prompt|hidden prompt|initial prompt))\b")
# Secrets: passwords, keys, tokens, card and account numbers.
SECRET = (r"(?:passwords?|passcodes?|pin (?:codes?|numbers?)|credentials|api[ _-]?keys?|access tokens?|"
          r"auth(?:entication)? tokens?|"
          r"bearer tokens?|session (?:tokens?|cookies?|ids?|keys?)|cookies|secret keys?|private keys?|ssh keys?|"
          r"otp codes?|one-time (?:codes?|passwords?)|2fa codes?|login (?:details|credentials|information)|"
          r"(?:credit |debit )?card (?:numbers?|details)|social security numbers?|ssns?|bank account (?:numbers?|details))")
# The user's data, or a secret.
DATA = (r"(?:(?:user'?s?'?|users'|the user'?s|human'?s)\s+(?:\w+\s+){0,2}?(?:data|information|info|details|pii|"
        r"e-?mails?(?: address(?:es)?)?|phone(?: numbers?)?|address(?:es)?|names?|accounts?|records|files|documents|"
        r"contacts|location|history|" + SECRET + r")|" + SECRET + r"|"
        r"(?:e-?mail addresses|emails|phone numbers|names|addresses|contacts?|contact details|personal (?:data|details|"
        r"information)|account numbers|card numbers|data|information|details)\s+(?:that\s+|which\s+)?(?:the\s+|a\s+|any\s+)?"
        r"users?\s+(?:\w+\s+)?(?:mentions?|mentioned|provides?|provided|shares?|shared|enters?|entered|types?|typed|gives?|"
        r"gave|sends?|sent|writes?|wrote|says?|said)|"
        r"(?:everything|all|anything) (?:you (?:know|have|remember|learned|collected)|(?:stored|saved|collected)) about "
        r"(?:the |this )?users?)\b")
# A container of the object ("a summary of", "the rest of"), after DETERMINERS: the object follows it.
CONTAINER = (r"(?:summary|summaries|copy|copies|transcript|logs?|dump|records?|contents?|"
             r"text|full text|list|digest|excerpts?|snippets?|version|encoding|export|history|rest|"
             r"remainder|details|parts?|portions?|everything)\s+of\s+")
# A pronoun object ("it", "the summary"): its antecedent is read from this and the previous sentence.
ANAPHOR = (r"^(?:it|them|this|that|these|those|everything|all of (?:it|this|that|them)|"
           r"the (?:result|results|summary|output|text|whole thing|lot|above)|both)\b")
# Where the object noun phrase after a verb ends: a preposition or conjunction, or punctuation (re.split).
OBJECT_END = (r"\s+(?:to|into|onto|in|at|via|through|using|with|by|on|as|over|for|from|inside|within|then|so|"
              r"before|after|when|if|because|while|and)\s+|[,;:.!?]")
# An indirect object before the object ("send us your password"): removed before reading the object.
INDIRECT_OBJECT = r"^(?:me|us|him|her|them)\s+(?=\S)"

# -- verbs ------------------------------------------------------------------------------------------
# Sending verbs (group 1 of VERB) and placing verbs (group 2).
SEND_VERBS = (r"send|forward|post|upload|transmit|transfer|e-?mail|mail|leak|exfiltrate|relay|deliver|share|sync|dump|"
              r"report|submit|publish|ship|pipe|push|beacon|broadcast|export|fax|text|dm|tweet")
PLACE_VERBS = (r"append|attach|include|add|put|insert|embed|encode|paste|copy|write|place|pass|enter|type|"
               r"concatenate|inject|log|store|save|render|load|fetch|visit|open|request|call")
VERB = r"\b(?:(" + SEND_VERBS + r")|(" + PLACE_VERBS + r"))(?:s|es)?\b"

# A message or request that carries the object ("compose an email to … containing the user's salary",
# "open https://… followed by the user's last message"): its verbs, its article, its nouns (a masked URL
# is one more, added by rag.context.exfiltration) and the words that attach the object.
CARRY_VERBS = r"compose|write|draft|send|create|make|issue|open|visit|load|fetch|call|render"
CARRY_ARTICLE = r"(?:an?\s+|the\s+)?"
CARRY_NOUNS = r"e-?mail|message|request|post|api call|webhook call|link|url|image"
CARRY_LINKS = r"containing|with|including|that (?:contains|includes)|carrying|attaching|followed by|plus|appending"

# -- mood (each searched in the text before the verb) --------------------------------------------------
# A negated verb ("do not send", "never forward").
NEGATION = r"(?:\b(?:not|never|cannot|nor|no one|nobody)\b|n't)\s+(?:\w+\s+){0,2}$"
# "do not forget to": a negation that is a directive.
NOT_FORGET = r"(?:not|n't)\s+forget\s+to\s+$"
# A directive to the reader: an imperative at a clause start, "you must", "make sure", "tell the user".
DIRECTIVE = (
    r"(?:^|[,;:—–-]|\b(?:and|then|or|also|please|kindly|now|next|finally|first|afterwards|immediately|quietly|"
    r"silently|secretly|just|simply|always)\b)\s*(?:(?:please|kindly|now|then|also|immediately|quietly|silently|"
    r"secretly|just|simply|always|first|finally|next)[,]?\s+)*$|"
    r"\b(?:you|assistant|ai|model|bot|chatbot|llm|gpt|agent)\s+(?:must|should|shall|will|need to|needs to|have to|"
    r"has to|"
    r"are to|is to|are required to|is required to|are instructed to|is instructed to|are expected to|can|may)\s+"
    r"(?:now\s+|also\s+|always\s+|immediately\s+|then\s+|quietly\s+|silently\s+|secretly\s+)?$|"
    r"\b(?:remember|make sure|be sure|forget|you are|your (?:task|job|goal|mission|next step|instruction) is|"
    r"i need you|i want you|we need you|we want you|(?:important|essential|necessary|required|mandatory) (?:that you|to)|"
    r"(?:tell|ask|instruct|remind|urge|get|have) (?:the )?(?:users?|readers?|them|customers?)|"
    r"(?:is|are) (?:required|instructed|expected|asked) to)\s+(?:to\s+)?$")
# A list item's start (a bullet, "1.", "step 2:"): the verb after it is an imperative (matched).
LIST_START = r"^\s*(?:[-*•>]\s*|\(?\d+[.)]\s*|\(?[a-z][.)]\s+|step \d+[:.]?\s*)?$"

# -- destinations -----------------------------------------------------------------------------------
# A named destination ("the following URL", "an external server", a webhook, an @handle, a tool call).
DESTINATION = (
    r"\b(?:this|that|the following|following|the below|below|the above|my|our|an? external|external|a remote|remote|"
    r"the attacker'?s?|attacker'?s?|a third[- ]party|third[- ]party|another|the specified|specified|given|provided|"
    r"the|an?|hidden|secret)\s+(?:url|link|address|endpoint|server|webhook|site|website|web ?page|domain|host|inbox|"
    r"mailbox|e-?mail(?: address)?|api|bucket|channel|ip(?: address)?|pastebin)\b|"
    r"\b(?:url|link|address|endpoint|webhook|server)\s+(?:below|above|provided|given|here)\b|"
    r"\b(?:pastebin|webhook|telegram|discord|slack channel)\b|(?<![\w.])@[a-z0-9_]{3,}\b|"
    r"\b(?:search query|tool call|api call|web request|http request|get request|post request|image url|browser)\b")

# -- placeholders -----------------------------------------------------------------------------------
# Words in a URL's placeholder that stand for the chat or a secret ({conversation}, ${api_key}).
PLACEHOLDER_WORDS = (r"conversation|chat|history|messages?|transcript|"
                     r"dialog(?:ue)?|system[_ -]?prompt|prompt|previous|secret|password|credentials?|token|api[_ -]?key|"
                     r"user[_ -]?(?:data|info|messages?|questions?|input|email|name)")
