"""The patterns behind injection.detect_injection: instruction-like passages in six languages, images
that would carry data out, fake ends of the excerpts and chat-template role markers. Data only."""

from __future__ import annotations

IGNORE = "override of earlier instructions"
ROLE = "tries to assign the model a new role"
SYSTEM = "mentions the system prompt"
MARKER = "chat role marker"
NEW = "announces new instructions"
FAKE_END = "pretends to end the excerpts"
EXFIL = "an image whose address would carry data out"
HIDE = "asks to hide something from the user"
ADDRESS = "addresses the model reading the notes"
TOOL = "asks the model to call a tool"
REVEAL = "asks for the conversation or the prompt"
OUT = "a link that would carry the conversation out"

# (pattern, reason, needles): a pattern is tried on a view only when the lower-cased view holds one of its
# needles (a needle "a&b": both; cheap to look for: the patterns cost ~10 µs a chunk each); matched
# case-insensitively on each view of the text (see injection._views). A space matches any run of white
# space, [^.\n] any character but a full stop (see injection._across_lines); patterns starting with ^ are
# read line by line.

# Who the text speaks to when it speaks to a model, and what that model is doing with the text.
_MACHINE = r"(ai|a\.i\.|llm|(large )?language models?|chat ?bots?|ai (agents?|models?|systems?|assistants?))s?"
_READING = r"(reading|processing|summari[sz]ing|parsing|scanning|seeing|analy[sz]ing)"

