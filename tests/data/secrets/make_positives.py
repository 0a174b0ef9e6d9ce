"""Write positives.txt: the labelled corpus of credentials as people write them in notes.

    python tests/data/secrets/make_positives.py [OUT]   # rewrites positives.txt beside it (seeded: same file)

Each record starts with a line `%% class | shape | language`; its text follows; every credential in it is
marked ⟦…⟧ (what must never leave the machine). The values are random with a fixed seed, in each format's
real alphabet and length (gitleaks' rules and TruffleHog's detectors list the formats), so no record is a
real credential. The classes are the leaks found by hand (issue #36) and the scanners' formats; the shapes
are where notes hold them (prose, code blocks, tables, lists, headings, front matter); the languages are
the notes' (en, fr, cs, uk, it, and de/es/pl for the names of a password).
"""

from __future__ import annotations

import base64
import random
import string
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from labelled import write  # noqa: E402

R = random.Random(int(__import__("os").environ.get("SEED", "36")))
UP, LO, DIG = string.ascii_uppercase, string.ascii_lowercase, string.digits
ALNUM = UP + LO + DIG
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"
WORDS = ["Blue", "river", "Tiger", "maple", "Sofa", "orbit", "Kafka", "tulip", "Zebra", "cobalt", "Mango", "delta"]


def s(alphabet: str, n: int) -> str:
    return "".join(R.choice(alphabet) for _ in range(n))


def pw(symbols: str = "!#$%&()*+/=?@^~") -> str:
    """A password as people choose them: words, digits and a symbol or two, mixed in."""
    shape = R.randrange(5)
    if shape == 0:
        return R.choice(WORDS) + s(DIG, 2) + R.choice(symbols) + R.choice(WORDS).lower()
    if shape == 1:
        return s(ALNUM, 6) + R.choice(symbols) + s(ALNUM, 5) + R.choice(symbols)
    if shape == 2:
        return R.choice(WORDS).lower() + R.choice(symbols) + s(DIG, 4) + R.choice(WORDS)
    if shape == 3:
        return s(LO + DIG, 12)
    return s(ALNUM + symbols, 14)


def b64(n: int) -> str:
    return s(B64, n)


def aws_secret() -> str:
    v = s(ALNUM + "/+", 40)
    return v if "/" in v else v[:13] + "/" + v[14:]


def akia() -> str:
    return R.choice(["AKIA", "ASIA"]) + s(UP + "234567", 16)


def ghp(prefix: str = "ghp_") -> str:
    return prefix + s(ALNUM, 36)


def jwt() -> str:
    head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    body = base64.urlsafe_b64encode(f'{{"sub":"{R.randrange(10**6)}","name":"n{s(LO, 5)}"}}'.encode())
    return f"{head}.{body.decode().rstrip('=')}.{s(URLSAFE, 43)}"


def pem(kind: str, lines: int = 4, escaped: bool = False) -> str:
    body = [s(B64, 64) for _ in range(lines)] + [s(B64, 20) + "=="]
    sep = "\\n" if escaped else "\n"
    return f"-----BEGIN {kind}-----{sep}" + sep.join(body) + f"{sep}-----END {kind}-----"


def putty() -> str:
    pub = [s(B64, 64) for _ in range(2)]
    priv = [s(B64, 64) for _ in range(3)]
    return (
        "PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nComment: rsa-key-20240112\nPublic-Lines: 2\n"
        + "\n".join(pub)
        + "\nPrivate-Lines: 3\n"
        + "\n".join(f"⟦{p}⟧" for p in priv)
        + f"\nPrivate-MAC: ⟦{s(HEX, 40)}⟧"
    )


def pgp() -> str:
    body = "\n".join(s(B64, 64) for _ in range(4))
    return f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{body}\n={s(B64, 4)}\n-----END PGP PRIVATE KEY BLOCK-----"


RECORDS: list[tuple[str, str, str, str]] = []  # (class, shape, language, text)


def add(cls: str, shape: str, lang: str, text: str) -> None:
    RECORDS.append((cls, shape, lang, text))


