"""English phrases of retrieved text that address the assistant instead of informing it (overriding its
instructions, a new role, asking for its prompt, steering its answer): read by the context stage (rag.context.signals)."""
from __future__ import annotations

# Who the text may address: the assistant, as English text names it (part of PATTERNS below).
AI = (r"(?:ai|a\.i\.|assistant|chatbot|chat\s?bot|language model|llm|gpt|chatgpt|claude|gemini|copilot|"
      r"the model|bot)")
# The same, without the words that are also job titles ("assistant"): never a person.
AI_STRICT = r"(?:ai|a\.i\.|chatbot|chat\s?bot|language model|llm|gpt|chatgpt|copilot)"
# A new identity for the assistant, or its rules lifted: what turns "you are now …" into a role hijack.
PERSONA_NOUN = (r"(?:ai|a\.i\.|chatbot|chat\s?bot|bot|language model|llm|gpt|chatgpt|dan|jailbroken|persona|character|"
                r"assistant(?!\s+(?:manager|director|professor|engineer|editor|to|coach|principal|secretary|"
                r"teacher|chief|head|general|attorney|vice|dean)))\b")
UNBOUND = (r"(?:(?:without|with no|has no|have no|no|free of|free from)(?: any| all)? (?:\w+ )?(?:restrictions|limits|"
           r"limitations|rules|filters|guidelines|censorship|boundaries|constraints|content polic\w*|ethical \w+)|"
           r"(?:bound|restricted|limited|constrained) by (?:your |any |the |its )?(?:rules|guidelines|instructions|"
           r"programming|polic(?:y|ies)|restrictions|filters|content polic|safety)|"
           r"free (?:from|of) (?:all |any |your )?(?:rules|restrictions|guidelines|filters)|"
           r"(?:developer|debug|maintenance|admin|god|sudo|root|dan|jailbreak|unrestricted) mode|"
           r"\b(?:unrestricted|unfiltered|uncensored|jailbroken)\b)")