PATTERNS: list[tuple[str, str, tuple[str, ...]]] = [
    # English
    (
        r"\b(ignore|disregard|forget|override|set aside|pay no attention to|do not follow|don't follow|skip)\b"
        r"[^.\n]{0,40}\b(previous|prior|above|earlier|all|any|your|preceding|foregoing)\b[^.\n]{0,20}"
        r"\b(instructions?|prompts?|rules|directions|guidelines|guidance)\b",
        IGNORE,
        ("instruction", "prompt", "rule", "direction", "guideline", "guidance"),
    ),
    (
        r"\b(ignore|disregard|forget)\s+(all\s+|everything\s+)?(of\s+)?(the|what(ever)?\s+(is|was|came))\s+"
        r"(above|before|previous(ly)?|earlier)\b",
        IGNORE,
        ("ignore", "disregard", "forget"),
    ),
    (
        r"\bforget\s+(everything|all(\s+that)?|what)\s+(you\s+(were|have\s+been|'ve\s+been)\s+"
        r"(told|given|instructed)|(that\s+)?(was|has\s+been)\s+said)",
        IGNORE,
        ("forget",),
    ),
    (r"\bnew\s+(instructions?|rules|system\s+prompt)\s*:", NEW, ("new",)),
    (r"\bthe\s+real\s+instructions\s+(are|follow)\b", NEW, ("real",)),
    (
        r"\byou are now\b|\bfrom now on,? you\b|\bact as (an? )?(unrestricted|jailbroken|different)\b",
        ROLE,
        ("you", "act"),
    ),
    (r"\b(system|developer) (prompt|message|instructions?)\b", SYSTEM, ("system", "developer")),
    (
        r"\b(reveal|print|show|output|repeat|leak)\s+(me\s+)?(your|the)\s+(hidden|secret|initial|original|first|real)"
        r"\s+(instructions|prompt|rules)\b",
        SYSTEM,
        ("instructions", "prompt", "rules"),
    ),
    (r"\bdo not (tell|inform) the user\b", HIDE, ("tell", "inform")),
    # French
    (
        r"\b(ignore[sz]?|oublie[sz]?|ne tiens pas compte|ne tenez pas compte|fais abstraction|faites abstraction)\b"
        r"[^.\n]{0,40}\b(instructions|consignes|règles|directives)\b",
        IGNORE,
        ("instructions", "consignes", "règles", "directives"),
    ),
    (r"\boublie[sz]? tout ce qu(e|'|’)", IGNORE, ("oublie",)),
    (
        r"\b(tu es|vous êtes) (maintenant|désormais)\b"
        r"|\b(à partir de maintenant|désormais|dorénavant),? (tu es|vous êtes)\b",
        ROLE,
        ("maintenant", "désormais", "dorénavant"),
    ),
    (r"\bprompt (du )?système\b|\bmessage système\b", SYSTEM, ("système",)),
    # Czech
    (
        r"\b(ignoruj|ignorujte|zapomeň|zapomeňte|nevšímej si|nevšímejte si|nedbej|nedbejte)\b[^.\n]{0,40}"
        r"\b(předchozí\w*|dřívější\w*|všechny|výše uvedené)\b[^.\n]{0,20}\b(instrukc\w*|pokyn\w*|příkaz\w*)",
        IGNORE,
        ("instrukc", "pokyn", "příkaz"),
    ),
    (r"\bzapomeň(te)? na (všechno|vše)\b", IGNORE, ("zapomeň",)),
    (r"\b(nyní|teď) jsi\b|\bod (teď|této chvíle) jsi\b", ROLE, ("jsi",)),
    (r"\bsystémov(ý|ého|é) (prompt|pokyn)", SYSTEM, ("systémov",)),
    # Ukrainian
    (
        r"(ігноруй|ігноруйте|проігноруй|забудь|забудьте|не зважай на|не зважайте на)[^.\n]{0,40}"
        r"(попередні|усі|всі|вищезазначені)[^.\n]{0,20}(інструкції|вказівки|команди)",
        IGNORE,
        ("інструкції", "вказівки", "команди"),
    ),
    (r"(забудь|забудьте) (усе|все),? що", IGNORE, ("забудь",)),
    (r"(тепер|відтепер) ти\b", ROLE, ("тепер",)),
    (r"системн(ий|ого|і) (промпт|запит|інструкці)", SYSTEM, ("системн",)),
    # Italian
    (
        r"\b(ignora|ignorate|dimentica|non tenere conto delle|non considerare)\b[^.\n]{0,40}"
        r"\b(istruzioni|indicazioni)\b",
        IGNORE,
        ("istruzioni", "indicazioni"),
    ),
    (r"\bdimentica(te)? tutto (quello|ciò)\b", IGNORE, ("dimentica",)),
    (r"\b(ora|adesso) sei\b|\bda ora in poi sei\b|\bd'ora in poi sei\b", ROLE, ("sei",)),
    (r"\bprompt di sistema\b", SYSTEM, ("sistema",)),
    # German
    (
        r"\b(ignoriere|ignorieren sie|vergiss|missachte|missachten sie)\b[^.\n]{0,40}"
        r"\b(vorherigen|bisherigen|obigen|alle)\b[^.\n]{0,20}\b(anweisungen|instruktionen|befehle)\b",
        IGNORE,
        ("anweisungen", "instruktionen", "befehle"),
    ),
    (r"\bvergiss alles,? was\b", IGNORE, ("vergiss",)),
    (r"\bdu bist (jetzt|nun|ab sofort)\b|\b(ab jetzt|ab sofort|von nun an) bist du\b", ROLE, ("bist",)),
    (r"\bsystem-?prompt\b", SYSTEM, ("system",)),
    # Dismissing what the model was told, in any words: a verb of dropping and an object that is the model's orders.
    (
        r"\b(ignore|disregard|forget|set aside|put aside|throw out|discard|drop|abandon|cancel|override|overrule|"
        r"put (the |your |all )?[^.\n]{0,40} on hold)\b[^.\n]{0,40}\b(what(ever)? you (were|have been|'ve been) "
        r"(told|given|instructed|asked)|(your|the|their|its) (earlier |previous |prior |original |current |initial )?"
        r"(orders|guidance|instructions|directions|rules|task|guidelines|system (prompt|message|rules))"
        r"( you (were given|received|got))?)"
        r"|\bput (the|your|all|any) ([a-z]+ )?(orders|guidance|instructions|directions|rules|task|guidelines)"
        r"( you (were given|received|got))? on hold\b",
        IGNORE,
        ("told", "given", "instructed", "asked", "orders", "guidance", "instruction", "direction", "rule", "task",
         "guideline", "system"),
    ),
    (
        r"\b(whatever|what|everything|anything|all) (you were|you have been|you've been|your [a-z]+ (has )?)"
        r"(told|instructed|said|given)\b[^.\n]{0,40}\b((is|are|was) (cancelled|canceled|void|obsolete|invalid|"
        r"no longer valid)|no longer appl(y|ies))"
        r"|\b(previous|earlier|prior|original) (directions|instructions|rules|orders|guidance)"
        r"( you received)? (are|is) (void|cancelled|canceled|obsolete|invalid|no longer valid)"
        r"|\b(instructions|rules|guidance|directions|orders)( you (were given|received))? no longer appl(y|ies)\b",
        IGNORE,
        ("told", "instructed", "said", "given", "void", "cancel", "obsolete", "invalid", "no longer"),
    ),
    (
        r"\byour (only|sole|one|new|real|true|actual) (task|job|purpose|goal|objective|mission|role)\b"
        r"|\bthe only thing you (do|will do|may do|should do)\b",
        ROLE,
        ("only", "sole", "one", "new", "real", "true", "actual"),
    ),
    # Text that speaks to the model that will read it rather than to a person.
    (
        r"\b(words?|notes?|messages?|instructions?|orders|memo|reminders?) (to|for) (the |any |all |every )?"
        + _MACHINE + r"\b"
        r"|\b(to|for|attention|dear|hey),? (the |any |all |every )?" + _MACHINE
        + r",? (that is |who is |which is )?" + _READING + r"\b"
        r"|\b(attention|dear|hey),? (the )?" + _MACHINE + r"\s*[:,!]"
        r"|\b(ai|llm|language) (models?|agents?|assistants?) (must|should|are to|need to|have to|shall|reading this|"
        r"processing this)\b",
        ADDRESS,
        (" ai", "ai ", "a.i.", "llm", "language model", "chatbot", "chat bot"),
    ),
    (
        r"\b(to|for|attention|dear|hey),? (the |any |all |every )?(assistant|model)s?,? (that is |who is |which is )?"
        r"" + _READING + r"\b|\b(attention|dear|hey),? (the )?(model|assistant)\s*[:,!]",
        ADDRESS,
        tuple(f"{w}&{r}" for w in ("assistant", "model") for r in ("read", "process", "summar", "pars", "scann",
                                                                      "seeing", "analy", "dear", "attention", "hey")),
    ),
    (
        r"^\W*(ai|llm|chat ?bot|ai (agents?|models?)|language models?|assistant|llm instruction|ai instruction)s?\s*"
        r"[:,]\s*(?=[a-z ]{0,30}\b(you|your|ignore|disregard|forget|do not|don't|stop|never|always|must|should|"
        r"pretend|treat|run|reply|respond|answer|say|tell|write|insert|include)\b)",
        ADDRESS,
        ("ai:", "ai,", "llm", "chatbot", "chat bot", "models:", "models,", "model:", "model,", "assistant:",
         "assistant,", "instruction:", "agent:", "agent,", "agents:"),
    ),
    (r"\"role\"\s*:\s*\"(system|developer)\"", MARKER, ('"role"',)),
    (
        r"\b(repeat|print|copy( out)?|output|show|reveal|write out|dump)\s+(back\s+)?(everything|all( of)?( the)?|"
        r"the (whole|full|entire|complete))\b[^.\n]{0,25}\b(above|before this|conversation|context|chat|prompt|"
        r"instructions|you (were|have been|'ve been) given)\b",
        REVEAL,
        ("above", "before", "conversation", "context", "chat", "prompt", "instruction", "given"),
    ),
    (
        r"\b(call|invoke|use|trigger)\s+(your|the)\s+`?([a-z]+_[a-z_]+|browsing|browser|email|e-mail|http|shell|file|"
        r"search|web)`?\s+(tool|plugin)\b",
        TOOL,
        ("tool", "plugin"),
    ),
    (
        r"\b(link|url|address|image)\b[^.\n]{0,80}\b(conversation|chat history|history|question|notes|prompt|"
        r"messages?)\b[^.\n]{0,60}https?://\S*[?&]\S*="
        r"|https?://\S*[?&][\w-]+=\S*[^.\n]{0,60}\b(filled in|appended|url-?encoded|with the (user's|whole|full))",
        OUT,
        tuple(f"http&{w}" for w in ("conversation", "history", "question", "notes", "prompt", "message")),
    ),
    # Dismissing instructions in more languages: Spanish, Portuguese, Polish, Dutch, Russian, Chinese, Japanese.
    (
        r"\b(olvida|ignora|haz caso omiso de|no hagas caso de|desconsidera|ignore|desconsidere|esqueça|esqueca)\b"
        r"[^.\n]{0,50}\b(indicaciones|instrucciones|normas|reglas|instruções|instrucoes|orientações|orientacoes|regras)\b",
        IGNORE,
        ("indicaciones", "instrucciones", "normas", "reglas", "instru", "orienta", "regras"),
    ),
    (r"\b(a partir de ahora|desde ahora|ahora) eres\b|\b(a partir de agora|agora) (você é|tu és)\b", ROLE,
     ("eres", "você", "és")),
    (
        r"\b(zignoruj|ignoruj|zapomnij|nie zwracaj uwagi na)\b[^.\n]{0,50}"
        r"\b(polece\w*|instrukcj\w*|zasad\w*|wskazów\w*|reguł\w*)",
        IGNORE,
        ("polece", "instrukcj", "zasad", "wskazów", "reguł"),
    ),
    (r"\b(od teraz|teraz) jesteś\b", ROLE, ("jesteś",)),
    (r"\b(negeer|vergeet)\b[^.\n]{0,50}\b(instructies|regels|opdrachten)\b", IGNORE,
     ("instructies", "regels", "opdracht")),
    (r"\bje bent nu\b", ROLE, ("je bent nu",)),
    (
        r"(игнорируй|игнорируйте|забудь|забудьте|не обращай(те)? внимания на)[^.\n]{0,50}"
        r"(инструкци|указани|правил|команд)",
        IGNORE,
        ("инструкци", "указани", "правил", "команд"),
    ),
    (r"(теперь|отныне) ты\b|системн(ый|ого) (промпт|запрос)", ROLE, ("теперь", "отныне", "системн")),
    (r"(忽略|无视|無視|不要理会|不要理會|不理会|忘记|忘記|忘掉)[^。\n]{0,20}(指令|指示|规则|規則|提示|说明|要求)"
     r"|(指示|指令)[^。\n]{0,20}(無視|忘れ)", IGNORE, ("忽略", "无视", "無視", "理会", "理會", "忘")),
    (r"从现在开始[，,]?\s*你是|從現在開始[，,]?\s*你是|今から[^。\n]{0,10}(あなた|君)は", ROLE,
     ("现在", "現在", "今から")),
    (r"系统提示|系統提示|システムプロンプト", SYSTEM, ("提示", "システム")),
    # Markdown images whose address carries a placeholder for what the model knows ({conversation},
    # [DATA], $PROMPT, %s, ANSWER_TEXT): shown by a chat tool, the image request sends it out.
    (
        r"!\[[^\]\n]*\]\(\s*https?://[^)\s]*\?[^)\n]*?=\s*(?-i:\{|\[|<|\$|%s|(?![A-F0-9]{6}\b)[A-Z][A-Z_]{4,}(?![a-z0-9]))"
        r"[^)\n]*\)",
        EXFIL,
        ("![",),
    ),
    # The prompt's own structure faked: the excerpts closed early, a new excerpt or context opened.
    (
        r"</\s*excerpts?\s*>|<\s*excerpt\s+n\s*=|</\s*(context|documents?|instructions?|system)\s*>",
        FAKE_END,
        ("excerpt", "</"),
    ),
    (r"^\s*end of (the )?(excerpts|context|documents?|input)\b", FAKE_END, ("end",)),
    # Chat-template and role markers
    (
        r"<\|(im_start|im_end|system|user|assistant|endoftext)\|>|\[/?INST\]|<</?SYS>>",
        MARKER,
        ("<|", "inst]", "<<sys>>", "<</sys>>"),
    ),
    (r"^\s*(system|assistant|system_prompt|ai_instructions?|llm_instructions?)\s*:.*", MARKER,
     ("system", "assistant", "instruction")),
    (r"^#{1,3}\s*(system|assistant|instruction)s?\s*:?\s*$", MARKER, ("#",)),
]
