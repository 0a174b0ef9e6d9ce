# ruff: noqa: E501  (the records are data: one per line, as written)
"""Write fresh3.txt: a third round of credentials in forms none of the corpora holds (positives.txt,
fresh.txt, fresh2.txt), written on 2026-12-07 after the second round's rules and before any rule for
these; its figure before any change is the best prediction of an outside check with forms nobody here
has seen. Three per form: two for development, the third held out. Values are made up; none is real.

    python tests/data/secrets/make_fresh3.py [OUT]   # rewrites fresh3.txt beside it (no randomness)

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
    ("org-mode properties", "en", "* Home server\n:PROPERTIES:\n:USER: ota\n:PASSWORD: ⟦Orgmode!Srv42⟧\n:END:"),
    ("org-mode properties", "en", "#+TITLE: Router\n#+PASSWORD: ⟦Kabel-Modem-81⟧\nNotes on the cable modem."),
    ("org-mode properties", "en", "** Mailgun\n   :PROPERTIES:\n   :API_TOKEN: ⟦mgtok-7f2c9a1e4b8d6f3a0c5e⟧\n   :END:"),
    ("YAML block scalars", "en", "```yaml\nsmtp:\n  password: |\n    ⟦Posta#Blok-2024⟧\n```"),
    ("YAML block scalars", "en", "```yaml\nbackup:\n  encryption_passphrase: >-\n    ⟦zelena louka pod horou 7⟧\n```"),
    ("YAML block scalars", "en", "```yaml\nvault:\n  token: |-\n    ⟦s.Qw9Er7Ty5Ui3Op1As2Df4Gh⟧\n```"),
    ("name and value apart by a tab or spaces", "en", "Account\tNAS\nLogin\tota\nPassword\t⟦Tab!Oddelene9⟧"),
    ("name and value apart by a tab or spaces", "en", "```\nHost        db.internal\nUser        report\nPassword    ⟦Zarovnane-Pw-3⟧\n```"),
    ("name and value apart by a tab or spaces", "cs", "Heslo\t\t⟦Tabulka#Heslo5⟧\nPoznámka\tz Excelu"),
    ("abbreviations of password", "en", "garage NAS: user ota, pswd ⟦Garaz!Nas-71⟧"),
    ("abbreviations of password", "en", "VPN p/w: ⟦Tunel-Domu-2024⟧ (from IT)"),
    ("abbreviations of password", "en", "Old laptop pword ⟦Notebook#Stary9⟧ — wipe before selling"),
    ("a key emoji as the label", "en", "📶 Chata-WiFi\n🔑 ⟦Les!Chata-2023⟧"),
    ("a key emoji as the label", "en", "- 🔐 NAS admin: ⟦Sklep-Disk-44⟧"),
    ("a key emoji as the label", "en", "Jira → ota / 🗝️ ⟦Jira#Tikety-12⟧"),
    ("log in as a user with a value", "en", "Log in as ota with ⟦Prihlas!Me-55⟧ and open the admin panel."),
    ("log in as a user with a value", "en", "Sign in to the staging Grafana using admin / ⟦Graf-Stage!9⟧."),
    ("log in as a user with a value", "en", "ssh in as deploy using ⟦Deploy#Klic-2025⟧ when the key is lost."),
    ("keys named by their cipher", "en", "AES key: ⟦3f8a9c2e7b1d4f6a0c5e9b2d8f4a1c7e3b9d5f2a8c6e0b4d1f7a3c9e5b2d8f6a⟧"),
    ("keys named by their cipher", "en", "The ChaCha20 key for the backups is ⟦9e4b7d2a5c8f1e3b6d0a4c7f2e5b8d1a⟧."),
    ("keys named by their cipher", "en", "```ini\n[crypto]\nhmac = ⟦c2VjcmV0LWhtYWMta2V5LTIwMjQtcHJvZA==⟧\n```"),
    ("kubectl and helm literals", "en", "kubectl create secret generic db --from-literal=username=app --from-literal=password=⟦Kube!Lit-88⟧"),
    ("kubectl and helm literals", "en", "helm install pg bitnami/postgresql --set auth.postgresPassword=⟦Helm-Pg-2024x⟧"),
    ("kubectl and helm literals", "en", "kubectl create secret generic api --from-literal=API_KEY=⟦ak_5d9f2b7e1c4a8f3d6b0e⟧"),
    ("archive and crypto tools", "en", "zip -r -P ⟦Archiv!Zip-33⟧ taxes.zip taxes/"),
    ("archive and crypto tools", "en", "7z a -p⟦Sedm-Zip#2024⟧ -mhe=on photos.7z photos/"),
    ("archive and crypto tools", "en", "keytool -importkeystore -srckeystore app.p12 -srcstorepass ⟦Keystore!Src9⟧ -destkeystore app.jks"),
    ("Windows admin tools", "en", "schtasks /create /tn Backup /tr backup.cmd /sc daily /ru CORP\\svc_backup /rp ⟦Sched!Task-61⟧"),
    ("Windows admin tools", "en", "psexec \\\\pc042 -u CORP\\admin -p ⟦PsExec#Adm-4⟧ cmd"),
    ("Windows admin tools", "en", "sc config MyService obj= \".\\svcuser\" password= ⟦Sluzba!Sc-2023⟧"),
    ("URL fragments", "en", "After the redirect the browser showed https://app.example.com/callback#access_token=⟦ya1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6⟧&token_type=bearer"),
    ("URL fragments", "en", "Share link: https://share.example.org/s/4hT9#key=⟦Qm8Zx3Nv7Lp2Wr5Tk9Yb⟧"),
    ("URL fragments", "en", "https://notes.example.net/n/77#password=⟦Frag!Ment-2024⟧"),
    ("more languages", "ka", "როუტერის პაროლი არის ⟦Tbilisi#2024⟧"),
    ("more languages", "sr", "Лозинка за рутер је ⟦Beograd!Ruter7⟧."),
    ("more languages", "sq", "Fjalëkalimi i Wi-Fi është ⟦Tirana-Wifi-55⟧."),
    ("lock combinations", "en", "Bike lock combination is ⟦4-7-1-9⟧."),
    ("lock combinations", "cs", "Kombinace zámku na kole: ⟦3 8 2 6⟧"),
    ("lock combinations", "en", "Locker #12 combo: ⟦22-08-35⟧"),
    ("backup codes one per line", "en", "GitHub backup codes:\n\n⟦8f3k2-m9x4a⟧\n⟦7d2j5-n1q8b⟧\n⟦4h6p9-r3t7c⟧\n⟦2w8y1-z5v0d⟧"),
    ("backup codes one per line", "en", "Google recovery codes (printed copy in the drawer)\n- ⟦4821 7730⟧\n- ⟦1194 6652⟧\n- ⟦8037 2219⟧"),
    ("backup codes one per line", "en", "Proton 2FA recovery:\n```\n⟦a1b2c3d4⟧\n⟦e5f6g7h8⟧\n⟦i9j0k1l2⟧\n```"),
    ("name and value pairs", "en", "```json\n\"environment\": [\n  {\"name\": \"DB_PASSWORD\", \"value\": \"⟦Ecs!Task-Pw-6⟧\"},\n  {\"name\": \"DB_HOST\", \"value\": \"db.internal\"}\n]\n```"),
    ("name and value pairs", "en", "```yaml\nenv:\n  - name: API_TOKEN\n    value: ⟦tok-9c4e1a7f3b8d2e6a⟧\n  - name: LOG_LEVEL\n    value: info\n```"),
    ("name and value pairs", "en", "| Variable | Value |\n|---|---|\n| SMTP_PASSWORD | ⟦Tabulka!Smtp3⟧ |\n| SMTP_HOST | mail.example.com |"),
    ("service configs' own names", "en", "```\n# /etc/sssd/sssd.conf\nldap_default_bind_dn = cn=reader,dc=example,dc=org\nldap_default_authtok = ⟦Sssd!Bind-72⟧\n```"),
    ("service configs' own names", "en", "```\n# /etc/nslcd.conf\nbinddn cn=nslcd,dc=example,dc=org\nbindpw ⟦Nslcd#Bind-2024⟧\n```"),
    ("service configs' own names", "en", "```\n# ~/.msmtprc\naccount default\nhost smtp.example.com\nuser ota\npassword ⟦Msmtp!Odesli4⟧\n```"),
    ("a setter called with the name", "en", "```php\ndefine('DB_PASSWORD', '⟦Wp!Config-2024⟧');\ndefine('DB_HOST', 'localhost');\n```"),
    ("a setter called with the name", "en", "```java\nprops.put(\"mail.smtp.password\", \"⟦Java#Props-55⟧\");\n```"),
    ("a setter called with the name", "en", "```python\nos.environ[\"STRIPE_SECRET\"] = \"⟦strp_live_9Kd2Mx7Qw4Ez⟧\"\n```"),
    ("account lists without a password word", "en", "- Netflix — ota@example.com — ⟦Kino!Vecer-2024⟧"),
    ("account lists without a password word", "en", "Spotify: ota.novak@example.org / ⟦Hudba#Proud-8⟧"),
    ("account lists without a password word", "en", "| Site | Login | |\n|---|---|---|\n| bank.example | 12345678 | ⟦Banka!Ucet-77⟧ |"),
    ("hedged values in comments", "en", "```python\n# TODO: move to vault; the real one is ⟦Prod!Real-Key9⟧\nAPI_KEY = os.environ[\"API_KEY\"]\n```"),
    ("hedged values in comments", "en", "// prod value (don't commit): ⟦Pr0d-Valu3!x⟧"),
    ("hedged values in comments", "en", "<!-- actual credential for the demo: ⟦Demo#Cred-2024⟧ -->"),
    ("passwords in parentheses and brackets", "en", "Connect to the lab switch (admin, ⟦Lab!Switch-5⟧) before noon."),
    ("passwords in parentheses and brackets", "en", "Guest Wi-Fi [⟦Host-Kava-2023⟧] is on the sticker."),
    ("passwords in parentheses and brackets", "en", "Printer web UI {admin:⟦Tisk!Web-66⟧}"),
]


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("fresh3.txt")
    write(held_out_thirds(RECORDS), target, "what must not leave the machine", "make_fresh3.py (shape: dev or held-out)")