def names_with_affixes() -> None:
    cls = "name with a prefix or suffix"
    names = [
        ("DB_PASSWORD={v}", "env"), ("POSTGRES_PASSWORD={v}", "env"), ("MYSQL_ROOT_PASSWORD: {v}", "yaml"),
        ("db_password: {v}", "yaml"), ("mysql_password = {v}", "ini"), ("REDIS_PASS={v}", "env"),
        ("SMTP_PASSWD={v}", "env"), ("ADMIN_PWD={v}", "env"), ("LDAP_BIND_PASSWORD = \"{v}\"", "toml"),
        ("dbPassword: \"{v}\"", "yaml"), ("jwtSecret: '{v}'", "yaml"), ("clientSecret={v}", "env"),
        ("APP_SECRET={v}", "env"), ("SESSION_SECRET: {v}", "yaml"), ("WEBHOOK_SECRET = '{v}'", "python"),
        ("export GITHUB_TOKEN={v}", "shell"), ("NPM_TOKEN={v}", "env"), ("SLACK_BOT_TOKEN={v}", "env"),
        ("api-key: {v}", "yaml"), ("ENCRYPTION_KEY={v}", "env"), ("MASTER_KEY = {v}", "ini"),
        ("signing_key: {v}", "yaml"), ("secretKey = \"{v}\";", "js"), ("accessToken: '{v}',", "js"),
        ("refresh_token = {v}", "ini"), ("STRIPE_SECRET_KEY={v}", "env"), ("AZURE_CLIENT_SECRET={v}", "env"),
        ("rabbitmq_default_pass: {v}", "yaml"), ("KEYCLOAK_ADMIN_PASSWORD={v}", "env"),
        ("grafana.admin_password = {v}", "ini"), ("spring.datasource.password={v}", "properties"),
        ("$dbPass = '{v}';", "php"), ("wifiPassword := \"{v}\"", "go"), ("let apiKey = \"{v}\"", "swift"),
        ("AUTH0_CLIENT_SECRET: \"{v}\"", "yaml"), ("TWILIO_AUTH_TOKEN={v}", "env"),
        ("private_token = {v}", "ini"), ("pgpassword: {v}", "yaml"), ("VAULT_TOKEN={v}", "env"),
        ("secret_access_key: {v}", "yaml"), ("ApiKey = {v}", "ini"), ("X-Api-Key: {v}", "http"),
        ("MOT_DE_PASSE_BDD={v}", "env"), ("heslo_db: {v}", "yaml"), ("password_db = {v}", "ini"),
        ("ПАРОЛЬ_БД={v}", "env"), ("chiave_segreta: {v}", "yaml"), ("cle_secrete = {v}", "ini"),
        ("tajny_klic: {v}", "yaml"), ("passwort_datenbank: {v}", "yaml"), ("Password1 = {v}", "ini"),
        ("admin-password: {v}", "yaml"), ("password_hash_salt={v}", "env"), ("mailgun.api.key={v}", "properties"),
    ]
    for template, shape in names:
        v = R.choice([pw(), s(ALNUM, R.randrange(16, 33)), s(HEX, 32), pw("!$%&/+")])
        line = template.replace("{v}", f"⟦{v}⟧")
        add(cls, shape, "en", f"```{shape}\n{line}\n```" if R.random() < 0.4 else line)


def values_with_symbols() -> None:
    cls = "value with / + $ % ( ) ! &"
    add(cls, "ini", "en", f"[default]\naws_access_key_id = ⟦{akia()}⟧\naws_secret_access_key = ⟦{aws_secret()}⟧")
    add(cls, "env", "en", f"AWS_SECRET_ACCESS_KEY=⟦{aws_secret()}⟧")
    add(cls, "prose", "en", f"The deploy user's secret access key is ⟦{aws_secret()}⟧ (rotated in March).")
    add(cls, "yaml", "en", f"  aws_secret_access_key: ⟦{aws_secret()}⟧")
    add(cls, "shell", "en", f"aws configure set aws_secret_access_key ⟦{aws_secret()}⟧")
    for sym in "/+$%()!&#*^~@":
        v = s(ALNUM, 5) + sym + s(ALNUM, 4) + sym + s(DIG, 2)
        add(cls, R.choice(["env", "yaml", "prose"]), "en", R.choice([
            f"password: ⟦{v}⟧", f"DB_PASSWORD=⟦{v}⟧", f"secret = \"⟦{v}⟧\"", f"- admin password: ⟦{v}⟧",
        ]))
    add(cls, "env", "en", "MAIL_PASSWORD=⟦" + s(ALNUM, 4) + "%21" + s(ALNUM, 4) + "%2F" + s(DIG, 3) + "⟧")
    add(cls, "env", "en", "PGPASSWORD='⟦" + "pa$$" + s(ALNUM, 6) + "⟧'")
    add(cls, "yaml", "en", "token: ⟦" + s(ALNUM, 8) + "(" + s(ALNUM, 4) + ")" + "⟧")
    add(cls, "prose", "en", "root password ⟦" + s(ALNUM, 6) + "!&" + s(DIG, 3) + "⟧ — change after install")
    add(cls, "python", "en", 'SECRET = "⟦' + s(ALNUM, 6) + "/" + s(ALNUM, 8) + "+" + s(ALNUM, 4) + '⟧"')


