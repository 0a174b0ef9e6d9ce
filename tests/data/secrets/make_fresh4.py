# ruff: noqa: E501  (the records are data: one per line, as written)
"""Write fresh4.txt: a fourth round of credentials in forms none of the corpora holds (positives.txt,
fresh.txt to fresh3.txt), written on 2026-12-07 after the third round's rules and before any rule for
these: its figure before any change predicts an outside check with forms nobody here has seen. Three
per form: two for development, the third held out. Values are made up; none is a real credential.

    python tests/data/secrets/make_fresh4.py [OUT]   # rewrites fresh4.txt beside it (no randomness)

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
    ("SQL INSERT with the password by position", "en", "```sql\nINSERT INTO users (login, password, role) VALUES ('ota', '⟦Vlozit!Radek-3⟧', 'admin');\n```"),
    ("SQL INSERT with the password by position", "en", "INSERT INTO accounts(email, passwd) VALUES ('jana@example.org', '⟦Ucty#2024-x⟧');"),
    ("SQL INSERT with the password by position", "en", "```sql\nINSERT INTO api_clients (name, secret) VALUES\n  ('billing', '⟦bil_4f8c2a9e7d1b3f6a⟧');\n```"),
    ("LaTeX and template definitions", "en", "\\newcommand{\\dbpassword}{⟦Latex!Makro-9⟧}"),
    ("LaTeX and template definitions", "en", "{% set smtp_password = \"⟦Jinja#Posta-21⟧\" %}"),
    ("LaTeX and template definitions", "en", "\\def\\apitoken{⟦tex_7c2e9a4f1b8d3e6c0a5f⟧}"),
    ("definition lists", "en", "Password\n: ⟦Definice!Seznam4⟧\n\nUser\n: ota"),
    ("definition lists", "en", "Router\n:   admin page at 192.168.1.1\n\nWi-Fi password\n:   ⟦Deflist-Wifi-77⟧"),
    ("definition lists", "en", "API token\n: ⟦dl_9a8b7c6d5e4f3a2b1c0d⟧"),
    ("two-column key and value tables", "en", "| Field | Value |\n|---|---|\n| Host | nas.local |\n| Password | ⟦Dva-Sloupce!5⟧ |"),
    ("two-column key and value tables", "en", "|===\n| Setting | Value\n| User | backup\n| Secret | ⟦Asciidoc#Tab-8⟧\n|==="),
    ("two-column key and value tables", "en", "| Wi-Fi name | Chata |\n|---|---|\n| Wi-Fi key | ⟦Svisla-Tabulka-3⟧ |"),
    ("XML key and value elements", "en", "```xml\n<AutoLogon>\n  <Password>\n    <Value>⟦Unattend!Auto7⟧</Value>\n    <PlainText>true</PlainText>\n  </Password>\n</AutoLogon>\n```"),
    ("XML key and value elements", "en", "<String><Key>Password</Key><Value ProtectInMemory=\"True\">⟦Keepass#Xml-55⟧</Value></String>"),
    ("XML key and value elements", "en", "<entry key=\"smtp.password\">⟦Props!Xml-2024⟧</entry>"),
    ("the value before its name", "en", "⟦Modry-Slon-84⟧ is the new Wi-Fi password, the old one no longer works."),
    ("the value before its name", "cs", "⟦Kvetinac#7⟧ — to je heslo k routeru."),
    ("the value before its name", "en", "Write down ⟦Lednice!Mraz-2⟧ as the fridge app's password."),
    ("question and answer", "en", "Q: What's the guest Wi-Fi password?\nA: ⟦Host!Kavarna-8⟧"),
    ("question and answer", "cs", "Heslo na NAS? ⟦Otazka-Odpoved-6⟧"),
    ("question and answer", "en", "- wifi pw?\n  - ⟦Odpoved#Wifi-19⟧"),
    ("keys printed in groups", "en", "WPA key on the router's label: ⟦4F8A 2C9D 7E1B 5A3F⟧"),
    ("keys printed in groups", "en", "Windows product key: ⟦VK7JG-NPHTM-C97JM-9MPGT-3V66T⟧"),
    ("keys printed in groups", "en", "BitLocker key for the laptop: ⟦318197-427955-592658-210112-375694-651035-493108-206537⟧"),
    ("a parenthetical before the colon", "en", "pw (base64): ⟦SGVzbG8hMjAyNC1vdGE=⟧"),
    ("a parenthetical before the colon", "cs", "Heslo (nové, od března): ⟦Brezen!Nove-3⟧"),
    ("a parenthetical before the colon", "en", "API key (prod): ⟦pk_prod_8e3a1f9c7b2d4e6a⟧"),
    ("Dockerfile ENV and ARG", "en", "```dockerfile\nFROM python:3.12\nENV DB_PASSWORD ⟦Docker!Env-71⟧\n```"),
    ("Dockerfile ENV and ARG", "en", "```dockerfile\nARG NPM_TOKEN=⟦npmtok-4c8e2a6f9b1d3e7a⟧\nRUN npm ci\n```"),
    ("Dockerfile ENV and ARG", "en", "```\nENV SECRET_KEY \"⟦django-prod-8f3k2m9x7q4w⟧\"\n```"),
    ("typographic quotes around the value", "cs", "Heslo jsem nastavil na „⟦Uvozovky!Cz-4⟧“."),
    ("typographic quotes around the value", "fr", "Le mot de passe est «⟦Guillemets-Fr-9⟧»."),
    ("typographic quotes around the value", "en", "The password is “⟦Curly-Quotes!2⟧”."),
    ("HTTP clients' other options", "en", "curl --oauth2-bearer ⟦eyK9Lm2Nq8Rt4Vx7Zb3Wc6Yd⟧ https://api.example.com/me"),
    ("HTTP clients' other options", "en", "http -a ota:⟦Httpie!Auth-5⟧ GET https://api.example.com/items"),
    ("HTTP clients' other options", "en", "wget --http-user=ota --http-password=⟦Wget#Stahni-8⟧ https://files.example.com/a.zip"),
    ("wallet private keys", "en", "Paper wallet WIF: ⟦5HueCGU8rMjxEXxiPuD5BDku4MkFqeZyd4dZ1jvhTVqvbTLvyTJ⟧"),
    ("wallet private keys", "en", "Test account (Sepolia) key ⟦0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318⟧"),
    ("wallet private keys", "en", "xprv for the cold wallet: ⟦xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi⟧"),
    ("API keys named in other languages", "pl", "Klucz API do mapy: ⟦mapa_7e2c9f4a1b8d3e6f⟧"),
    ("API keys named in other languages", "es", "La clave de API de pagos es ⟦pagos-9f3a7c1e5b2d8f4a⟧."),
    ("API keys named in other languages", "ja", "地図のAPIキー：⟦chizu_4a9c2e7f1b5d8e3a⟧"),
    ("user:password@host without a scheme", "en", "rsync -av photos/ ota:⟦Rsync!Heslo-4⟧@backup.local:/srv/photos"),
    ("user:password@host without a scheme", "en", "Old FTP: petra:⟦Ftp#Stary-2019⟧@ftp.example.org"),
    ("user:password@host without a scheme", "en", "git remote add nas deploy:⟦Git!Nas-Push7⟧@nas.local:/volume1/git/app.git"),
    ("secret managers' command lines", "en", "security add-generic-password -a ota -s smtp -w ⟦Keychain!Mac-6⟧"),
    ("secret managers' command lines", "en", "gh secret set DEPLOY_KEY --body ⟦ghs_body_9c4e1a7f3b8d2e6a5c0f⟧"),
    ("secret managers' command lines", "en", "aws ssm put-parameter --name /prod/db/pass --type SecureString --value ⟦Ssm!Param-2024⟧"),
    ("numeric passwords", "cs", "Heslo k bráně je ⟦58213907⟧."),
    ("numeric passwords", "en", "Wi-Fi password: ⟦84029176⟧"),
    ("numeric passwords", "en", "Voicemail passcode is ⟦904512⟧."),
    ("diffs that change a password", "en", "```diff\n-DB_PASSWORD=old\n+DB_PASSWORD=⟦Diff!Novy-31⟧\n```"),
    ("diffs that change a password", "en", "```diff\n   smtp:\n-    password: changeme\n+    password: ⟦Zmena#Smtp-8⟧\n```"),
    ("diffs that change a password", "en", "@@ -3,3 +3,3 @@\n-token = \"\"\n+token = \"⟦tok_diff_5e9a2c7f1b4d⟧\"\n"),
    ("Windows registry exports", "en", "[HKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Winlogon]\n\"DefaultUserName\"=\"kiosk\"\n\"DefaultPassword\"=\"⟦Kiosk!Reg-2024⟧\""),
    ("Windows registry exports", "en", "reg add \"HKLM\\SOFTWARE\\App\" /v ApiToken /t REG_SZ /d ⟦regtok_8f2a6c9e4b1d⟧ /f"),
    ("Windows registry exports", "en", "\"ProxyPass\"=\"⟦Proxy#Reg-77⟧\""),
    ("values followed by an emoji or a remark", "en", "wifi heslo: ⟦Smajlik!Wifi9⟧ 😀"),
    ("values followed by an emoji or a remark", "en", "password: ⟦Poznamka-Heslo-4⟧ (changed 2024-05)"),
    ("values followed by an emoji or a remark", "en", "NAS pw ⟦Nas!Remark-12⟧ <- do not share"),
]


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("fresh4.txt")
    write(held_out_thirds(RECORDS), target, "what must not leave the machine", "make_fresh4.py (shape: dev or held-out)")
