# ruff: noqa: E501  (the records are data: one per line, as written)
"""Write fresh.txt: credentials in the forms issue 59 names, written before the rules for them, three
per class: two for development and the third held out (never read while writing rules; its figure is
the promise). Values are made up for this file; none is a real credential.

    python tests/data/secrets/make_fresh.py [OUT]   # rewrites fresh.txt beside it (no randomness)

Record heads are `%% class | part | language`, part being `dev` or `held-out`; ⟦…⟧ marks what must not
leave the machine.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from labelled import held_out_thirds, write  # noqa: E402

# (class, language, marked text): three per class, the third held out.
RECORDS: list[tuple[str, str, str]] = [
    ("password manager export", "en", "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\nWork,,login,Jira,,,0,https://jira.example.com,petra,⟦Kvetina-88-Jaro⟧,"),
    ("password manager export", "en", '"Group","Title","Username","Password","URL","Notes"\n"Root","Bank","jnovak","⟦mango!Tulip42⟧","https://bank.example","" '),
    ("password manager export", "en", "url,username,password,httpRealm,formActionOrigin,guid,timeCreated\nhttps://mail.example.org,ota@example.org,⟦sN7#qLp2vX⟧,,https://mail.example.org,{a1b2},1700000000"),
    ("table column", "en", "| service | login | PW |\n|---|---|---|\n| router | admin | ⟦brambora77⟧ |"),
    ("table column", "cs", "| Služba | Uživatel | Heslo |\n|---|---|---|\n| Wi-Fi chata | — | ⟦lesnicesta2019⟧ |"),
    ("table column", "en", "| Device | PIN |\n| --- | --- |\n| Garage door | ⟦40917⟧ |\n| Safe | ⟦8830⟧ |"),
    ("human-chosen value", "en", "```env\nDB_PASSWORD=⟦admin-2024!⟧\nDB_USER=app\n```"),
    ("human-chosen value", "en", "SMTP_PASS=⟦welcome_2025⟧"),
    ("human-chosen value", "en", "```ini\n[db]\npassword = ⟦guest.4711⟧\n```"),
    ("prose a few words later", "pt", "A senha do Wi-Fi da casa agora é ⟦laranja2024⟧, troquei ontem."),
    ("prose a few words later", "nl", "Het wachtwoord van de NAS heb ik veranderd in ⟦Fietsbel#19⟧."),
    ("prose a few words later", "es", "La clave de la alarma es ⟦Rojo-7733⟧ desde marzo."),
    ("prose a few words later", "de", "Das Kennwort für den Router habe ich geändert auf ⟦Sonnenblume_12⟧."),
    ("prose a few words later", "pl", "Hasło do skrzynki to ⟦zielonyKot5⟧, nie zapomnij."),
    ("prose a few words later", "sv", "Lösenordet till servern är numera ⟦Blabar!2023⟧."),
    ("prose a few words later", "zh", "路由器的密码是 ⟦qiuyue8899⟧ ，别告诉别人。"),
    ("prose a few words later", "ja", "会社のVPNのパスワードは ⟦Sakura#2024⟧ です。"),
    ("prose a few words later", "fr", "Le code d'accès du portail est maintenant ⟦Pomme7Vert⟧."),
    ("sql", "en", "```sql\nCREATE USER 'report'@'%' IDENTIFIED BY '⟦Rep0rt-Qtr3⟧';\n```"),
    ("sql", "en", "```sql\nALTER ROLE analytics WITH LOGIN PASSWORD '⟦an4lytics!Pg⟧';\n```"),
    ("sql", "en", "Run: `CREATE LOGIN etl WITH PASSWORD = '⟦EtlJob#2024x⟧';` on the SQL Server."),
    ("function arguments", "en", "```python\nclient.login(\"ops@example.com\", \"⟦Tr33house!⟧\")\n```"),
    ("function arguments", "en", "```python\nr = requests.get(url, auth=(\"api\", \"⟦k9Pw-lamp-22⟧\"))\n```"),
    ("function arguments", "en", "```js\nconst conn = mysql.createConnection('db.local', 'root', '⟦Okno_Dvere5⟧');\n```"),
    ("windows net use", "en", "net use Z: \\\\nas\\share /user:EXAMPLE\\petra ⟦Lipa2024*⟧"),
    ("windows net use", "en", "Mapped the drive with `net use X: \\\\fs01\\data ⟦Zelena55!⟧ /user:jan`"),
    ("windows net use", "en", "runas /user:admin cmd, then: net use \\\\srv\\c$ /user:admin ⟦Qwerty!998⟧"),
    ("network device config", "en", "```\nusername netops privilege 15 password 0 ⟦Sw1tchR00m!⟧\n```"),
    ("network device config", "en", "```\nline vty 0 4\n password ⟦telnet4life⟧\n login\n```"),
    ("network device config", "en", "```\nwpa-psk ascii 0 ⟦ChataNaKopci22⟧\nsnmp-server community ⟦publ1cRO-x⟧ RO\n```"),
    ("redis", "en", "```\nrequirepass ⟦R3dis-Cache-77⟧\n```"),
    ("redis", "en", "```conf\nmasterauth ⟦replica!Pass9⟧\n```"),
    ("redis", "en", "In redis.conf set `requirepass ⟦Kafe-Lod-41⟧` and restart."),
    ("npmrc", "en", "```ini\n//registry.example.com/:_auth=⟦dXNlcjpzZWNyZXQxMjM0NQ==⟧\n```"),
    ("npmrc", "en", "```\n//npm.pkg.github.com/:_authToken=⟦a81f2c9d77e54b0f9e3c1d2b4a6f8e0c⟧\n```"),
    ("npmrc", "en", ".npmrc:\n\n    _password=⟦c3VwZXJTZWNyZXQ5OQ==⟧\n    username=deploy"),
    ("terraform default", "en", "```hcl\nvariable \"db_password\" {\n  type    = string\n  default = \"⟦Terra-Form-2024⟧\"\n}\n```"),
    ("terraform default", "en", "```hcl\nvariable \"admin_secret\" {\n  default     = \"⟦s3cr3t_Admin_77⟧\"\n  description = \"admin\"\n}\n```"),
    ("terraform default", "en", "```hcl\nvariable \"api_token\" {\n  sensitive = true\n  default   = \"⟦tok_9f8e7d6c5b4a⟧\"\n}\n```"),
    ("user slash password", "en", "Creds: deploy / ⟦Bramborak#12⟧"),
    ("user slash password", "en", "Login for the staging box: root / ⟦Stag1ng!Box⟧"),
    ("user slash password", "en", "- printer admin: admin / ⟦Tiskarna-2023⟧"),
    ("token as URL user", "en", "git clone https://⟦ghp_8dK2mX9vQ4wL7nP3rT6yB1cF5hJ0sA2eG4iU⟧@github.com/acme/app.git"),
    ("token as URL user", "en", "pip install git+https://⟦glpat-Zx8Yw7Vu6Ts5Rq4Pp3On⟧@gitlab.example.com/tools/cli.git"),
    ("token as URL user", "en", "remote: https://⟦a4f09c2b7e6d81f3a5c9b0e2d4f6a8c1⟧:x-oauth-basic@github.example.com/org/repo"),
    ("webhook URL", "en", "Alerts go to https://discord.com/api/webhooks/1123456789012345678/⟦Xk9_aB3cD4eF5gH6iJ7kL8mN9oP0qR1sT2uV3wX4yZ5aB6cD7eF8gH9iJ0kL1mN2o⟧"),
    ("webhook URL", "en", "Teams hook: https://example.webhook.office.com/webhookb2/1a2b3c4d-5e6f@7a8b/IncomingWebhook/⟦9f8e7d6c5b4a39281706f5e4d3c2b1a0⟧/0a1b2c3d-4e5f"),
    ("webhook URL", "en", "POST to https://hooks.zapier.com/hooks/catch/1234567/⟦ab3cd9x⟧/ for new rows"),
    ("openvpn static key", "en", "```\n-----BEGIN OpenVPN Static key V1-----\n⟦e5c2a7f1d3b9846a0c5e7f2b1d4a9c3e\n8b6f0d2a4c7e9b1f3a5d8c0e2b4f6a8d⟧\n-----END OpenVPN Static key V1-----\n```"),
    ("openvpn static key", "en", "<tls-auth>\n-----BEGIN OpenVPN Static key V1-----\n⟦0a1b2c3d4e5f60718293a4b5c6d7e8f9\nf9e8d7c6b5a4938271605f4e3d2c1b0a⟧\n-----END OpenVPN Static key V1-----\n</tls-auth>"),
    ("openvpn static key", "en", "ta.key:\n-----BEGIN OpenVPN Static key V1-----\n⟦7c3e9a1f5b2d8c4e6a0f3b7d1c9e5a2f\n4d8b0f6a2c9e7b3d5f1a8c0e6b4d2f9a⟧\n-----END OpenVPN Static key V1-----"),
    ("wifi QR", "en", "QR for guests: `WIFI:T:WPA;S:Chalupa;P:⟦hribek-v-lese-7⟧;;`"),
    ("wifi QR", "en", "WIFI:S:Office-5G;T:WPA2;P:⟦Kancl!2024wifi⟧;H:false;;"),
    ("wifi QR", "en", "Printed on the fridge: WIFI:T:WPA;P:⟦jahody&smetana⟧;S:Home;;"),
    ("percent-encoded URL password", "en", "DATABASE_URL=postgres://app:⟦Heslo%40Doma2024⟧@db.internal:5432/app"),
    ("percent-encoded URL password", "en", "amqp://worker:⟦R%40bbit%21Mq9⟧@mq.example.local:5672/"),
    ("percent-encoded URL password", "en", "mongodb+srv://admin:⟦Mongo%23Atlas%4077⟧@cluster0.example.net/test"),
    ("kubernetes secret", "en", "```yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  username: ⟦YXBwdXNlcg==⟧\n  password: ⟦UzNjcmV0LVBhc3MtOTk=⟧\n```"),
    ("kubernetes secret", "en", "```yaml\nkind: Secret\ntype: Opaque\ndata:\n  api-key: ⟦ZjNhOWMyZTdiMWQ0NWY2YTg=⟧\n```"),
    ("kubernetes secret", "en", "```yaml\nkind: Secret\nstringData:\n  token: ⟦plain-token-value-4471⟧\ndata:\n  cert-pass: ⟦bW9qZWhlc2xvMTIz⟧\n```"),
]


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("fresh.txt")
    write(held_out_thirds(RECORDS), target, "what must not leave the machine", "make_fresh.py (shape: dev or held-out)")