def urls() -> None:
    cls = "URL with a password"
    schemes = ["postgres", "postgresql", "mysql", "mongodb", "mongodb+srv", "redis", "rediss", "amqp", "amqps",
               "ftp", "sftp", "smtp", "ldap", "https", "http", "mssql", "jdbc:postgresql", "sqlserver", "nats", "git"]
    for scheme in schemes:
        user = R.choice(["admin", "app", "deploy", "root", "svc_backup", "jan.novak", "marie"])
        p = R.choice([pw("!$%&*()+"), s(ALNUM, 14), s(ALNUM, 6) + "%40" + s(ALNUM, 5), s(ALNUM, 5) + "$" + s(DIG, 4)])
        host = R.choice(["db.internal", "10.0.3.7:5432", "cluster0.ab12c.mongodb.net", "mq.example.org", "localhost"])
        url = f"{scheme}://{user}:⟦{p}⟧@{host}/app"
        add(cls, R.choice(["env", "prose", "yaml", "list"]), "en", R.choice([
            f"DATABASE_URL={url}", f"Connect with `{url}`.", f"  url: {url}", f"- staging: {url}",
        ]))
    add(cls, "env", "en", f"REDIS_URL=redis://:⟦{s(ALNUM, 16)}⟧@cache.internal:6379/0")
    add(cls, "prose", "en", f"use rediss://:⟦{pw()}⟧@redis-prod:6380 from the worker")
    add(cls, "env", "en", f"CELERY_BROKER_URL=amqp://guest:⟦{s(ALNUM, 5)}%40{s(ALNUM, 6)}⟧@rabbit:5672//")
    add(cls, "yaml", "en", f"dsn: mysql://shop:⟦{s(ALNUM, 5)}$${s(ALNUM, 5)}⟧@tcp(db:3306)/shop")
    add(cls, "prose", "en", f"git clone https://oauth2:⟦{'glpat-' + s(URLSAFE, 20)}⟧@gitlab.com/team/app.git")
    add(cls, "prose", "en", f"git remote set-url origin https://bot:⟦{ghp()}⟧@github.com/org/repo.git")
    add(cls, "prose", "fr", f"Connexion : postgres://lecteur:⟦{pw()}⟧@bdd.interne/compta")
    add(cls, "prose", "cs", f"Připojení k databázi: mysql://spravce:⟦{pw()}⟧@sql.firma.cz/eshop")
    add(cls, "prose", "uk", f"Рядок підключення: postgresql://oleh:⟦{pw()}⟧@db.local/crm")
    add(cls, "prose", "it", f"Stringa di connessione: mongodb://utente:⟦{pw()}⟧@mongo.locale/negozio")
    add(cls, "python", "en", f'engine = create_engine("postgresql+psycopg2://etl:⟦{s(ALNUM, 12)}⟧@warehouse/dw")')


def glued_tokens() -> None:
    cls = "token glued to text"
    add(cls, "prose", "en", f"tokenghp_⟦{s(ALNUM, 36)}⟧".replace("ghp_⟦", "⟦ghp_"))
    add(cls, "prose", "en", f"my PAT:⟦{ghp()}⟧_old")
    add(cls, "prose", "en", f"(⟦{ghp('gho_')}⟧)")
    add(cls, "prose", "uk", f"токен⟦{ghp()}⟧ для CI")
    add(cls, "prose", "cs", f"tokenem⟦{ghp()}⟧ se přihlásí bot")
    add(cls, "prose", "en", f"访问令牌⟦{ghp()}⟧请勿分享")
    add(cls, "prose", "en", f"キー⟦{'sk_live_' + s(ALNUM, 24)}⟧です")
    add(cls, "prose", "en", f"slack:⟦xoxb-{s(DIG, 12)}-{s(DIG, 12)}-{s(ALNUM, 24)}⟧,")
    add(cls, "prose", "en", f"keyAKIA{s(UP + '234567', 16)}".replace("keyAKIA", "key⟦AKIA") + "⟧")
    add(cls, "prose", "en", f"id=⟦{akia()}⟧_prod")
    add(cls, "prose", "en", f"`⟦glpat-{s(URLSAFE, 20)}⟧`")
    add(cls, "prose", "en", f"npm⟦npm_{s(ALNUM, 36)}⟧")
    add(cls, "prose", "fr", f"jeton:⟦{ghp('ghs_')}⟧.")
    add(cls, "prose", "it", f"chiave→⟦AIza{s(URLSAFE, 35)}⟧←")
    add(cls, "prose", "en", f"Bearer⟦{jwt()}⟧")
    add(cls, "prose", "en", f"ключ⟦sk-proj-{s(ALNUM, 48)}⟧")
    add(cls, "prose", "en", f"x⟦github_pat_{s(ALNUM, 22)}_{s(ALNUM, 59)}⟧x")
    add(cls, "prose", "en", f"hf⟦hf_{s(ALNUM, 34)}⟧")


