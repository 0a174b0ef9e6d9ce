"""The rules behind secrets.find_secrets: token formats, credentials' usual places, and the names
and values of assignments. Data only (plus two small predicates); the algorithm is in secrets.py."""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import unquote

# ---- Known token formats: a fixed prefix and an alphabet (gitleaks' rules, TruffleHog's detectors).
# Most prefixes are distinctive enough to be found glued to a word ("tokenghp_…", "ключsk-…"); the
# right edge must not run on into more of the token's alphabet.
_A = r"(?![A-Za-z0-9])"
# (kind, what must be in the lower-cased text for the rule to be tried (| between), pattern)
_FORMAT_RULES: list[tuple[str, str, str]] = [
    (
        "private key",
        "-----begin",
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    ),
    ("OpenVPN static key", "-----begin openvpn static key",
     r"-----BEGIN OpenVPN Static key V\d-----[\s\S]*?(?:-----END OpenVPN Static key V\d-----|\Z)"),
    ("AWS access key", "a", r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|AKPA|ANPA|ANVA|APKA|AROA|ASCA)[A-Z2-7]{16}(?![A-Z0-9])"),
    ("GitHub token", "gh|github_pat_", r"(?:gh[pousr]_[A-Za-z0-9]{36,255}" + _A + r"|github_pat_[A-Za-z0-9_]{22,255})"),
    ("GitLab token", "gl|gr1348941", r"(?:gl(?:pat|dt|rt|ptt|ft|imt|agent|oas|cbt|soat|ffct)-[A-Za-z0-9_-]{20,}|GR1348941[A-Za-z0-9_-]{20,})"),
    ("Slack token", "xox|xapp-", r"(?:xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Z0-9]+-\d+-[a-f0-9]+)"),
    ("Slack webhook", "hooks.slack.com", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}"),
    ("Stripe key", "k_live_|k_test_|k_prod_|whsec_", r"(?:(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,})"),
    ("Twilio key", "sk", r"(?<![A-Za-z0-9])SK[0-9a-fA-F]{32}" + _A),
    ("SendGrid key", "sg.", r"SG\.[A-Za-z0-9_-]{20,24}\.[A-Za-z0-9_-]{39,50}"),
    ("npm token", "npm_", r"npm_[A-Za-z0-9]{36}" + _A),
    ("PyPI token", "pypi-age", r"pypi-AgE[A-Za-z0-9_-]{50,}"),
    ("JSON web token", "eyj", r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
    ("Google API key", "aiza", r"AIza[0-9A-Za-z_-]{35}"),
    ("Google OAuth token", "ya29.|gocspx-", r"(?:ya29\.[0-9A-Za-z_-]{20,}|GOCSPX-[0-9A-Za-z_-]{28})"),
    ("OpenAI key", "t3blbkfj", r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}"),
    ("Anthropic key", "sk-ant-", r"sk-ant-(?:api|admin|sid)\d{2}-[A-Za-z0-9_-]{80,}"),
    ("API key", "sk-", r"(?<![A-Za-z0-9])sk-(?:proj-)?[A-Za-z0-9_-]{32,}"),
    ("Hugging Face token", "hf_|api_org_", r"(?:hf_|api_org_)[A-Za-z0-9]{34,}" + _A),
    ("DigitalOcean token", "_v1_", r"do[por]_v1_[a-f0-9]{64}"),
    ("Shopify token", "shp", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    ("Telegram bot token", ":aa", r"(?<![0-9])\d{8,10}:AA[0-9A-Za-z_-]{32,33}" + _A),
    ("Mailchimp key", "-us", r"(?<![A-Za-z0-9])[0-9a-f]{32}-us\d{1,2}(?![0-9])"),
    ("Databricks token", "dapi", r"dapi[a-f0-9]{32}(?:-\d)?"),
    ("Vault token", "hvs.|hvb.|hvr.", r"hv[sbr]\.[A-Za-z0-9_-]{24,}"),
    ("age secret key", "age-secret-key-1", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    ("Postman key", "pmak-", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    ("Pulumi token", "pul-", r"pul-[a-f0-9]{40}"),
    ("Linear key", "lin_", r"lin_(?:api|oauth)_[A-Za-z0-9]{40}"),
    ("Grafana token", "glc_|glsa_", r"(?:glc_[A-Za-z0-9+/]{32,}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})"),
    ("New Relic key", "nr", r"NR(?:AK|II|JS|AA)-[A-Z0-9]{20,}"),
    ("Doppler token", "dp.", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}"),
    ("Square token", "sq0|eaaa", r"(?:sq0(?:atp|csp|idp)-[0-9A-Za-z_-]{22,43}|EAAA[0-9A-Za-z_-]{60})"),
    ("Facebook token", "eaa", r"EAACEdEose0cBA[0-9A-Za-z]+|(?<![A-Za-z0-9])EAA[A-Za-z0-9]{100,}"),
    ("Atlassian token", "atatt3", r"ATATT3[A-Za-z0-9_=-]{100,}"),
    ("Clojars token", "clojars_", r"CLOJARS_[a-z0-9]{60}"),
    ("Flutterwave key", "flw", r"FLW(?:SECK|PUBK)(?:_TEST)?-[a-h0-9]{32}-X"),
    ("Sentry token", "sntry", r"sntry[su]_[A-Za-z0-9+/=_]{40,}"),
    ("RubyGems key", "rubygems_", r"rubygems_[a-f0-9]{48}"),
    ("PlanetScale token", "pscale_", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.=-]{32,64}"),
    ("Terraform token", "atlasv1|tfp_", r"(?:[a-z0-9]{14}\.atlasv1\.[a-z0-9_=-]{60,70}|tfp_[A-Za-z0-9]{40,})"),
    ("Dropbox token", "sl.", r"sl\.[A-Za-z0-9_-]{130,152}"),
    ("Notion token", "ntn_|secret_", r"(?:ntn_\d{11}[A-Za-z0-9]{35}|(?<![A-Za-z0-9_])secret_[A-Za-z0-9]{43})" + _A),
    ("Supabase key", "sbp_|sb_secret_", r"(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{31,})" + _A),
    ("Groq key", "gsk_", r"gsk_[A-Za-z0-9]{52}" + _A),
    ("Replicate token", "r8_", r"(?<![A-Za-z0-9])r8_[A-Za-z0-9]{37}" + _A),
    ("Tailscale key", "tskey-", r"tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{6,}-[A-Za-z0-9]{20,}"),
    ("1Password token", "ops_eyj", r"ops_eyJ[A-Za-z0-9+/]{100,}={0,3}"),
    ("Heroku key", "hrku-", r"HRKU-[A-Za-z0-9_-]{58,62}(?![A-Za-z0-9_-])"),
    ("Figma token", "figd_", r"figd_[A-Za-z0-9_-]{40,}"),
    ("Mapbox token", "sk.eyj", r"sk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}"),
    # formats the gitleaks measurement's dev part named (2026-12-07; Facebook's long tokens joined its row above),
    # written from each vendor's documentation
    ("Sourcegraph token", "sgp_", r"(?<![A-Za-z0-9])sgp_(?:[A-Fa-f0-9]{16}_|local_)?[A-Fa-f0-9]{40}" + _A),
    ("Perplexity key", "pplx-", r"(?<![A-Za-z0-9])pplx-[A-Za-z0-9]{48}" + _A),
    ("1Password secret key", "a3-", r"(?<![A-Z0-9-])A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})(?:-[A-Z0-9]{5}){3}(?![A-Z0-9])"),
    ("AWS Bedrock key", "absk", r"(?<![A-Za-z0-9])ABSK[A-Za-z0-9+/]{100,}={0,2}"),
    ("Fly.io token", "flyv1|fo1_|fm2_", r"(?:FlyV1 )?fm\d_[A-Za-z0-9+/=_-]{100,}|(?<![A-Za-z0-9])fo1_[A-Za-z0-9_-]{43}" + _A),
    ("Cloudflare key", "v1.0-", r"(?<![A-Za-z0-9])v1\.0-[a-f0-9]{24}-[a-f0-9]{146}" + _A),
    ("Azure client secret", "q~", r"(?<![A-Za-z0-9_~.])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])"),
    ("Azure storage key", "accesskey=", r"(?<=AccountKey=)[A-Za-z0-9+/]{40,}={0,2}|(?<=SharedAccessKey=)[A-Za-z0-9+/]{20,}={0,2}"),
    ("webhook URL", "discord", r"(?<=/api/webhooks/)\d{5,}/[A-Za-z0-9_-]{30,}"),
    ("webhook URL", "incomingwebhook", r"(?<=/IncomingWebhook/)[A-Fa-f0-9]{32}"),
    ("signed URL", "sig=", r"(?<=[?&]sig=)[A-Za-z0-9%+/=_-]{20,}"),
]
FORMATS: list[tuple[str, tuple[str, ...], re.Pattern[str]]] = [
    (kind, tuple(needles.split("|")), re.compile(p)) for kind, needles, p in _FORMAT_RULES
]

# ---- Placeholders and code: values that stand in for a secret rather than being one.
PLACEHOLDER = re.compile(
    r"(?:\*{3,}.*|\*[A-Za-z]+|[•…\[<{].*|\^\w+\^.*|[xX.#_-]{3,}.*|.*(?:\.\.\.|…)|(?!.*\{\{).*\}\}[^{}]*|"
    r".*(?:\$\{[\w.:\-?#!%/+=@| ]*\}|\{\{[^{}]*\}\}|\$\([^()]*\)|%\(\w+\)[sd]).*|"
    r"\$(?![\w]*\d[A-Za-z])[A-Za-z_]\w*(?:(?:->|\.|::|:)\w+)*(?:[(\[].*)?|%[A-Za-z_]+%.*|"
    r"`[^`]* [^`]*`|![A-Za-z]+(?:\s.*)?|@\w+|:[a-z_]+|(?-i:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)|\d{4}-\d{2}-\d{2}.*|"
    r"(?-i:[a-z_-]*(?:password|passwort|passwd|pass|secret|heslo|token|postgres|mysql))|"
    r"(?-i:(?:[A-Z][a-z]+)*(?:Password|Passwort|Secret|Token|Heslo))|"
    r"(?:your|example|sample|dummy|placeholder|changeme|change_me|redacted)\w*(?:[-_.]\w+)*|my[-_.]\w+(?:[-_.]\w+)*|"
    r"(?:insert|enter|put|replace)[-_.]\w+(?:[-_.]\w+)*|"
    r"(?:my|the|some|a|an|secret|secrets|password|passw0rd|passwd|pass|pwd|token|key|none|null|nil|true|false|yes|"
    r"no|todo|tbd|required|optional|string|str|bool|boolean|int|integer|number|bytes|hidden|undefined|empty|"
    r"default|generated|random|env|value|foo|bar|baz|test|demo|fake|xyz|abc|asdf|qwerty|admin|root|guest|"
    r"user|username|letmein|welcome|mysecret|supersecret|sensitive|confidential|encrypted|masked|omitted|"
    r"here|same|above|below|blank|unknown|unset|auto|prompt|ask|postgres|mysql|mariadb|redis|rabbitmq|docker)"
    r"|[a-z]{1,3}\d?)",
    re.IGNORECASE,
)
# Leetspeak spellings of the words every tutorial uses as a password ("P@ssW0rD!", "$ecret"): placeholders.
LEET = str.maketrans("@$013457!", "asoieasty", "")
_IDENT = r"(?:[a-z_][a-z0-9_]*(?:[A-Z][a-z0-9_]+)*|[A-Z][a-z]+(?:[A-Z][a-z]+)*)"
# PowerShell's approved verbs: "Read-Host" is a cmdlet, "Blue-Sky-42" or "Fromage-Bleu" a password
_PS_VERBS = "|".join(
    """Add Approve Assert Backup Block Build Checkpoint Clear Close Compare Complete Compress Confirm Connect Convert
    ConvertFrom ConvertTo Copy Debug Deny Deploy Disable Disconnect Dismount Edit Enable Enter Exit Expand Export Find
    ForEach Format Get Grant Group Hide Import Initialize Install Invoke Join Limit Lock Measure Merge Mount Move New
    Open Optimize Out Ping Pop Protect Publish Push Read Receive Redo Register Remove Rename Repair Request Reset Resize
    Resolve Restart Restore Resume Revoke Save Search Select Send Set Show Skip Split Start Step Stop Submit Suspend
    Switch Sync Test Trace Unblock Undo Uninstall Unlock Unprotect Unpublish Unregister Update Use Wait Watch Where
    Write""".split()
)
# getenv, os.environ, ENV, base64.b64encode; not a random word such as "nkBai0d0" (a digit inside a bare name)
_CALLEE = rf"\\?(?:(?:[A-Za-z_$][\w$]*(?:\.|::|->|\\))+(?:{_IDENT}|[A-Z][A-Z0-9_]*)|(?![\w$]*\d[A-Za-z]){_IDENT}|[A-Z][A-Z_]*)"
LOOKS_LIKE_CODE = re.compile(
    # a call or an index: getenv("X"), ENV["X"], open(p).read(), f(a, b … (cut at a space)
    rf"(?:{_CALLEE}\s*(?:\((?:[^()]*\)(?:[.\[;,)].*)?|[^()]*[,'\":][^()]*|)|\[.*)"
    rf"|\\?{_IDENT}(?:(?:\.|::|->|\\){_IDENT})+[;,]?"  # a dotted name: settings.SECRET_KEY, Nette\Passwords
    r"|(?:self|this|args|opts|options|cfg|config|conf|settings|env|process|os|request|req|params|props|ctx|"
    r"context|secrets|vars|inputs|input|data|credentials|creds)(?:\.|\[|::|->).*"
    r"|[a-z]+(?:_[a-z]+)+[;,]?|[a-z]+(?:-[a-z]+)+[;,]?|[a-z]+(?:[A-Z][a-z]+)+[;,]?|[A-Z][a-z]+(?:[A-Z][a-z]+)+"
    rf"|\(?(?:{_PS_VERBS})-[A-Z][A-Za-z]+(?![\w-]).*"  # a PowerShell cmdlet: Read-Host, (ConvertTo-SecureString
    r"|(?:/|\./|\.\./|~/|[A-Za-z]:\\|\\\\)\S*"  # a path
    r"|\S+\.(?:pem|key|crt|cer|p12|pfx|jks|json|ya?ml|txt|env|gpg|asc|kdbx|ini|conf|cfg|toml|pub|md|sh|py)"
    r"|[a-z][a-z0-9+.-]*://(?![^/\s]*:[^/\s]*@)\S*"  # a URL without credentials
    r"|(?:new|await|function|lambda|fn|func|def|return|typeof|select|get|read|load|fetch)\b.*)",
)

# ---- Names that say password, secret, token or key, in the notes' languages.
STRONG_WORDS = {
    "password", "passwords", "passwd", "passwort", "pwd", "pw", "pass", "passphrase", "passcode", "secret",
    "secrets", "token", "psk", "heslo", "hesla", "heslem", "hesle",
    "пароль", "пароля", "паролем", "паролі", "mdp", "contraseña", "contrasena", "kennwort", "hasło", "haslo",
    "jeton", "токен", "токена", "segreto", "secreto", "секрет", "apikey", "apitoken", "authtoken", "secretkey",
    "privatekey", "accesskey", "accesstoken", "masterkey", "signingkey", "encryptionkey", "clientsecret",
    "geheimnis", "geheim", "passe", "d'ordine", "senha", "wachtwoord", "lösenord", "losenord", "adgangskode",
    "passord", "salasana", "jelszó", "jelszo", "parola", "şifre", "sifre", "κωδικός", "heslá", "geslo", "lozinka",
    "парола", "passwörter", "slaptažodis", "slaptažodį", "slaptažodžio", "parool", "parooli", "contrasenya",
    "contrasinal", "pasahitza", "lykilorð", "cyfrinair", "nenosiri", "पासवर्ड", "รหัสผ่าน", "পাসওয়ার্ড",
    "pswd", "psw", "pword", "passw", "p/w", "bindpw", "authtok", "лозинка", "лозинку", "пасворд", "პაროლი",
    "fjalëkalimi", "fjalëkalim", "kalimi", "parole", "parolă", "lösen",
}
SUBSTRING_WORDS = ("password", "passwd", "secret", "token", "passwort", "пароль", "heslo", "apikey", "密码", "密碼",
                   "パスワード", "비밀번호", "暗証番号")
NOT_SECRET_WORDS = {"tokens", "tokenizer", "tokenize", "tokenized", "tokenization", "tokenizers", "secretary", "secretase",
                    "secretases", "secretion", "secretions", "secretory", "secreted", "secretin", "secreting",
                    "hypersecretion"}
KEY_WORDS = {"key", "keys", "clé", "clef", "cle", "chiave", "klíč", "klic", "klíče", "ключ", "ключа", "schlüssel",
             "schluessel", "sleutel", "klucz", "clave", "chave", "nyckel", "nøgle", "nøkkel", "avain", "kulcs", "cheie",
             "anahtar", "キー", "키", "密钥", "密鑰"}
QUALIFIERS = {
    "api", "secret", "private", "access", "auth", "client", "master", "encryption", "encrypt", "signing", "sign",
    "app", "session", "preshared", "pre", "shared", "webhook", "account", "license", "licence", "service",
    "consumer", "deploy", "ssh", "gpg", "pgp", "wifi", "wi", "wlan", "wpa", "wpa2", "wpa3", "product", "subscription", "admin",
    "root", "db", "database", "rsa", "hmac", "jwt", "crypt", "cipher", "storage", "secrète", "secrete",
    "segreta", "tajný", "tajny", "privé", "prive", "privat", "privata", "приватний", "секретний",
    "přístupový", "pristupovy", "cloud", "openai", "stripe", "aws", "azure", "gcp", "google", "mailgun",
    "sendgrid", "twilio", "slack", "github", "gitlab", "restic", "borg", "vault", "bot", "wlan-schlüssel",
    "доступу", "d'accès", "accesso", "d'api", "aes", "aes128", "aes256", "aes-256", "des", "3des", "chacha", "chacha20",
    "xchacha20", "blowfish", "twofish", "rc4", "camellia", "hmac-sha256", "sha256-hmac",
}
PASSPHRASE_WORDS = {"passphrase", "phrase", "pass-phrase"}
# Names of a credential that do not say password, secret, token or key (GH_PAT, MAIL_AUTH, creds): their values
# count only when they can be nothing else (`unmistakable`)
CREDENTIAL_WORDS = {"pat", "auth", "creds", "cred", "credential", "credentials", "cookie", "passkey", "login_pass",
                    "wifi", "wlan"}
NOT_THE_VALUE = {  # the last part of a name whose value is about the secret, not the secret
    "file", "files", "path", "paths", "url", "uri", "urls", "endpoint", "name", "names", "length", "len", "size",
    "type", "types", "field", "fields", "policy", "policies", "expiry", "expires", "expiration", "expire", "ttl",
    "timeout", "count", "min", "max", "limit", "limits", "required", "prompt", "reset", "label", "placeholder",
    "env", "var", "variable", "header", "pattern", "regex", "format", "enabled", "enable", "disabled", "mode",
    "method", "store", "manager", "provider", "strength", "hint", "question", "encoding", "algorithm", "alg",
    "error", "errors", "message", "msg", "help", "tooltip", "warning", "notice", "info", "caption", "comment",
    "cmd", "command", "dir", "location", "changed", "age", "lifetime", "validity", "rotation", "source",
    "helper", "generator", "hash", "hashed", "confirmation", "confirm", "repeat", "again", "input", "id_prefix",
    "rule", "rules", "history", "complexity", "storage", "backend", "kind", "secretref", "ref", "arn", "scope",
    "scopes", "endpoint_url", "usage", "budget", "budgets", "limit_per_day", "estimate", "estimator", "counter",
    "index", "position", "pos", "offset", "character", "characters", "chars", "class", "value_from", "from",
    "filter", "list", "spec", "description", "desc", "doc", "docs", "title", "text", "string", "lexer", "digest", "md", "txt", "json", "yml", "yaml", "html", "py", "sh", "png", "jpg", "pdf", "rst", "texy",
}
# Qualifiers that let a bare key or token stand in prose before its value ("the API key is …").
PROSE_QUALIFIERS = {
    "api", "secret", "private", "access", "auth", "client", "master", "encryption", "signing", "wifi", "wi",
    "wlan", "wpa", "wpa2", "wpa3", "preshared", "tajný", "secrète", "segreta", "přístupový", "доступу", "d'accès", "accesso",
    "aes", "aes128", "aes256", "chacha20", "xchacha20", "blowfish", "twofish", "des", "3des", "hmac",
}
OTHER_FIELDS = {"user:", "username:", "login:", "name:", "id:", "email:", "e-mail:", "host:", "uživatel:", "utente:",
                "utilisateur:", "identifiant:", "користувач:", "логін:", "benutzer:"}


def _parts(name: str) -> list[str]:
    """A name's words: split at spaces, _ - . / and camelCase humps (any script), lower-cased."""
    name = name.strip("\"'`*$@ ")
    humped = "".join(" " + c if i and c.isupper() and name[i - 1].islower() else c for i, c in enumerate(name))
    return [p for p in re.split(r"[\s_.\-/]+", humped.lower()) if p]


def secret_name(name: str, around: list[str] | tuple[str, ...] = ()) -> str | None:
    """"passphrase", "secret" or "credential" when the identifier `name` says what follows is one, given the words
    `around` it on its line (a key needs a qualifier there: "API klíč", "Clé API", "WLAN-Schlüssel");
    None otherwise."""
    parts = _parts(name)
    if not parts or parts[-1] in NOT_THE_VALUE or "public" in parts:  # a public key or key token is no secret
        return None
    if any(p in PASSPHRASE_WORDS or p.endswith("passphrase") for p in parts) or (
        "pass" in parts and "phrase" in parts
    ):
        return "passphrase"
    if PROSE_NAME.fullmatch(name.strip()):  # a password's name in any language: "mật khẩu", "הסיסמה"
        return "secret"
    if any(p in STRONG_WORDS or (p not in NOT_SECRET_WORDS and any(w in p for w in SUBSTRING_WORDS)) for p in parts):
        return "secret"
    near = parts + [p for w in around for p in [*_parts(w), w.strip("\"'`*$@ ").lower()]]  # "ChaCha20" whole too
    if any(p in KEY_WORDS or (p.endswith("key") and p[:-3] in QUALIFIERS) for p in parts) and any(
        p in QUALIFIERS or (p.endswith("key") and p[:-3] in QUALIFIERS) for p in near
    ):
        return "secret"
    if any(p in CREDENTIAL_WORDS for p in parts) and len(parts) <= 4:
        return "credential"  # GH_PAT, MAIL_AUTH, creds: their values count only when unmistakable
    return None


# Where a name's keyword may be: cheap to look for, then the name around it is judged (secret_name).
# Where a name's keyword may be: cheap to look for (str.find on the lower-cased text), then the name
# around it is judged (secret_name).
KEYWORDS = (
    "pass", "pwd", "pw", "secret", "token", "psk", "hesl", "парол", "mdp", "contrase", "kennwort", "hasło", "haslo",
    "jeton", "токен", "segret", "secreto", "секрет", "d'ordine", "key", "clé", "clef", "cle_", "cle ", "chiave",
    "klíč", "klic", "ключ", "schlüssel", "schluessel", "geheim", "senha", "wachtwoord", "lösenord", "losenord",
    "adgangskode", "passord", "salasana", "jelszó", "jelszo", "parola", "şifre", "sifre", "κωδικ", "geslo",
    "lozinka", "密码", "密碼", "パスワード", "비밀번호", "暗証番号", "mật khẩu", "mat khau", "kata sandi", "kata laluan",
    "סיסמ", "كلمة المرور", "كلمة السر", "كلمة مرور", "رمز عبور", "पासवर्ड", "รหัสผ่าน", "slaptažod", "parool",
    "contrasenya", "contrasinal", "pasahitza", "lykilorð", "cyfrinair", "nenosiri", "পাসওয়ার্ড", "_pat", "pat_",
    "auth", "cred", "cookie", "pswd", "pword", "p/w", "authtok", "🔑", "🔐", "🗝", "лозинк", "Лозинк", "პაროლ",
    "fjalëkalim", "wifi", "wi-fi", "wlan", "klucz", "clave", "chave", "nyckel", "nøgle", "nøkkel", "avain", "kulcs",
    "cheie", "anahtar", "キー", "키", "密钥", "密鑰",
)  # fmt: skip
NAME_CHAR = re.compile(r"[\w.\-$]")
# After a name: up to three words ("Пароль від адмінки"), a separator, the value. Separators of every
# language people paste into notes: = : => and Go's :=, make's ?= += ::= :::=.
ASSIGNMENT_TAIL = re.compile(
    r"(?P<words>(?:[ \t]+[^\W_][\w'’.\-]{0,29}){0,4}?)(?:\[\d*\])?[ \t]*[\"'`]?[ \t]*\**[ \t]*"
    r"(?P<sep>:{1,3}=|[?+]=|=>|[!=]==?|[:=：])(?!//|=|:)[ \t]*@?"
    r"[ \t]*\**[ \t]*(?P<value>\"[^\"\n]+\"|'[^'\n]+'|`[^`\n]+`|[^\s\"'`|][^\s|]*)"
)
# Names that may stand alone in prose before their value (a bare "key" or "token" needs a qualifier).
PROSE_NAME = re.compile(
    r"(?:passwords?|passwd|passwort|passphrase|passcode|pw|pwd|passe|mdp|heslo|hesla|heslem|пароль|пароля|"
    r"паролем|contraseña|kennwort|hasło|[\w-]*-?passwor[dt]|[\w-]*-?heslo|senha|wachtwoord|lösenord(?:et)?|"
    r"adgangskode(?:n)?|passord(?:et)?|salasana|jelszó|jelszava|parola|parolă|şifre|şifresi|κωδικός|geslo|lozinka|"
    r"парола|\w*(?:密码|密碼|パスワード|비밀번호|暗証番号|סיסמ|รหัสผ่าน|पासवर्ड|পাসওয়ার্ড)\w*|m[ậa]t kh[ẩa]u|kata (?:sandi|laluan)|"
    r"كلمة (?:ال)?(?:مرور|سر)|رمز عبور|slaptažod\w*|parooli?|contrasenya|contrasinal|pasahitza|lykilorð|cyfrinair|"
    r"nenosiri|pswd|psw|pword|passw|p/w|🔑|🔐|🗝️?|лозинк[аеуо]?|პაროლი?|fjalëkalim[i]?)",
    re.IGNORECASE,
)
# A password made of four or more words joined by one mark ("orange-tiger-maple-river", what
# diceware and password managers generate): reads as a slug or a name in code, so it counts only
# after a name that says password (PROSE_NAME), not after "token" or "secret" (resource names there).
WORD_PASSPHRASE = re.compile(r"[^\W\d_]{3,12}([-._ ])[^\W\d_]{3,12}(?:\1[^\W\d_]{3,12}){2,}\d{0,4}")
# A word of prose right after a secret's name that may be the credential: no quotes, brackets or
# markup inside (code and Markdown are not prose), optionally quoted as a whole.
PROSE_VALUE = re.compile(r"([`\"']?)[^\s'\"`()\[\]{}<>*|\\=?/]+\1[.,;:!?)]*")
PROSE_CONNECTORS = {"is", "are", "was", "est", "sont", "je", "jsou", "è", "e", "ist", "lautet", "es", "era", "—",
                    "–", "-", "=", ":", "is:", "→", "=>", "це", "є", "è:", "é", "são", "är", "jest", "lautet:",
                    "je:", "est:", "es:", "ist:", "takový:", "такий:", "È", "er", "on:", "là", "adalah", "ialah", "היא",
                    "הוא", "هي", "هو", "है", "คือ", "este", "yra", "yw", "არის", "је", "është", "е"}
# Words after which a value counts only when it reads as one word of prose (no brackets or markup):
# "now", Polish "to" ("hasło … to X", and English "to" is common before other things)
WEAK_CONNECTORS = {"to", "now", "now:", "agora", "adesso", "ora", "jetzt", "nu", "teď", "nyní", "тепер", "maintenant",
                   "ahora", "desormais", "désormais", "artık", "şimdi", "sekarang", "giờ", "כעת", "الآن", "अब"}
# "changed it to X", "geändert auf X", "veranderd in X", "změnil na X": a verb of changing, then one of these
CHANGE_STEMS = ("chang", "verander", "geänd", "geaend", "změn", "zmen", "zmien", "cambi", "alter", "ändr", "endr",
                "vaihd", "змін", "измен", "modifi", "reset", "set", "updat", "rotat", "switch")
CHANGE_PREPS = {"to", "into", "in", "auf", "na", "a", "en", "naar", "para", "em", "på", "till", "til", "zu", "на",
                "в", "su", "in:", "to:"}


# ---- Credentials in their usual places: (kind, pattern, group holding the secret, check of the value).
def placeholder_word(value: str) -> bool:
    """A template or a word every tutorial uses, as written or in leetspeak ("P@ssw0rd")."""
    return bool(PLACEHOLDER.fullmatch(value) or PLACEHOLDER.fullmatch(value.translate(LEET).rstrip("y")))


def is_placeholder(value: str) -> bool:
    """A value that stands in for a secret rather than being one: a template, an environment
    variable's name, a word such as "changeme" (or "P@ssw0rd"), code, a path or a URL without
    credentials."""
    unquoted = value.strip("\"'`")
    v = unquoted.rstrip(",;:)\"'`").strip("\"'`")
    return bool(
        placeholder_word(v)
        or LOOKS_LIKE_CODE.fullmatch(v)
        or LOOKS_LIKE_CODE.fullmatch(unquoted)
        or PLACEHOLDER.fullmatch(value)
    )


def looks_like_a_credential(value: str) -> bool:
    """A value written without an `=` or `:` before it (after "is", "est", "je"…): a credential only
    when it does not read as a word: a digit or a symbol inside it."""
    v = value.strip("\"'`").rstrip(".,;:!?)\"'`")
    if len(v) < 8 or is_placeholder(v):
        return False
    return any(c.isdigit() for c in v) or any(not c.isalnum() and c not in "'’-" for c in v[1:])


MARKUP = "*_~`"  # Markdown around a word: **bold**, _italic_, `code`, ~~struck~~
_NOT_A_PASSWORD = re.compile(  # what reads as a credential's mix of letters, digits and marks but is not one
    r"(?i)\d+(?:[.,:/-]\d+)*[a-z]{0,3}|v?\d+(?:\.\d+)+[\w.-]*|[a-z]+-?\d+(?:-\d+)*|\d+-?[^\W\d_]+(?:-[^\W\d_]+)*|"
    r"[\w.-]+:\d[\d.]*|"
    r"(?:sha|md|aes|rsa|ecdsa|ed|utf|iso|pbkdf|argon|scrypt|bcrypt|hmac|crc|base|x|win|python|ipv|tls|ssl|http)"
    r"[\w.-]*|\w+@[\w.-]+|1password\w*|[\w.-]*\.(?:com|org|net|io|cz|de|txt|md|py|json)"
)


def unmistakable(word: str) -> bool:
    """A word within a few words of a password's name that reads as nothing but a credential: letters mixed
    with digits or marks, 8 or more, not a number, date, version, algorithm, address or placeholder
    ("it's Tuleni-Mys-33 now", "Use Vpn!Leden2025 until…")."""
    w = word.rstrip(".,;:!?)").strip(MARKUP).strip("\"'«»„“”")
    if len(w) < 8 or not PROSE_VALUE.fullmatch(w) or _NOT_A_PASSWORD.fullmatch(w):
        return False
    if w.lower().rstrip("s").endswith(SUBSTRING_WORDS):  # "E2E-Verschlüsselungspasswort" names one
        return False
    cases = any(c.isupper() for c in w) and any(c.islower() for c in w)
    marks = any(c in "!#$%&*+=?@^~" for c in w)
    return (cases or marks) and any(c.isdigit() for c in w) and looks_like_a_credential(w)


def _url_password(value: str) -> bool:
    """A URL's password counts, like an assigned value, from 8 characters (percent-decoded) unless it is
    a placeholder ("password", "[:password]", "${PASS}")."""
    decoded = unquote(value)
    return len(decoded) >= 8 and not PLACEHOLDER.fullmatch(value.strip("[]()")) and not placeholder_word(decoded)


_CHECKS: dict[str, Callable[[str], bool]] = {
    "u": _url_password,
    "c": looks_like_a_credential,
    "": lambda value: not is_placeholder(value),
    # an argument a tool takes as the password itself: anything but a placeholder, even a word that
    # reads as code ("PuEtlPofqtJy" is PascalCase to LOOKS_LIKE_CODE)
    "p": lambda value: not placeholder_word(value),
    "m": lambda value: unmistakable(value),  # an option shared by other meanings (-p a port, a path, a flag)
    "mu": lambda value: unmistakable(value) and _url_password(value),
    "n": lambda value: len(set(value)) > 1 and value not in "0123456789" and value not in "9876543210",  # not 0000, 1234
}

# An HTTP client's -u/--user, up to its value (the options may run over lines continued with \).
_CURL_USER = r"\b(?:curl|wget|http|https|xh|httpie)\b(?:[^\n]|\\\n)*?\s(?:-u|--user)[ \t=]+['\"]?"
# (kind, needles as in _FORMAT_RULES, pattern, flags: i, and the value's check, group of the secret)
_PLACE_RULES: list[tuple[str, str, str, str, int]] = [
    ("connection string with a password", "://",
     r"\b[a-z][a-z0-9+.\-]{1,30}://[^\s:/@'\"<>]{0,64}:((?!\d+/)[^\s'\"<>]{1,128}?)@(?=[^\s/@]*[\w\]])(?![^\s/@]*@)", "u", 1),
    # curl's -u user:password, the password quoted or not, the options over continued lines (\ then a
    # line break); a user alone before the colon is an API key used as the user name (Stripe, Mailgun).
    ("password on a command line", "-u|--user", _CURL_USER + r"[^\s:'\"]*:['\"]?([^\s'\"]+)", "", 1),
    ("password on a command line", "-u|--user", _CURL_USER + r"([^\s:'\"]{12,}):['\"]?(?=[\s'\"]|$)", "c", 1),
    ("password on a command line", "mysql", r"\bmysql(?:dump|admin|sh)?\b[^\n]*?[ \t]-p([^\s\-'\"][^\s'\"]*)", "p", 1),
    ("password on a command line", "sshpass", r"\bsshpass\s+-p\s*['\"]?([^\s'\"]+)", "p", 1),
    ("password on a command line", "redis-cli", r"\bredis-cli\b[^\n]*?[ \t]-a[ \t]+['\"]?([^\s'\"-][^\s'\"]*)", "p", 1),
    ("password on a command line", "mongo", r"\bmongo(?:sh|dump|restore|import|export)?\b[^\n]*?[ \t]-p[ \t]+['\"]?([^\s'\"-][^\s'\"]*)", "p", 1),
    ("password on a command line", "openssl", r"\bopenssl\b[^\n]*?[ \t](?:-k[ \t]+|-pass(?:in|out)?[ \t]+pass:)['\"]?([^\s'\"]+)", "p", 1),
    # A wallet's seed phrase (BIP39: 12-24 lowercase words) or an account's recovery / backup codes.
    ("recovery phrase", "seed|mnemonic|recovery",
     r"\b(?i:seed|recovery|mnemonic)(?:[ _-]?(?i:phrase|words|sentence))?\b[^\n:=]{0,24}[:=][ \t]*"
     r"((?:[a-z]{3,8}[ \t,]+){11,23}[a-z]{3,8})(?![\w-])", "", 1),
    ("recovery code", "recovery|backup|bitlocker",
     r"(?i)\b(?:recovery|backup|bitlocker)[ _-]?(?:keys?|codes?|passwords?)\b[^\n:=]{0,24}[:=][ \t]*"
     r"((?=[^\n]*\d)[A-Za-z0-9]{4,8}(?:[- ,]{1,2}[A-Za-z0-9]{4,8})+)", "", 1),
    ("password on a command line",
     "--", r"(?:^|\s)--(?:password|passwd|pass|token|secret|api-key|apikey|oauth2-bearer|http-password|proxy-password)[ =]['\"]?([^\s'\"\-][^\s'\"]*)", "i", 1),
    ("password on a command line", "login", r"\b(?:docker|podman|helm|oras|nerdctl|buildah|skopeo)\b[^\n]*?\blogin\b[^\n]*?[ \t]-p[ \t]+['\"]?([^\s'\"]+)", "p", 1),
    ("password on a command line", "htpasswd", r"\bhtpasswd\b[^\n]*?\s-\w*b\w*\s+\S+\s+\S+\s+['\"]?([^\s'\"]+)", "p", 1),
    ("password on a command line", "convertto-securestring", r"ConvertTo-SecureString\s+(?:-String\s+)?(\"[^\"\n]+\"|'[^'\n]+')", "i", 1),
    ("password in .netrc", "machine", r"\bmachine[ \t]+\S+[\s\S]{0,80}?\blogin[ \t]+\S+[\s\S]{0,80}?\bpassword[ \t]+(\S+)", "", 1),
    ("bearer token",
     "authorization", r"\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|digest|apikey|api-key|sso-key)?\s*"
     r"([A-Za-z0-9._~+/=:-]{12,})", "i", 1),
    ("bearer token", "bearer", r"\bBearer[ \t]+([A-Za-z0-9._~+/-]{20,}=*)", "", 1),
    ("Docker auth", "\"", r"\"(?:auth|identitytoken|registrytoken)\"\s*:\s*\"([A-Za-z0-9+/=._-]{12,})\"", "", 1),
    ("password or secret",
     "</", r"<([\w:.-]*(?:password|passwd|secret|token|apikey|api_key|credential)[\w:.-]*)>([^<\n]{4,})</\1>", "i", 2),
    ("password or secret",
     "value", r"\b(?:key|name)\s*=\s*\"[^\"]*(?:secret|password|token|apikey|api_key|connectionstring)[^\"]*\"\s+"
     r"value\s*=\s*\"([^\"]{4,})\"", "i", 1),
    ("password or secret", ":", r"(?m)^(?![0-9a-fA-F:]+$)[\w.*\-]+:(?:\d{1,5}|\*):[\w*\-]+:[\w*.\-@]+:(\S+)$", "", 1),  # .pgpass
    ("private key", "private-lines", r"(?m)^Private-Lines:[ \t]*\d+[ \t]*\r?\n((?:[ \t]*[A-Za-z0-9+/=]{8,}[ \t]*(?:\r?\n|$))+)", "", 1),
    ("private key", "private-mac", r"\bPrivate-MAC:[ \t]*([0-9a-fA-F]{20,})", "", 1),
    ("password or secret", " / ", r"\b(?:admin|root|user|login|username)[ \t]+/[ \t]+(\S{6,})", "ic", 1),
    # what credentials look like in code and configuration (issue 59): SQL, a function's arguments, Windows'
    # net use, network devices, redis, .npmrc, a Terraform variable's default, "Creds: user / password",
    # a Wi-Fi QR code's P: field, a webhook's secret path
    ("password or secret", "identified|password",
     r"(?i)(?<![\w'\".$-])(?:identified[ \t]+by|password)(?:[ \t]*=[ \t]*|[ \t]+)'([^'\n]{4,})'", "p", 1),
    ("password or secret", "login|auth|connect|sign",
     r"(?i)\b(?:\w*login|\w*auth|authenticate|\w*connect(?:ion)?|sign_?in|create_?connection)[ \t]*(?:=[ \t]*)?\(?[ \t]*\("
     r"(?:[^()\n]*?,[ \t]*)?(?:([\"'])[^\"'\n]{1,64}\1[ \t]*,[ \t]*){1,2}([\"'])([^\"'\n]{4,})\2[ \t]*\)", "p", 3),
    ("password on a command line", "net",
     r"(?i)\bnet[ \t]+use[ \t]+(?:[a-z]:|\*|\\\\)[^\n`]*?[ \t](?![a-z]:(?:[ \t]|$))(?!/)(?!\\\\)(?!\*)([^\s`/\\][^\s`]*)"
     r"(?=[ \t]|$|`)", "p", 1),
    ("password or secret", "password|secret",
     r"(?im)^[ \t]*username[ \t]+\S+[ \t]+(?:privilege[ \t]+\d+[ \t]+)?(?:password|secret)[ \t]+(?:\d[ \t]+)?(\S+)[ \t]*$", "p", 1),
    ("password or secret", "password|secret|psk|key-string|community",
     r"(?im)^[ \t]*(?:enable[ \t]+)?(?:password|secret|wpa-psk[ \t]+ascii|pre-shared-key|key-string|"
     r"snmp-server[ \t]+community)[ \t]+(?:\d[ \t]+)?(\S+)(?:[ \t]+R[OW])?[ \t]*$", "c", 1),
    ("password or secret", "requirepass|masterauth", r"\b(?:requirepass|masterauth)[ \t]+[\"']?([^\s\"'`]+)", "p", 1),
    ("password or secret", "_auth|_password", r"(?:^|[\s/:])(?:_auth|_authToken|_password)[ \t]*=[ \t]*[\"']?([^\s\"']{8,})", "", 1),
    ("password or secret", "variable",
     r"(?i)\bvariable[ \t]+\"[^\"\n]*(?:pass|secret|token|key|pwd|credential)[^\"\n]*\"[ \t]*\{[^}]*?\bdefault[ \t]*=[ \t]*"
     r"\"([^\"\n]{4,})\"", "p", 1),
    ("password or secret", "cred|login|account|přihl|zugang",
     r"(?i)\b(?:creds?|credentials|logins?|accounts?|přihlašovací[ \t]+údaje|zugangsdaten)\b[^\n:]{0,40}:[ \t]*"
     r"[^\s/:]{2,40}[ \t]+/[ \t]+(\S{4,})", "p", 1),
    ("Wi-Fi password", "wifi:", r"WIFI:[^\n]*?(?<=[:;])P:((?:\\.|[^;\\\n])+)", "p", 1),
    # command-line tools' password options: -U user%password (Samba), /p: and /pass: (Windows, FreeRDP),
    # -pw (PuTTY), -P (sqlcmd, bcp), -w (OpenLDAP), `net user NAME PASSWORD`; -p of any tool when the value
    # can be nothing else
    ("password on a command line", "-u", r"(?:^|[\s`])-U[ \t]+['\"]?[^\s%'\"]+%([^\s'\"`]+)", "p", 1),
    ("password on a command line", "/p", r"(?i)(?:^|[\s`])/(?:p:|(?:pass|password|pwd)[:=])['\"]?([^\s'\"`]+)", "p", 1),
    ("password on a command line", "-pw", r"\b(?:plink|pscp|psftp|putty)\b[^\n]*?[ \t]-pw[ \t]+['\"]?([^\s'\"`]+)", "p", 1),
    ("password on a command line", "-p", r"\b(?:sqlcmd|bcp|osql|isql)\b[^\n]*?[ \t]-P[ \t]*['\"]?([^\s'\"`]+)", "p", 1),
    ("password on a command line", "ldap", r"\bldap\w*\b[^\n]*?[ \t]-w[ \t]+['\"]?([^\s'\"`]+)", "p", 1),
    ("password on a command line", "net", r"(?i)\bnet[ \t]+user[ \t]+\S+[ \t]+(?![/*])([^\s`]+)", "p", 1),
    ("password on a command line", "-p", r"(?:^|[\s`])-(?:p|P|pw|pass)[ \t]+['\"]?([^\s'\"`]+)", "m", 1),
    # a URL's query parameter named for a key, token, secret or password (?appid=, &access_token=, otpauth's secret=)
    ("password or secret", "id=|key=|token=|auth=|secret=|passwd=|pwd=|pass=|password=|sig=|signature=|sid=",
     r"(?i)[?&;#](?:app_?id|app_?key|api_?key|key|access_?token|auth_?token|token|auth|secret|client_?secret|password|"
     r"passwd|pwd|pass|sig|signature|private_?token|session_?id|sid)=([^&\s#\"'<>`)]{8,})", "", 1),
    # an HTTP header that carries a credential besides Authorization: a session cookie
    ("bearer token", "cookie",
     r"(?i)\b(?:set-)?cookie:[^\n]*?\b[\w-]*(?:sess|sid|auth|token|jwt|remember)[\w-]*=([^;\s\"'`]{16,})", "", 1),
    # a PIN, PUK or a door's, alarm's or safe's code: 4-8 digits right after it or after "is" / ":"
    ("PIN or code", "pin|puk|code|kód|codice|código",
     r"(?:\b(?i:passcode|pass code|access code|voicemail code)|\b(?:PIN|PUK)(?:[- ]?(?i:code|kód|kódu|codice|código|nummer|number))?|(?i:\b(?:alarm|door|gate|safe|lock|garage|entry|"
     r"keypad|access|entrance|building|trezor|sejf|alarmu|zámku|dveří|porta|allarme|portail|Tür|Alarm)[ -]?(?:code|kód|"
     r"kódu|codice|código|code)s?|\b(?:code|kód|kódu|codice|código)(?:[ \t]+[^\W\d_]+){0,2}?[ \t]+(?:alarm\w*|door|gate|"
     r"safe|lock|garage|trezor\w*|sejf\w*|zámk\w*|dveř\w*|brán\w*|garáž\w*|porta|allarme|cancello|portail|coffre)))\b"
     r"(?:[^\n.\d]{0,40}?[ \t](?i:is|je|est|è|ist|es|era|was|zní|jest|é|lautet|=|:))?"
     r"[ \t]*[:=]?[ \t]*\**(\d{4,8})\b(?![.,:/]\d)", "n", 1),
    # what is typed into a password prompt: echo/printf piped into sudo -S, passwd, --password-stdin…; expect's send
    ("password on a command line", "echo|printf",
     r"\b(?:echo|printf)[ \t]+(?:-[ne]+[ \t]+)?(['\"])(.+?)\1[^\n|]*\|[ \t]*(?:sudo[ \t]+(?:-\w*S|--stdin)|passwd|chpasswd|"
     r"kinit|cryptsetup|[^\n]*--password-stdin|[^\n]*-pass(?:in)?[ \t]+stdin)", "p", 2),
    ("password on a command line", "send",
     r"\bexpect[ \t]+(?:-\w+[ \t]+)*\"[^\"\n]*(?i:assword|passphrase|pin|heslo|passwort|mot de passe)[^\"\n]*\"[ \t]*\n"
     r"(?:[ \t]*\n)*[ \t]*send[ \t]+(?:--[ \t]+)?\"([^\"\n]+?)(?:\\r|\\n)?\"", "p", 1),
    # a two-factor seed: base32 (A-Z, 2-7) after 2FA, TOTP, MFA, authenticator or secret
    ("two-factor seed", "2fa|totp|otp|mfa|authenticator|factor|2-step|two-step|seed|secret",
     r"(?i:2fa|totp|otp|mfa|authenticator|two[- ]factor|2-step|two-step|seed|secret)[^\n]{0,60}?(?<![A-Za-z0-9])"
     r"((?=[A-Z2-7]*[2-7][A-Z2-7]*[2-7])(?=[A-Z2-7]*[A-Z][A-Z2-7]*[A-Z])[A-Z2-7]{16,64}={0,6})(?![A-Za-z0-9])", "", 1),
    # private keys without a PEM header: a JSON Web Key's private members, OpenSSH's base64 body
    ("private key", "\"kty\"", r"\"(?:d|p|q|dp|dq|qi|k)\"[ \t]*:[ \t]*\"([A-Za-z0-9_-]{16,})\"", "", 1),
    ("private key", "b3blbnnzac1rzxktdje", r"(b3BlbnNzaC1rZXktdjE[A-Za-z0-9+/=]{20,}(?:\s*\n[A-Za-z0-9+/=]{20,})*)", "", 1),
    # the third round's forms (fresh3.txt): log in as a user with a value; 7-Zip's and RAR's -pVALUE; schtasks /rp;
    # a quoted secret name handed to a setter or an index; an email and a value beside it; a lock's combination
    ("password or secret", "log|sign|ssh|connect|authenticat",
     r"(?i)\b(?:log(?:ged)?[ -]?in|sign(?:ed)?[ -]?in|ssh|connect|authenticate)\b[^\n.]{0,40}?\b(?:with|using|via)[ \t]+"
     r"(?:(?:the[ \t]+)?(?:password|pw)[ \t]+)?(?:[\w.-]+[ \t]+/[ \t]+)?([^\s,;]+)", "m", 1),
    ("password on a command line", "7z|rar", r"\b(?:7z|7za|7zr|rar|unrar)\b[^\n]*?[ \t]-p([^\s'\"`-][^\s'\"`]*)", "p", 1),
    ("password on a command line", "/rp", r"(?i)\bschtasks\b[^\n]*?[ \t]/rp[ \t]+['\"]?([^\s/'\"`][^\s'\"`]*)", "p", 1),
    ("password or secret", "pass|secret|token|pwd|api_key|apikey|credential",
     r"(?i)\b(?:put|set\w*|define|add|setenv|putenv|setitem|config)[ \t]*\([ \t]*([\"'])[\w.-]*(?:pass|secret|token|pwd|"
     r"api_?key|credential)[\w.-]*\1[ \t]*,[ \t]*([\"'])([^\"'\n]{4,})\2", "p", 3),
    ("password or secret", "pass|secret|token|pwd|api_key|apikey|credential",
     r"(?i)\[[ \t]*([\"'])[\w.-]*(?:pass|secret|token|pwd|api_?key|credential)[\w.-]*\1[ \t]*\][ \t]*=[ \t]*([\"'])"
     r"([^\"'\n]{4,})\2", "p", 3),
    ("password or secret", "(", r"(?i)\((?:admin|administrator|root|user|guest|sa|pi)[ \t]*[,/:][ \t]*([^\s()]+)\)", "m", 1),
    # in a code comment, a value after `:` or "is"/"was" that can be nothing but a credential ("# the real one is …")
    ("password or secret", "#|//|<!--|/*",
     r"(?m)^[ \t]*(?:#|//|/\*|<!--)[^\n]*?(?::|\b(?:is|was|are|were)\b)[ \t]+((?![\"'`])[!-~]{8,40})(?=[ \t]*(?:\n|$|-->|\*/))", "m", 1),
    ("password or secret", "@", r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+[ \t]*(?:[—–/|,:;]|[ \t]-)[ \t]*(\S+)", "m", 1),
    ("PIN or code", "combination|combo|kombina|combinaison|combinazione",
     r"(?i)\b(?:combination|combo|kombinace|kombination|combinaison|combinazione)\b[^\n.]{0,30}?(?:\b(?:is|je|est|è|ist)\b|:)"
     r"[ \t]*\**(\d{1,2}(?:[- ]\d{1,2}){2,5})\b", "", 1),
    # name / value pairs: env lists of Kubernetes and ECS ({"name": "DB_PASSWORD", "value": "…"})
    ("password or secret", "pass|secret|token|pwd|api_key|apikey|credential",
     r"(?i)\bname[\"']?[ \t]*:[ \t]*[\"']?[\w.-]*(?:pass|secret|token|pwd|api_?key|credential)[\w.-]*[\"']?[ \t]*,?[ \t]*"
     r"(?:\n[ \t-]*)?[\"']?value[\"']?[ \t]*:[ \t]*[\"']?([^\s\"',}]{4,})", "p", 1),
    # the fourth round's forms (fresh4.txt): LaTeX and template definitions; XML key and value elements; httpie -a;
    # wallet keys (WIF after a wallet's word, BIP32 xprv, 0x+64 hex after "key"); user:password@host with no
    # scheme; secret managers' command lines; reg add /d; a passcode's digits
    ("password or secret", "\\def|command",
     r"\\(?:newcommand|renewcommand|providecommand|def)\*?\{?\\([A-Za-z]*(?i:pass|secret|token|pwd|key)[A-Za-z]*)\}?"
     r"\{([^{}\n]{4,})\}", "p", 2),
    ("password or secret", "<value",
     r"(?i)<(?:key|name)>[^<\n]*(?:pass|secret|token|pwd)[^<\n]*</(?:key|name)>\s*<value[^>]*>([^<\n]{4,})</value>", "p", 1),
    ("password or secret", "<value",
     r"(?i)<[\w:.-]*(?:password|passwd|secret|token)[\w:.-]*>\s*<value[^>]*>([^<\n]{4,})</value>", "p", 1),
    ("password or secret", "key=|name=",
     r"(?i)<[\w:.-]+[ \t]+(?:key|name)=\"[^\"\n]*(?:pass|secret|token|pwd)[^\"\n]*\"[^>\n]*>([^<\s]{4,})</", "p", 1),
    ("password on a command line", "-a|--auth",
     r"\b(?:http|https|xh|httpie)\b[^\n]*?[ \t](?:-a|--auth)[ \t=]+['\"]?[^\s:'\"]+:([^\s'\"]+)", "c", 1),
    ("private key", "wif|wallet|private|bitcoin|btc",
     r"(?i:wif|wallet|private[ _-]?key|bitcoin|btc)[^\n]{0,40}?(?<![A-Za-z0-9])([5KL][1-9A-HJ-NP-Za-km-z]{50,51})(?![A-Za-z0-9])",
     "", 1),
    ("private key", "prv", r"(?<![A-Za-z0-9])([xyzt]prv[1-9A-HJ-NP-Za-km-z]{100,112})(?![A-Za-z0-9])", "", 1),
    ("private key", "0x", r"(?i)\bkey\b[^\n]{0,30}?(0x[0-9a-f]{64})(?![0-9a-f])", "", 1),
    ("connection string with a password", "@",
     r"(?<![\w/:.@-])(?!(?i:mailto|https?|ftp|sftp|ssh|git|sip|tel|xmpp|urn|data|file|news):)[\w.-]{1,32}:([^\s:@/]{4,64})@"
     r"[\w-]+(?:\.[\w-]+)+", "mu", 1),
    ("password or secret", "secret|ssm|keyvault|config:set|secrets",
     r"\b(?:gh[ \t]+(?:secret|variable)[ \t]+set|aws[ \t]+(?:ssm|secretsmanager)|az[ \t]+keyvault[ \t]+secret|gcloud[ \t]+secrets|"
     r"fly(?:ctl)?[ \t]+secrets|vercel[ \t]+env)\b[^\n]*?[ \t](?:--body|-b|--value|--secret-string|--data)[ \t=]+['\"]?"
     r"([^\s'\"]+)", "p", 1),
    ("password or secret", "reg",
     r"(?i)\breg[ \t]+add\b[^\n]*?/v[ \t]+\"?[\w.-]*(?:pass|secret|token|key|pwd)[\w.-]*\"?[^\n]*?/d[ \t]+\"?([^\s\"]+)", "p", 1),
    # detect-secrets' code forms: a quoted value compared with a secret's name ("X" == password), C++'s
    # std::string secret("X") and secret.assign("X")
    ("password or secret", "pass|secret|token|pwd|key",
     r"([\"'`])([^\"'`\n]{4,})\1[ \t]*[!=]==?[ \t]*[\w.]*(?i:passw|passwd|secret|token|api_?key|private_?key|pwd|_pass)\w*\b",
     "p", 2),
    ("password or secret", "pass|secret|token|pwd|key",
     r"(?:\b(?:std::string|string|String|QString|auto|var|let|const)[ \t]+[\w]*(?i:passw|passwd|secret|token|api_?key|pwd|_pass)"
     r"\w*[ \t]*[({]|\b\w*(?i:passw|passwd|secret|token|api_?key|pwd|_pass)\w*\.assign\()[ \t]*\"([^\"\n]{4,})\"", "p", 1),
    ("webhook URL", "hook",
     r"https?://[^\s]*?(?:web)?hooks?\b[^\s]*?/((?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{6,})/?"
     r"(?=[\s)\]>\"'`]|$)", "", 1),
]
PLACES: list[tuple[str, tuple[str, ...], re.Pattern[str], int, Callable[[str], bool]]] = [
    (kind, tuple(n.split("|")), re.compile(p, re.IGNORECASE if "i" in f[:1] else 0), group, _CHECKS[f.lstrip("i")])
    for kind, n, p, f, group in _PLACE_RULES
]

SHORT_COLUMNS = {"pw", "pin", "pins", "passcode", "pin code", "pin-code", "kód pin", "code pin"}  # table headers
TABLE_SECRET_COLUMN = re.compile(
    r"(?i)^(?:\*\*)?(?:password|passwd|pass|pwd|secret|token|api[ _-]?key|secret[ _-]?key|access[ _-]?token|"
    r"mot de passe|heslo|пароль|passwort|contraseña|chiave(?: api)?|clé(?: api)?|jeton|токен|credentials?)(?:\*\*)?$"
)
