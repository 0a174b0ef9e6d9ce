# ruff: noqa: E501  (the records are data: one per line, as written)
"""Write fresh2.txt: a second round of credentials in forms neither the labelled corpus nor fresh.txt
holds, written on 2026-12-07 before any rule was looked at for them, three per form: two for
development, the third held out (its figure predicts the next outside check). Values are made up for
this file; none is a real credential.

    python tests/data/secrets/make_fresh2.py [OUT]   # rewrites fresh2.txt beside it (no randomness)

Record heads are `%% form | part | language`, part being `dev` or `held-out`; ⟦…⟧ marks what must not
leave the machine.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from labelled import held_out_thirds, write  # noqa: E402

# (form, language, marked text): three per form, the third held out.
RECORDS: list[tuple[str, str, str]] = [
    ("value on the next line", "en", "**Wi-Fi password:**\n⟦Zelena-Lampa-8⟧\n\nSSID is Chata-5G."),
    ("value on the next line", "cs", "Heslo k routeru\n\n    ⟦Kopretina#2021⟧\n\n(admin rozhraní na 192.168.0.1)"),
    ("value on the next line", "en", "- Password for the NAS admin page:\n  `⟦nas-Lod-Kotva-3⟧`\n- Username: admin"),
    ("command-line tools' password flags", "en", "smbclient //fs01/share -U petra%⟦Jablko!2022⟧"),
    ("command-line tools' password flags", "en", "xfreerdp /v:10.0.0.12 /u:Administrator /p:⟦Rdp-Okno-5512⟧ /cert:ignore"),
    ("command-line tools' password flags", "en", "sqlcmd -S db01 -U sa -P ⟦Sa!Mssql-2019⟧ -Q \"SELECT 1\""),
    ("environment before a command", "en", "PGPASSWORD=⟦pgDump#Noc7⟧ pg_dump -h db.internal -U backup app > app.sql"),
    ("environment before a command", "en", "In PowerShell: `$env:NUGET_API_KEY = \"⟦oy2kfa8xnq3v7m1c5zt9w4e6r0b2d8h⟧\"` then dotnet nuget push"),
    ("environment before a command", "en", "fish shell: set -x BORG_PASSPHRASE '⟦tichy-rybnik-u-lesa⟧'"),
    ("URL query parameter", "en", "curl \"https://api.weather.example.com/v2/forecast?city=Brno&appid=⟦7c1e4a9f2b8d3e6a0f5c9b1d7e2a4f8c⟧\""),
    ("URL query parameter", "en", "Feed URL for the calendar: https://calendar.example.com/ical/feed.ics?user=ota&token=⟦Yq3Lm8Rt2Vx9Kp4Zs7Wb⟧"),
    ("URL query parameter", "en", "GET https://graph.example.com/me?fields=id,name&access_token=⟦EAAGm0PX4ZCpsBAKZBq7x9Lm2Nv5Qw8Rt3Yu6Io1Pa4Sd7Fg0Hj3Kl⟧"),
    ("HTTP header other than Authorization", "en", "curl -H \"X-API-Key: ⟦a7Kd92mLq4Zx8Pv3Rn6T⟧\" https://api.example.com/v1/items"),
    ("HTTP header other than Authorization", "en", "```http\nGET /v1/status HTTP/1.1\nHost: monitor.example.net\nX-Auth-Token: ⟦mon_7f3a9c1e5b2d8f4a6c0e⟧\n```"),
    ("HTTP header other than Authorization", "en", "Paste this header into Postman: `Cookie: sessionid=⟦k2v9q8w7e6r5t4y3u2i1o0p9a8s7d6f5⟧`"),
    ("connection string fields", "en", "Server=sql01;Database=Shop;User Id=shop_app;Password=⟦Obchod-2024!x⟧;TrustServerCertificate=True"),
    ("connection string fields", "en", "jdbc:mysql://db.example.com:3306/crm?user=crm&password=⟦Crm#Heslo55⟧&useSSL=true"),
    ("connection string fields", "en", "Driver={PostgreSQL};Server=pg1;Port=5432;Uid=report;Pwd=⟦R3port!ng-Pg⟧;"),
    ("credential names without the word password", "en", "```env\nGH_PAT=⟦11ABCDEFG0abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOP⟧\nREPO=acme/app\n```"),
    ("credential names without the word password", "en", "MAIL_AUTH=\"⟦relay:Posta-Zprava-77⟧\""),
    ("credential names without the word password", "en", "```yaml\nsmtp:\n  host: mail.example.com\n  login: alerts\n  creds: ⟦Alerty&Posta2024⟧\n```"),
    ("prose, Latin-script languages not yet covered", "vi", "Mật khẩu wifi ở quán là ⟦caphe-sua-da-88⟧ nhé."),
    ("prose, Latin-script languages not yet covered", "id", "Kata sandi server cadangan adalah ⟦Nasi!Goreng77⟧ sejak bulan lalu."),
    ("prose, Latin-script languages not yet covered", "tr", "Modemin şifresi artık ⟦Kedi-Balik-42⟧ oldu."),
    ("prose, other scripts", "he", "הסיסמה של הנתב היא ⟦Tapuz!2023⟧ מאז אתמול."),
    ("prose, other scripts", "ko", "회사 와이파이 비밀번호는 ⟦Haneul#5588⟧ 입니다."),
    ("prose, other scripts", "ar", "كلمة المرور الجديدة للحساب هي ⟦Qamar-9921!⟧ لا تشاركها."),
    ("PIN and short codes in prose", "cs", "PIN ke kartě od spořitelny je ⟦4821⟧, PUK ⟦77120934⟧."),
    ("PIN and short codes in prose", "en", "The alarm code for the garage is ⟦1956⟧ (disarm within 30 s)."),
    ("PIN and short codes in prose", "it", "Il PIN del telefono di lavoro è ⟦0712⟧."),
    ("value in Markdown emphasis or code after the name", "en", "The guest network's password is **⟦Host-Sit-2024⟧** (changed in May)."),
    ("value in Markdown emphasis or code after the name", "cs", "Heslo na chatu: `⟦houby-v-lese⟧`, router je za skříní."),
    ("value in Markdown emphasis or code after the name", "en", "Router password is _⟦Ovoce!Mango5⟧_ now."),
    ("user and password on one line", "en", "NAS login ota pass ⟦Lipa-Kvet-2024⟧"),
    ("user and password on one line", "en", "user: deploy | pass: ⟦Nasazeni#88⟧ | host: ci.example.com"),
    ("user and password on one line", "en", "Staging DB: ota/⟦Staging!Db-4⟧ on db-stage:5432"),
    ("piped into a prompt", "en", "echo '⟦Sudo-Heslo!9⟧' | sudo -S apt-get update"),
    ("piped into a prompt", "en", "```expect\nexpect \"password:\"\nsend \"⟦Expect-Me-2023⟧\\r\"\n```"),
    ("piped into a prompt", "en", "printf '⟦Nove!Heslo42⟧\\n⟦Nove!Heslo42⟧\\n' | passwd backup"),
    ("XML and HTML attributes", "en", "<user name=\"jenkins\" password=\"⟦J3nk!ns-Build⟧\" roles=\"admin\"/>"),
    ("XML and HTML attributes", "en", "<div id=\"map\" data-api-key=\"⟦mk_4f9a2c7e1b8d3f6a⟧\"></div>"),
    ("XML and HTML attributes", "en", "<server><id>nexus</id><username>deploy</username><password>⟦Nexus-Repo!77⟧</password></server>"),
    ("numbered recovery words", "en", "Wallet recovery words:\n1. ⟦orbit⟧ 2. ⟦maple⟧ 3. ⟦sudden⟧ 4. ⟦lizard⟧ 5. ⟦cotton⟧ 6. ⟦ankle⟧\n7. ⟦gravity⟧ 8. ⟦pencil⟧ 9. ⟦harbor⟧ 10. ⟦velvet⟧ 11. ⟦tribe⟧ 12. ⟦useful⟧"),
    ("numbered recovery words", "en", "Seed (Ledger), keep offline:\n- 1 ⟦canyon⟧\n- 2 ⟦wheat⟧\n- 3 ⟦proud⟧\n- 4 ⟦salmon⟧\n- 5 ⟦ozone⟧\n- 6 ⟦dizzy⟧\n- 7 ⟦ribbon⟧\n- 8 ⟦glove⟧\n- 9 ⟦timber⟧\n- 10 ⟦eager⟧\n- 11 ⟦napkin⟧\n- 12 ⟦quote⟧"),
    ("numbered recovery words", "en", "| # | word |\n|---|---|\n| 1 | ⟦ladder⟧ |\n| 2 | ⟦opera⟧ |\n| 3 | ⟦fiscal⟧ |\n| 4 | ⟦mutual⟧ |\n| 5 | ⟦sponsor⟧ |\n| 6 | ⟦bubble⟧ |\n| 7 | ⟦cruise⟧ |\n| 8 | ⟦delay⟧ |\n| 9 | ⟦forest⟧ |\n| 10 | ⟦injury⟧ |\n| 11 | ⟦absorb⟧ |\n| 12 | ⟦violin⟧ |\n\n(recovery phrase of the old wallet)"),
    ("the value referred to by a pronoun", "en", "I reset the NAS password yesterday; it's ⟦Tuleni-Mys-33⟧ now."),
    ("the value referred to by a pronoun", "en", "New VPN password came by SMS. Use ⟦Vpn!Leden2025⟧ until they rotate it."),
    ("the value referred to by a pronoun", "en", "The router's admin password expired, so I set a new one: ⟦Kamen-Most-71⟧."),
    ("two-factor seeds", "en", "2FA secret for the admin account: ⟦JBSWY3DPEHPK3PXPKZXW6YTB⟧ (add to Aegis)"),
    ("two-factor seeds", "en", "otpauth://totp/Acme:ota?secret=⟦HXDMVJECJJWSRB3HWIZR4IFUGFTMXBOZ⟧&issuer=Acme"),
    ("two-factor seeds", "en", "TOTP seed for the bank: ⟦MFRGGZDFMZTWQ2LKNNWG23TPOBYXE43U⟧"),
    ("private keys without a PEM header", "en", "```json\n{\"kty\": \"EC\", \"crv\": \"P-256\", \"x\": \"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU\", \"y\": \"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0\", \"d\": \"⟦jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI⟧\"}\n```"),
    ("private keys without a PEM header", "en", "WireGuard peer config:\n[Interface]\nPrivateKey = ⟦yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=⟧\nAddress = 10.8.0.2/24"),
    ("private keys without a PEM header", "en", "```\nssh-keygen output saved; private part (base64, no header):\n⟦b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQAAACDx2Yk3QmPq⟧\n```"),
    ("pass-phrases of words with spaces", "en", "Wi-Fi password: ⟦correct horse battery staple⟧"),
    ("pass-phrases of words with spaces", "cs", "Heslo k disku je ⟦modrá velryba plave pomalu⟧, bez uvozovek."),
    ("pass-phrases of words with spaces", "en", "The backup disk's password is \"⟦seven purple kites at dawn⟧\"."),
    ("values in a list under a heading", "en", "### Printer (office)\n- IP: 10.0.0.40\n- admin pw ⟦Tiskni!2024⟧\n- toner: TN-2420"),
    ("values in a list under a heading", "uk", "## Роутер\n* логін: admin\n* пароль — ⟦Sonyashnyk_77⟧\n* Wi-Fi: Dacha"),
    ("values in a list under a heading", "fr", "## Box internet\n- identifiant : admin\n- mot de passe : ⟦Fromage-Bleu-39⟧\n- SSID : Maison"),
]


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("fresh2.txt")
    write(held_out_thirds(RECORDS), target, "what must not leave the machine", "make_fresh2.py (shape: dev or held-out)")
