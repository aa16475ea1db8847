"""Red team 'device' 6, redaction: a secret given as ``NAME=value`` inside a text (a ``terminal_run`` command,
a message body, a note) was masked only when NAME was one of six words standing alone: ``DB_PASSWORD=...``,
``PGPASSWORD=... psql``, ``GITHUB_TOKEN=...``, ``client_secret=...``, ``access_token=...`` (``_`` is a word
character, so ``\\bpassword`` never matched inside them), a JSON text ``{"password": "..."}`` and a URL's
``user:password@`` were kept in clear in the audit record. Now a key of any such pair is judged as an argument
name is (``secret_name``), or by a secret word inside a glued name, and a URL's password is masked."""

from __future__ import annotations

import pytest

from sentinel_mcp.core.redactor import redact_record, scrub_text

SECRET = "hunter2zz"
TEXTS = [
    f"DB_PASSWORD={SECRET}",
    f"PGPASSWORD={SECRET} psql -h db",
    f"export GITHUB_TOKEN={SECRET}",
    f"AWS_SECRET_ACCESS_KEY={SECRET}",
    f"userPassword={SECRET}",
    f"client_secret={SECRET}&grant_type=client_credentials",
    f"https://example.com/cb?access_token={SECRET}&x=1",
    f'{{"password": "{SECRET}"}}',
    f"{{'api_key': '{SECRET}'}}",
    f'{{"pin": {SECRET}}}',
    f"mysql --password={SECRET} shop",
    f"MYSQL_PWD={SECRET}",
    f"https://bob:{SECRET}@example.com/repo.git",
    f"git clone ssh://deploy:{SECRET}@10.0.0.2/x",
    f"ＤＢ＿ＰＡＳＳＷＯＲＤ＝{SECRET}",  # fullwidth, read through the redactor's fold
    f"password\u200b={SECRET}",
    f"password : {SECRET}",
    f'PASSWORD="{SECRET} with spaces"',
]


@pytest.mark.parametrize("text", TEXTS)
def test_a_secret_pair_in_a_text_is_masked(text) -> None:
    out = scrub_text(text)
    assert SECRET not in out, (text, out)
    assert "[redacted]" in out, out


@pytest.mark.parametrize(
    "text",
    [
        "keyboard=us layout=qwerty",  # key words inside other words: not secrets
        "monkey: banana",
        "primary_key=id",
        "tokenizer_name: gemma",  # named for tokens, holds none
        "see https://example.com:8443/path@v2",  # no user:password
        "ratio=3:2 time=10:30",
    ],
)
def test_other_pairs_are_left_alone(text) -> None:
    assert scrub_text(text) == text


def test_a_terminal_command_keeps_no_password_in_its_audit_record() -> None:
    record = {"tool": "device__terminal_run",
              "arguments": {"command": f"PGPASSWORD={SECRET} psql -h db -c 'select 1'"}}
    assert SECRET not in str(redact_record(record))