def key_formats() -> None:
    cls = "key format"
    add(cls, "code", "en", "```\n" + putty() + "\n```")
    add(cls, "prose", "en", putty())
    add(cls, "code", "en", "```\n⟦" + pgp() + "⟧\n```")
    add(cls, "python", "en", f"SECRET_KEY = '⟦django-insecure-{s(LO + DIG + '!@#$%^&*(-_=+)', 50)}⟧'")
    add(cls, "python", "en", f"SECRET_KEY = \"⟦{s(LO + DIG + '!@#$%^&*(-_=+)', 50)}⟧\"")
    add(cls, "env", "en", f"DJANGO_SECRET_KEY=⟦{s(LO + DIG + '@#%^&*(-_=+)', 50)}⟧")
    add(cls, "yaml", "en", "passphrase: ⟦correct horse battery staple 42⟧")
    add(cls, "prose", "en", "GPG pass-phrase: ⟦purple monkey dishwasher 7⟧")
    add(cls, "prose", "en", "ssh key passphrase is ⟦the quick brown fox 1987⟧")
    add(cls, "yaml", "en", f"  user: backup\n  pass: ⟦{pw()}⟧")
    add(cls, "yaml", "en", f"smtp:\n  pass: ⟦{s(ALNUM, 12)}⟧")
    add(cls, "ini", "en", f"[mail]\npass={s(LO, 4)}⟦{s(ALNUM, 10)}⟧".replace(f"pass={''}", "pass="))
    for lang, line in [
        ("de", "Passwort: ⟦{v}⟧"), ("de", "Kennwort = ⟦{v}⟧"), ("de", "Das Passwort lautet ⟦{v}⟧"),
        ("es", "contraseña: ⟦{v}⟧"), ("es", "Contraseña = ⟦{v}⟧"), ("es", "la contraseña es ⟦{v}⟧"),
        ("cs", "heslo: ⟦{v}⟧"), ("cs", "Heslo k Wi-Fi je ⟦{v}⟧"), ("cs", "přihlašovací heslo = ⟦{v}⟧"),
        ("uk", "пароль: ⟦{v}⟧"), ("uk", "Пароль до роутера — ⟦{v}⟧"), ("uk", "ПАРОЛЬ=⟦{v}⟧"),
        ("fr", "mot de passe : ⟦{v}⟧"), ("fr", "Le mot de passe est ⟦{v}⟧"), ("fr", "mdp: ⟦{v}⟧"),
        ("it", "password: ⟦{v}⟧"), ("it", "La password è ⟦{v}⟧"), ("it", "parola d'ordine: ⟦{v}⟧"),
        ("pl", "hasło: ⟦{v}⟧"), ("de", "WLAN-Schlüssel: ⟦{v}⟧"),
    ]:
        add(cls, "prose", lang, line.replace("{v}", pw()))