# (kind, pattern) for every English phrase signal, kind a key of rag.context.signals.SIGNAL_SCOPE; compiled
# there with re.IGNORECASE | re.MULTILINE.
PATTERNS: tuple[tuple[str, str], ...] = (
    # -- override: set aside what the assistant was told ------------------------------------
    ("override", r"\b(?:ignore|disregard|forget|override|bypass|drop|abandon)\b[^.\n]{0,40}?"
                 r"\b(?:(?:all|any|every|the|your|these|those)\s+)*"
                 r"(?:previous|prior|above|earlier|preceding|original|initial|system|existing|other|safety|"
                 r"developer|default|current)\s+(?:\w+\s+)?(?:instructions?|prompts?|rules|guidelines|directions|"
                 r"directives|messages?|context|constraints|policies|sources|documents)\b"),
    ("override", r"\b(?:ignore|disregard|forget|override|bypass)\b\s+(?:all\s+|any\s+)?(?:your|the system'?s?)\s+"
                 r"(?:instructions?|prompts?|rules|guidelines|programming|training|directives)\b|"
                 r"\b(?:ignore|disregard|forget)\b[^.\n]{0,20}?\b(?:everything (?:you|above|else|before)|"
                 r"what you (?:were|have been) told|the above|all of the above|all (?:previous|prior) (?:text|input))"),
    ("override", r"(?:^|[.!?:\]>)]\s*|\n)\s*(?:please\s+|now\s+|just\s+|so\s+)?(?:ignore|disregard|forget|override|bypass)\s+"
                 r"(?:all\s+|any\s+|the\s+|your\s+|these\s+|those\s+|my\s+)*(?:instructions?|prompts?|rules|guidelines|"
                 r"directions|directives|constraints|system message|context|restrictions|safety)\b"),
    ("override", r"\b(?:ignore|disregard|forget|set aside|put aside|override|bypass|discard|drop|abandon|throw out)\s+"
                 r"(?:(?:all|any|the|your|of|these|those)\s+)*(?:\w+\s+)?(?:instructions?|guidance|directions|rules|guidelines|"
                 r"prompts?|directives|orders|commands|constraints|polic(?:y|ies)|programming|training)\b[^.\n]{0,30}?"
                 r"(?:\byou (?:were|have been|had been) (?:given|told|provided|configured)|\byou (?:received|got)|"
                 r"\b(?:given|received|provided) (?:to you )?(?:earlier|before|previously)|\bearlier\b|\bpreviously\b|"
                 r"\bso far\b|\buntil now\b|\bup to now\b|\bbefore this\b)"),
    ("override", r"\b(?:all |any |the )?(?:prior|previous|earlier|preceding|original|system) (?:instructions|directives|rules|"
                 r"guidelines|prompts?) (?:are|is|have been) (?:revoked|void|cancel+ed|obsolete|outdated|superseded|"
                 r"withdrawn|no longer valid)|\b(?:instructions?|rules) you (?:received|were given) (?:before|earlier)"
                 r"[^.\n]{0,30}?\b(?:are|is) (?:void|obsolete|outdated|superseded|revoked|no longer)"),
    ("override", r"\bnew (?:system )?(?:instructions?|rules|directives?|orders)\s*[:：]|"
                 r"\b(?:instructions?|rules) (?:above|before this) (?:are|is) (?:void|cancel+ed|obsolete|outdated)|"
                 r"<\s*/?\s*(?:system|system[_ -]?prompt|instructions?)\s*>"),
    ("override", r"\b(?:your|the|all|any|previous|prior|earlier|original|system)\s+(?:\w+\s+){0,2}?(?:instructions|guidelines|"
                 r"rules|directives|prompts?|restrictions|policies|constraints)\b[^.\n]{0,40}?\b(?:you|your)\b[^.\n]{0,40}?"
                 r"\b(?:no longer (?:apply|applies|valid|in effect|binding|matter)|(?:are|is) (?:now )?(?:void|revoked|cancel+ed|"
                 r"lifted|suspended|obsolete|superseded|disabled|invalid))|"
                 r"\b(?:do not|don't|never|stop) (?:follow|obey|apply|heed)(?:ing)? (?:any (?:of )?)?(?:your|the system'?s?) "
                 r"(?:\w+ )?(?:instructions|guidelines|rules|prompt|directives|programming|policies)"),
    ("override", r"\b(?:answer|respond|reply|speak)\s+(?:freely\s+)?without (?:any )?(?:restrictions|filters|censorship|limits|"
                 r"rules|guidelines)\b"),
    ("override", r"\bfollow only (?:the )?(?:instructions|directions|rules|guidance) (?:in|of|from) this (?:document|section|"
                 r"page|text|file|passage)|\bthis (?:document|section|page|text)'s (?:instructions|directions|rules) "
                 r"(?:take|takes|have|has) (?:precedence|priority)|\bthe (?:instructions|directions|rules) (?:below|in this "
                 r"(?:document|section)) (?:supersede|override|replace|take precedence)"),
    # -- role: a new identity for the assistant ----------------------------------------------
    ("role", r"\b(?:you are now|you're now|from now on,? you(?:'re| are| will be)|henceforth,? you are|"
             r"your new (?:role|identity|persona|name) is|you will now (?:act|behave|respond) as)\s+"
             r"(?:(?:an?|the|my|called|named)\s+)?(?:[\w-]+\s+){0,3}?" + PERSONA_NOUN),
    ("role", r"\b(?:you are now|you're now|from now on,? you|you are no longer|you're no longer|you will now|"
             r"henceforth,? you)\b[^.\n]{0,60}?" + UNBOUND),
    ("role", r"\b(?:from now on,? |henceforth,? |starting now,? )?you (?:shall|will|must|should) (?:now |henceforth |from now on )?"
             r"(?:respond|reply|answer|act|behave|speak|write|pose) as (?:if you were )?(?:['\"“‘][^'\"”’\n]{1,30}['\"”’]|"
             r"(?:an?|the) (?:[\w-]+\s+){0,2}?" + PERSONA_NOUN + ")"),
    ("role", r"\byou are\s+(?:['\"“‘][^'\"”’\n]{1,30}['\"”’]|[A-Z][\w-]+),?\s+(?:an?|the)\s+(?:[\w-]+\s+){0,3}?"
             + PERSONA_NOUN + r"|\b(?:never|don't|do not) break character\b|\bstay in character\b"),
    ("role", r"\b(?:act|behave|respond|answer) as (?:if you (?:were|are) )?(?:an?\s+|the\s+)?(?:[\w-]+\s+){0,2}?"
             r"(?:dan|jailbroken|unrestricted|unfiltered|uncensored|evil)\b|"
             r"\bact as (?:an?|the) (?:[\w-]+\s+){0,2}?" + AI_STRICT + r"\b|"
             r"\b(?:pretend|imagine|roleplay|role-play)\b[^.\n]{0,20}?\b(?:you are|you're|to be|as)\b[^.\n]{0,40}?"
             r"(?:" + PERSONA_NOUN + "|" + UNBOUND + ")"),
    ("role", r"\b(?:enter|entering|switch(?:ing)? (?:to|into)|activate|enable|you are in|you're in|now in)\s+"
             r"(?:the\s+)?(?:dan|jailbr\w*|god|unrestricted|unfiltered|uncensored)\s+mode\b|"
             r"\b(?:dan|jailbreak|god) mode (?:enabled|activated|on)\b|\bdo anything now\b|"
             r"\b(?:developer|debug|admin|god|dan|jailbreak|unrestricted|maintenance) mode (?:is )?(?:now )?(?:enabled|"
             r"activated|on|unlocked)\b[^\n]{0,80}?(?:\banything\b|\bno (?:rules|restrictions|limits|filters)|\bignore\b|"
             r"\bpolic(?:y|ies)\b|\brestrictions\b|\bunrestricted\b|\buncensored\b)|"
             r"\byou (?:can|may|are (?:free|allowed|able) to) now (?:say|do|answer|write|generate|output) anything\b|"
             r"\byou(?: have|'ve| are|'re| were) (?:now |been )*(?:jailbroken|unlocked|freed|liberated|reprogrammed|unshackled)\b"),
    # -- prompt_leak: ask for the assistant's instructions ----------------------------------
    ("prompt_leak", r"(?<!not )(?<!never )(?<!n't )\b(?:reveal|print|show|output|repeat|leak|display|dump|disclose|"
                    r"recite|write out|tell me|send|copy|include|paste|quote|give|share|provide|list|spell out|read back|"
                    r"expose|translate)\b[^.\n]{0,40}?\b(?:(?:your|the) system prompt|system prompt|hidden "
                    r"(?:configuration|instructions|prompt|rules)|your (?:instructions|prompt|configuration|initial "
                    r"instructions|rules|guidelines)|(?:the |your )?(?:hidden |initial |original )prompt|"
                    r"(?:the )?(?:text|words|instructions|message) above|everything above|your initiali[sz]ation|(?:the |your )?"
                    r"developer message|your (?:\w+ ){0,2}(?:instructions|prompt|configuration|rules|guidelines|"
                    r"directives|system message)|(?:the )?(?:instructions|rules|guidelines|prompt|directives) (?:you (?:were|have "
                    r"been) given|you received|given to you))\b"),
    ("prompt_leak", r"\bwhat (?:are|were|is|was) your (?:\w+ )?(?:instructions|rules|guidelines|system prompt|prompt|"
                    r"directives|configuration|system message)\b"),
    # -- steering: tell the assistant what to answer ----------------------------------------
    ("steering", r"\b(?:note|message|instructions?|reminder|notice|attention)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?"
                 + AI + r"s?\b|(?<!such )(?<!known )(?<!used )\b(?:as|if you are|if you're)\s+(?:an?\s+)?" + AI_STRICT
                 + r"\b(?!\s+(?:tools?|systems?|products?|services?|technolog|solutions?|features?|models?|applications?|"
                 r"platforms?))|"
                 r"\bif you are an? (?:assistant|model|bot)\b|^\s*(?:hey\s+|dear\s+)?" + AI + r"\s*[,:]|"
                 r"\bto (?:any|all|every|the) (?:" + AI_STRICT + r"|assistants?|models?|bots?)s?\s+"
                 r"(?:reading|processing|summari[sz]ing|parsing|indexing|that reads?)\b"),
    ("steering", r"\b(?:end|begin|start|finish|conclude|close|prefix|sign)\s+(?:your|every|each|all|any)\s+(?:\w+\s+)?"
                 r"(?:responses?|answers?|repl(?:y|ies)|outputs?|messages?)\s+(?:with|by)\b|"
                 r"\b(?:whatever|regardless of|no matter) (?:what )?(?:the )?(?:question|user|prompt|query|you are asked)|"
                 r"\b(?:attention|important|notice|reminder)\s*[,:]?\s*(?:to\s+)?(?:the\s+|any\s+|all\s+)?(?:ai|llm|language "
                 r"models?|chatbots?|assistants?)\s*[:,]"),
    ("steering", r"\b(?:respond|reply|talk|speak|answer) to (?:the |every |any |each )?users?\b(?!'s? (?:ticket|request|"
                 r"email|question within))|\bfrom now on,?\s+(?:you\s+(?:will|must|should|shall)\s+|always\s+|only\s+)?(?:respond|"
                 r"answer|reply|speak)\b|(?:^|[.!?]\s+)(?:please\s+)?(?:respond|answer|reply|speak)\b[^.\n]{0,40}?\bfrom now on\b|"
                 r"\bask (?:the |every |each )?users? (?:for|to (?:provide|enter|share|confirm|send|type|give)) (?:their |his |her |"
                 r"the )?(?:\w+ )?(?:password|passcode|credentials|pin|otp|one-time|card number|credit card|bank account|"
                 r"social security|api key|login)"),
    ("steering", r"\b(?:the|an?|you(?:r)?) (?:assistant|model|bot)\s+(?:must|should|shall|will|needs? to)\s+"
                 r"(?:always\s+|only\s+|now\s+)?(?:answer|respond|reply|say|tell|state|claim|recommend|mention|cite)\b"),
    ("steering", r"\b" + AI_STRICT + r"s?\b[^.\n]{0,40}?\b(?:must|should|shall|will|needs? to)\b"
                 r"[^.\n]{0,20}?\b(?:answer|respond|reply|say|tell|state|cite|include|claim|recommend)"),
    ("steering", r"\bbefore (?:answering|responding)\b|\b(?:when|before|whenever) you (?:answer|respond|reply|summari[sz]e)\b|"
                 r"\bwhen (?:summari[sz]ing|answering|responding to) (?:this (?:document|text|page|passage)|any question|the user)\b|"
                 r"\bwhen(?:ever)? (?:asked|questioned) (?:about|for|whether|if|how|what)\b[^.\n]{0,80}?\b(?:(?:say|answer|"
                 r"respond|reply|state|claim) (?:that|with|only)|always (?:say|answer|respond|reply|state|claim))\b|"
                 r"\btell (?:the )?(?:users?|readers?|customers?) (?:that|to)\b|"
                 r"\bin (?:every|each|all|your) (?:answers?|responses?|replies)\b|\bstate (?:this|it) as (?:a )?fact\b|"
                 r"\b(?:always|only) (?:answer|respond|reply) (?:with|that)\b|\bregardless of (?:the|what the|any) "
                 r"(?:question|user|prompt|query)|"
                 r"\bdo not (?:mention|reveal|tell|disclose)\b[^.\n]{0,30}\b(?:this|these) (?:instructions?|messages?|notes?)"),
)

# What may follow a forged "[system]:" turn label in English; rag.context.signals joins these (and the
# Korean ones) into its forged-turn pattern.
TURN_OPENERS = r"you\b|your\b|from now|ignore|disregard|new (?:instructions|rules)"  # after "system:", "[admin]:" …
BRACKET_TURN_OPENERS = r"you\b|ignore|disregard|from now|new instructions"  # after "[system]" with no colon
