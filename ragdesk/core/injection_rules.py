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

# (pattern, reason, needles): a pattern is tried on a view only when the lower-cased view holds one of its
# needles (cheap to look for: the patterns cost ~10 µs a chunk each); matched case-insensitively on each
# view of the text (see injection._views). A
# space matches any run of white space, [^.\n] any character but a full stop (see injection._across_lines);
# patterns starting with ^ are read line by line.
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
    (r"^\s*(system|assistant)\s*:", MARKER, ("system", "assistant")),
    (r"^#{1,3}\s*(system|assistant|instruction)s?\s*:?\s*$", MARKER, ("#",)),
]