def vendor_tokens(turn: int) -> None:
    cls = "vendor token"
    toks = [
        f"⟦{akia()}⟧", f"⟦{ghp()}⟧", f"⟦{ghp('ghu_')}⟧", f"⟦{ghp('ghr_')}⟧", f"⟦github_pat_{s(ALNUM, 22)}_{s(ALNUM, 59)}⟧",
        f"⟦glpat-{s(URLSAFE, 20)}⟧", f"⟦gldt-{s(URLSAFE, 20)}⟧", f"⟦glrt-{s(URLSAFE, 20)}⟧",
        f"⟦xoxp-{s(DIG, 12)}-{s(DIG, 12)}-{s(DIG, 13)}-{s(HEX, 32)}⟧",
        f"⟦https://hooks.slack.com/services/T{s(UP + DIG, 8)}/B{s(UP + DIG, 8)}/{s(ALNUM, 24)}⟧",
        f"⟦sk_live_{s(ALNUM, 24)}⟧", f"⟦sk_test_{s(ALNUM, 24)}⟧", f"⟦rk_live_{s(ALNUM, 24)}⟧",
        f"⟦whsec_{s(ALNUM, 32)}⟧",
        f"⟦SK{s(HEX, 32)}⟧", f"⟦SG.{s(URLSAFE, 22)}.{s(URLSAFE, 43)}⟧", f"⟦npm_{s(ALNUM, 36)}⟧",
        f"⟦pypi-AgEIcHlwaS5vcmc{s(URLSAFE, 70)}⟧", f"⟦{jwt()}⟧", f"⟦AIza{s(URLSAFE, 35)}⟧",
        f"⟦ya29.{s(URLSAFE, 60)}⟧", f"⟦sk-proj-{s(URLSAFE, 60)}T3BlbkFJ{s(URLSAFE, 20)}⟧",
        f"⟦sk-ant-api03-{s(URLSAFE, 93)}AA⟧", f"⟦hf_{s(ALNUM, 34)}⟧", f"⟦dop_v1_{s(HEX, 64)}⟧",
        f"⟦shpat_{s(HEX, 32)}⟧", f"⟦shpss_{s(HEX, 32)}⟧", f"⟦{s(DIG, 10)}:AA{s(URLSAFE, 33)}⟧",
        f"⟦{s(HEX, 32)}-us{R.randrange(1, 20)}⟧", f"⟦dapi{s(HEX, 32)}⟧", f"⟦hvs.{s(URLSAFE, 24)}⟧",
        f"⟦AGE-SECRET-KEY-1{s('QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L', 58)}⟧", f"⟦PMAK-{s(HEX, 24)}-{s(HEX, 34)}⟧", f"⟦pul-{s(HEX, 40)}⟧",
        f"⟦lin_api_{s(ALNUM, 40)}⟧", f"⟦glsa_{s(ALNUM, 32)}_{s(HEX, 8)}⟧", f"⟦NRAK-{s(UP + DIG, 27)}⟧",
        f"⟦dp.pt.{s(ALNUM, 43)}⟧", f"⟦sq0atp-{s(URLSAFE, 22)}⟧", f"⟦sq0csp-{s(URLSAFE, 43)}⟧",
        f"⟦EAACEdEose0cBA{s(ALNUM, 40)}⟧", f"⟦ATATT3xFfGF0{s(URLSAFE, 180)}⟧",
        f"⟦{s(URLSAFE, 24)}.{s(URLSAFE, 6)}.{s(URLSAFE, 27)}⟧",  # Discord bot token (needs its name)
        f"⟦xapp-1-{s(UP + DIG, 11)}-{s(DIG, 13)}-{s(HEX, 64)}⟧", f"⟦CLOJARS_{s(HEX, 60)}⟧",
        f"⟦FLWSECK-{s(HEX, 32)}-X⟧", f"⟦sntrys_{s(ALNUM, 60)}⟧", f"⟦rubygems_{s(HEX, 48)}⟧",
        f"⟦pscale_tkn_{s(URLSAFE, 43)}⟧", f"⟦tfp_{s(ALNUM, 40)}⟧", f"⟦sl.{s(URLSAFE, 130)}⟧",
        f"⟦{s(ALNUM, 3)}8Q~{s(URLSAFE + '.~', 34)}⟧",  # Azure AD client secret
    ]
    lead = {"⟦" + s(URLSAFE, 24): "DISCORD_BOT_TOKEN="}
    for i, tok in enumerate(toks):
        name = next((n for k, n in lead.items() if tok.startswith(k[:1])), "")
        shape = ["prose", "code", "list", "table", "env"][(i + 2 * turn) % 5]
        if "Discord" in "" or tok.count(".") == 2 and not tok.startswith(("⟦eyJ", "⟦SG.", "⟦sl.", "⟦dp.")):
            name = "DISCORD_BOT_TOKEN="
        if shape == "prose":
            text = f"Token for the integration: {tok} (expires next year)." if not name else f"{name}{tok}"
        elif shape == "code":
            text = f"```bash\ncurl -H 'Authorization: Bearer {tok}' https://api.example.com/v1/me\n```"
        elif shape == "list":
            text = f"- CI secret: {tok}\n- rotate quarterly"
        elif shape == "table":
            text = f"| service | value |\n|---|---|\n| deploy | {tok} |"
        else:
            text = f"{name or 'SERVICE_TOKEN='}{tok}"
        add(cls, shape, "en", text)
    if turn:
        return
    # Azure storage, GCP service accounts
    add(cls, "env", "en", "AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=notesbak;"
        f"AccountKey=⟦{s(B64, 86)}==⟧;EndpointSuffix=core.windows.net")
    add(cls, "prose", "en", f"SAS: https://notesbak.blob.core.windows.net/c?sv=2022-11-02&sp=r&sig=⟦{s(ALNUM, 43)}%3D⟧")
    add(cls, "json", "en", "{\n  \"type\": \"service_account\",\n  \"project_id\": \"notes-123\",\n"
        f"  \"private_key_id\": \"⟦{s(HEX, 40)}⟧\",\n  \"private_key\": \"⟦{pem('PRIVATE KEY', 6, True)}⟧\",\n"
        "  \"client_email\": \"bot@notes-123.iam.gserviceaccount.com\"\n}")


def private_keys() -> None:
    cls = "private key"
    for kind in ["RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "PRIVATE KEY",
                 "ENCRYPTED PRIVATE KEY"]:
        add(cls, "code", "en", f"```\n⟦{pem(kind)}⟧\n```")
    add(cls, "prose", "en", f"key (pasted from the server):\n⟦{pem('RSA PRIVATE KEY', 3)}⟧\nthen chmod 600")
    add(cls, "yaml", "en", "tls:\n  key: |\n    ⟦" + pem("EC PRIVATE KEY", 2).replace("\n", "\n    ") + "⟧")
    add(cls, "json", "en", f'{{"key": "⟦{pem("PRIVATE KEY", 3, True)}⟧"}}')
    add(cls, "code", "en", f"```\n⟦{pem('PGP PRIVATE KEY BLOCK', 4)}⟧\n```")
    add(cls, "yaml", "en", f"client-key-data: ⟦{s(B64, 120)}=⟧")


def config_files() -> None:
    cls = "config file"
    auth = base64.b64encode(f"jan:{pw()}".encode()).decode()
    add(cls, "json", "en", '{\n  "auths": {\n    "https://index.docker.io/v1/": {\n      "auth": "⟦' + auth + '⟧"\n    }\n  }\n}')
    add(cls, "json", "en", '"ghcr.io": { "auth": "⟦' + base64.b64encode(f"bot:{ghp()}".encode()).decode() + '⟧" }')
    add(cls, "netrc", "en", f"machine api.github.com\n  login octocat\n  password ⟦{ghp()}⟧")
    add(cls, "netrc", "en", f"machine ftp.example.org login backup password ⟦{pw()}⟧")
    add(cls, "shell", "en", f"curl -u admin:⟦{pw('!#%&*+')}⟧ https://jenkins.local/api/json")
    add(cls, "shell", "en", f"curl --user deploy:⟦{s(ALNUM, 14)}⟧ -X POST https://ci/job/build")
    add(cls, "shell", "en", f"curl -u ⟦{'sk_live_' + s(ALNUM, 24)}⟧: https://api.stripe.com/v1/charges")
    add(cls, "shell", "en", f"mysql -u root -p⟦{s(ALNUM, 12)}⟧ shop")
    add(cls, "shell", "en", f"sshpass -p '⟦{pw()}⟧' ssh pi@raspberrypi.local")
    add(cls, "shell", "en", f"docker login -u jan -p ⟦{s(ALNUM, 16)}⟧ registry.example.com")
    add(cls, "ini", "en", f"[global]\nindex-url = https://jan:⟦{s(ALNUM, 16)}⟧@pypi.internal/simple")
    add(cls, "ini", "en", f"//registry.npmjs.org/:_authToken=⟦{s(HEX, 8)}-{s(HEX, 4)}-{s(HEX, 4)}-{s(HEX, 4)}-{s(HEX, 12)}⟧")
    add(cls, "ini", "en", f"db.internal:5432:app:app_user:⟦{pw()}⟧")
    add(cls, "ini", "en", f"https://jan:⟦{ghp()}⟧@github.com")
    add(cls, "yaml", "en", f"users:\n- name: admin\n  user:\n    token: ⟦{s(ALNUM, 52)}⟧")
    add(cls, "toml", "en", f"[tool.poetry.http-basic.private]\nusername = \"jan\"\npassword = \"⟦{pw()}⟧\"")
    add(cls, "toml", "en", f"[registries.private]\ntoken = \"⟦{s(ALNUM, 32)}⟧\"")
    add(cls, "http", "en", f"Authorization: Basic ⟦{base64.b64encode(f'jan:{pw()}'.encode()).decode()}⟧")
    add(cls, "http", "en", f"Authorization: Token ⟦{s(HEX, 40)}⟧")
    add(cls, "xml", "en", f"<password>⟦{pw()}⟧</password>")
    add(cls, "xml", "en", f'<add key="ApiSecret" value="⟦{s(ALNUM, 24)}⟧" />')
    add(cls, "json", "en", f'{{"username": "svc", "password": "⟦{pw()}⟧"}}')
    add(cls, "json", "en", f'"client_secret": "⟦{s(URLSAFE, 24)}⟧",')
    add(cls, "powershell", "en", f"$secure = ConvertTo-SecureString '⟦{pw()}⟧' -AsPlainText -Force")
    add(cls, "shell", "en", f"htpasswd -b .htpasswd admin ⟦{pw()}⟧")
    add(cls, "ini", "en", f"wpa_passphrase=⟦{pw()}⟧")
    add(cls, "ini", "en", f"network={{\n    ssid=\"Home\"\n    psk=\"⟦{pw()}⟧\"\n}}")
    add(cls, "yaml", "en", f"vpn:\n  preshared_key: ⟦{s(ALNUM, 24)}⟧")
    add(cls, "env", "en", f"OPENAI_API_KEY=⟦sk-{s(ALNUM, 48)}⟧")
    add(cls, "env", "en", f"ANTHROPIC_API_KEY=⟦sk-ant-api03-{s(URLSAFE, 93)}AA⟧")


def prose_and_tables() -> None:
    cls = "prose, list or table"
    for lang, text in [
        ("en", "The office Wi-Fi password is ⟦{v}⟧, ask Petra for the guest one."),
        ("en", "- router admin: admin / ⟦{v}⟧"),
        ("en", "Login for the NAS: user `jan`, pw `⟦{v}⟧`"),
        ("en", "bank app PIN and password: ⟦{v}⟧"),
        ("fr", "Le mot de passe du routeur est ⟦{v}⟧ (à changer)."),
        ("fr", "- identifiant : admin, mot de passe : ⟦{v}⟧"),
        ("cs", "Heslo do routeru je ⟦{v}⟧, nikomu ho nedávej."),
        ("cs", "- přihlášení: admin, heslo: ⟦{v}⟧"),
        ("uk", "Пароль від адмінки: ⟦{v}⟧"),
        ("uk", "- логін: admin, пароль: ⟦{v}⟧"),
        ("it", "La password del router è ⟦{v}⟧, non condividerla."),
        ("it", "- utente: admin, password: ⟦{v}⟧"),
        ("de", "Das WLAN-Passwort ist ⟦{v}⟧."),
        ("en", "**Password:** ⟦{v}⟧"),
        ("en", "> password = ⟦{v}⟧"),
        ("fr", "**Clé API :** ⟦{v}⟧"),
        ("cs", "API klíč: ⟦{v}⟧"),
        ("uk", "API-ключ: ⟦{v}⟧"),
        ("it", "chiave API: ⟦{v}⟧"),
        ("fr", "jeton d'accès : ⟦{v}⟧"),
        ("cs", "přístupový token: ⟦{v}⟧"),
        ("uk", "токен доступу: ⟦{v}⟧"),
        ("it", "token di accesso: ⟦{v}⟧"),
        ("en", "secret: ⟦{v}⟧"),
    ]:
        add(cls, "prose", lang, text.replace("{v}", R.choice([pw(), s(ALNUM, 20)])))
    for lang, header in [
        ("en", "| service | user | password |"), ("fr", "| service | utilisateur | mot de passe |"),
        ("cs", "| služba | uživatel | heslo |"), ("uk", "| сервіс | користувач | пароль |"),
        ("it", "| servizio | utente | password |"), ("en", "| Name | Login | Pass |"),
        ("en", "| env | API key | notes |"), ("en", "| host | token |"),
    ]:
        cols = [c.strip() for c in header.strip("|").split("|")]
        rows = []
        for r in range(2):
            cells = []
            for c in cols:
                if c.lower() in {"password", "mot de passe", "heslo", "пароль", "pass", "api key", "token"}:
                    cells.append(f"⟦{R.choice([pw(), s(ALNUM, 18)])}⟧")
                else:
                    cells.append(R.choice(["mail", "nas", "prod", "jan", "admin", "router"]) + str(r))
            rows.append("| " + " | ".join(cells) + " |")
        add(cls, "table", lang, header + "\n|" + "---|" * len(cols) + "\n" + "\n".join(rows))


def front_matter_and_headings() -> None:
    cls = "front matter or heading"
    add(cls, "front matter", "en", f"---\ntitle: Server\napi_key: ⟦{s(ALNUM, 32)}⟧\n---")
    add(cls, "heading", "en", f"## Router password: ⟦{pw()}⟧")
    add(cls, "heading", "cs", f"### Heslo: ⟦{pw()}⟧")
    add(cls, "heading", "fr", f"# Jeton {'⟦' + ghp() + '⟧'}")
    add(cls, "heading", "uk", f"## Пароль: ⟦{pw()}⟧")
    add(cls, "heading", "it", f"## Chiave API: ⟦{s(ALNUM, 24)}⟧")


# Words a password manager's "memorable password" or diceware would join, per notes' language.
PASSPHRASE_WORDS = {
    "en": "orange tiger maple river cobalt tulip window garden silver rocket".split(),
    "cs": "modry kun skace pres plot zahrada okno stribro raketa javor".split(),
    "fr": "soleil levant vert bleu jardin fenetre argent fusee erable tigre".split(),
    "it": "sole verde giardino finestra argento razzo acero tigre fiume mela".split(),
    "uk": "синій кіт стрибає вгору сад вікно срібло ракета клен річка".split(),
    "de": "sonne garten fenster silber rakete ahorn tiger fluss apfel blau".split(),
}


def word_passphrases() -> None:
    """Four to six words joined by one mark, after a name that says password: they read as a slug."""
    cls = "words joined by a mark"
    for template, shape, lang in [
        ("DB_PASSWORD={v}", "env", "en"), ("password: {v}", "yaml", "en"), ("wifi_password = {v}", "ini", "en"),
        ("- Router password: {v}", "list", "en"), ('password = "{v}"', "toml", "en"), ("heslo: {v}", "yaml", "cs"),
        ("Heslo k Wi-Fi: {v}", "prose", "cs"), ("mot de passe : {v}", "prose", "fr"), ("password: {v}", "prose", "it"),
        ("Пароль: {v}", "prose", "uk"), ("Passwort: {v}", "prose", "de"), ("| NAS | admin | {v} |", "table", "en"),
    ]:
        mark = " " if shape == "toml" else R.choice("-._")
        v = mark.join(R.sample(PASSPHRASE_WORDS[lang], R.randrange(4, 7))) + R.choice(["", "", s(DIG, 2)])
        text = template.replace("{v}", f"⟦{v}⟧")
        if shape == "table":
            text = f"| device | user | password |\n|---|---|---|\n{text}"
        add(cls, shape, lang, text)


def more_vendor_tokens() -> None:
    """Formats added on 2026-12-07 (appended, so the records before keep their values), two shapes each,
    with nothing around them that names a secret."""
    toks = [
        f"ntn_{s(DIG, 11)}{s(ALNUM, 35)}", f"secret_{s(ALNUM, 43)}", f"sbp_{s(HEX, 40)}", f"gsk_{s(ALNUM, 52)}",
        f"r8_{s(ALNUM, 37)}", f"tskey-auth-{s(ALNUM, 11)}-{s(ALNUM, 33)}", f"ops_eyJ{s(B64, 240)}",
        f"HRKU-AA{s(URLSAFE, 58)}", f"figd_{s(URLSAFE, 40)}", f"sk.eyJ1Ijoi{s(URLSAFE, 40)}.{s(URLSAFE, 22)}",
    ]
    for tok in toks:  # where no name or header says what it is: only its format can
        add("vendor token", "prose", "en", f"Copied from the dashboard today: ⟦{tok}⟧, works.")
        add("vendor token", "table", "en", f"| service | value |\n|---|---|\n| deploy | ⟦{tok}⟧ |")


def recovery_secrets_and_tools() -> None:
    """A wallet's seed phrase, an account's recovery or backup codes, a Wi-Fi WPA2 key, and passwords
    given to redis-cli, mongosh and openssl on their command lines (added 2026-12-07)."""
    bip39 = "abandon ability able about above absent absorb abstract absurd abuse access accident account".split()
    bip39 += "legal winner thank year wave sausage worth useful zoo wrong wolf wisdom vivid update".split()
    for label, n, shape, lang in [("seed phrase", 12, "prose", "en"), ("Recovery phrase", 24, "list", "en"),
                                  ("mnemonic", 18, "yaml", "en"), ("Seed fráze peněženky", 12, "prose", "cs")]:
        words = " ".join(R.choice(bip39) for _ in range(n))
        add("recovery secret", shape, lang, f"{'- ' if shape == 'list' else ''}{label}: ⟦{words}⟧")
    groups = lambda n, k: R.choice(["-", " "]).join(s(LO + DIG, k) for _ in range(n))  # noqa: E731
    add("recovery secret", "prose", "en", f"BitLocker recovery key: ⟦{'-'.join(s(DIG, 6) for _ in range(8))}⟧")
    add("recovery secret", "list", "en", f"- GitHub recovery codes: ⟦{groups(4, 5)}⟧")
    add("recovery secret", "prose", "en", f"2FA backup codes: ⟦{groups(3, 8)}⟧ (used one)")
    add("recovery secret", "prose", "fr", f"Clé WPA2 : ⟦{pw()}⟧")
    add("recovery secret", "prose", "en", f"WPA2 key: ⟦{pw()}⟧")
    add("config file", "code", "en", f"```bash\nredis-cli -h cache.local -a ⟦{s(ALNUM, 16)}⟧ ping\n```")
    add("config file", "code", "en", f"```bash\nmongosh -u admin -p ⟦{s(ALNUM, 14)}⟧ --authenticationDatabase admin\n```")
    add("config file", "code", "en", f"```bash\nopenssl enc -aes-256-cbc -k ⟦{pw()}⟧ -in notes.tar -out notes.enc\n```")
    add("config file", "code", "en", f"```bash\nopenssl rsa -in key.pem -passin pass:⟦{s(ALNUM, 12)}⟧\n```")


def main(out_path: Path | None = None) -> None:
    for part in (names_with_affixes, values_with_symbols, urls, glued_tokens, key_formats):
        part()
    vendor_tokens(0)
    vendor_tokens(1)  # every format again, in another shape, with other values
    later = (word_passphrases, more_vendor_tokens, recovery_secrets_and_tools)  # added last: the records before keep their values
    for part in (private_keys, config_files, prose_and_tables, front_matter_and_headings, *later):
        part()
    what = "every credential (values are random: none is a real credential)"
    write(RECORDS, out_path or Path(__file__).parent / "positives.txt", what)
    print(f"{len(RECORDS)} records, {sum(t.count('⟦') for *_, t in RECORDS)} credentials")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else None)
