"""Redaction: every pattern, the near misses, counts, payloads and the Redactor.

Where it is applied (the buffers' append path) is tested in ``tests/actors/test_privacy.py``.
"""

from __future__ import annotations

import random
import threading

import pytest

from actors.core.bodies import sense_input
from actors.core.redaction import rules as redaction_rules
from actors.core.redaction import text as redaction
from actors.core.redaction.payload import redact_payload
from actors.core.redaction.redactor import Redactor
from actors.core.redaction.rules import KINDS, marker
from actors.core.redaction.text import redact
from tests.support.harness import ROOT
from tests.support.posts import recorded
from tests.support.prompt_corpus import cases
from tests.support.redaction_samples import (
    AWS,
    GHP,
    JWT,
    PW,
    SK,
    VISA,
    A,
    C,
    P,
    T,
    W,
    capture_with_secrets,
)
from transport.demo.replay import load_session

PAT = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ"
SLACK = "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
    "-----END RSA PRIVATE KEY-----"
)

# Vendor keys of the right shapes, made up. Each prefix is written apart from its body, so that
# no secret scanner takes this file for a leak.
ALNUM = "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5hJ7kL9mP2qR4sT6uV8wX0yZ2aB4cD6eF8gH0"
HEX = "0123456789abcdef" * 4
STRIPE = "sk_" + "live_" + ALNUM[:24]
STRIPE_RESTRICTED = "rk_" + "live_" + (ALNUM * 2)[:99]
STRIPE_TEST = "sk_" + "test_" + ALNUM[1:33]
GITLAB = "glpat-" + "xY7_aB3dE5gH7jK9mN1p"
GITLAB_ROUTABLE = "glpat-" + ALNUM[:27] + ".01" + "0a1b2c3"
GITLAB_DEPLOY = "gldt-" + ALNUM[5:25]
NPM = "npm_" + ALNUM[:36]
GOOGLE = "AIza" + "SyB7xq-3kLmN0pQrS4tUvW5xYz_6AbC" + "f8g9"
HUGGING_FACE = "hf_" + "abcdefghijklmnopqrstuvwxyzABCDEFGH"
SLACK_WEBHOOK = "https://hooks.slack.com/services/" + "T0A1B2C3D/B4E5F6G7H/" + ALNUM[:24]
SENDGRID = "SG." + ALNUM[:22] + "." + ALNUM[22:65]
TWILIO = "SK" + HEX[:32]
SHOPIFY = "shpat_" + HEX[3:35]
SHOPIFY_SECRET = "shpss_" + HEX[7:39]
DIGITALOCEAN = "dop_" + "v1_" + HEX
PYPI = "pypi-" + "AgEIcHlwaS5vcmc" + ALNUM[:60]
DATABRICKS = "dapi" + HEX[:32]
TELEGRAM = "110201543:" + "AA" + "HdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1"
LINEAR = "lin_" + "api_" + ALNUM[:40]
PERPLEXITY = "pplx-" + ALNUM[:48]
SENTRY = "sntryu_" + HEX
AGE = "AGE-SECRET-KEY-" + "1QQPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHC"
URL = "https://alice:" + "s3cr3t-Pa55" + "@db.example.com:5432/app"

K = marker("private-key")

POSITIVES: list[tuple[str, str, str]] = [
    # (what, text, redacted)
    ("private", "a <private>my diary</private> b", f"a {P} b"),
    ("private across lines", "<private>one\ntwo</private>\nthree", f"{P}\nthree"),
    ("private any case", "x <PRIVATE>y</Private> z", f"x {P} z"),
    ("private unterminated: to the end", "keep <private>all of\nthis", f"keep {P}"),
    ("PEM private key", f"key:\n{PEM}\nnext", f"key:\n{K}\nnext"),
    (
        "PEM OpenSSH",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbg==\n-----END OPENSSH PRIVATE KEY-----",
        K,
    ),
    ("PEM unterminated: to the end", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADAN", K),
    ("sk- key", f"key={SK};", f"key={A};"),
    ("sk-ant key", "sk-ant-api03-Xy7_Ab12Cd34Ef56Gh78Ij90Kl-QQ", A),
    (
        "sk-or key",
        "OPENROUTER_API_KEY=sk-or-v1-" + "0123456789abcdef" * 4,
        f"OPENROUTER_API_KEY={A}",
    ),
    ("ghp_ token", f"token {GHP} ok", f"token {A} ok"),
    ("gho_ token", "gho_" + "Z" * 29 + "9", A),
    ("github_pat_", f"({PAT})", f"({A})"),
    ("slack bot token", f"SLACK={SLACK}", f"SLACK={A}"),
    ("slack user token", "xoxp-123456789012-1234567890", A),
    ("AWS AKIA", f"aws_access_key_id = {AWS}", f"aws_access_key_id = {W}"),
    ("AWS ASIA", "ASIAY34FZKBOKMUTVV7A,", f"{W},"),
    ("JWT", f"token={JWT}&x=1", f"token={T}&x=1"),
    ("Bearer", "Authorization: Bearer abc123def456ghi", f"Authorization: Bearer {T}"),
    ("bearer, long and without digits", "bearer AbCdEfGhIjKlMnOpQrStUv", f"bearer {T}"),
    ("Bearer JWT", f"Authorization: Bearer {JWT}", f"Authorization: Bearer {T}"),
    ("password=", "login password=hunter2 ok", f"login password={PW} ok"),
    ("passwd:", "passwd: s3cr3t!", f"passwd: {PW}"),
    ("PASSWORD in an env line", "DB_PASSWORD=Tr0ub4dor&3", f"DB_PASSWORD={PW}&3"),
    ("camelCase name", "userPassword: 'x y z'", f"userPassword: '{PW}'"),
    ("JSON password", '{"password": "two words"}', f'{{"password": "{PW}"}}'),
    ("passphrase", "passphrase = correct-horse", f"passphrase = {PW}"),
    ("Visa, spaced", f"card {VISA} exp", f"card {C} exp"),
    ("Visa, dashed", "4111-1111-1111-1111", C),
    ("Mastercard", "5555555555554444.", f"{C}."),
    ("Amex 4-6-5", "3782 822463 10005", C),
    ("13 digits", "4222222222222", C),
    ("19 digits", "6011000400000000003", C),
    ("card then its expiry", f"{VISA} 12/28", f"{C} 12/28"),
    ("card after a number", f"qty 1234 {VISA}", f"qty 1234 {C}"),
    ("two cards", f"{VISA} 5555 5555 5555 4444", f"{C} {C}"),
    (
        "URL credentials",
        f"DATABASE_URL={URL}",
        f"DATABASE_URL=https://alice:{PW}@db.example.com:5432/app",
    ),
    ("URL credentials, no user", "redis://:hunter2@cache:6379/0", f"redis://:{PW}@cache:6379/0"),
    (
        "URL credentials, quoted",
        "url = 'postgres://app:pw0@db/x'",
        f"url = 'postgres://app:{PW}@db/x'",
    ),
    ("URL password holding @", "https://bob:p@ss@host/x", f"https://bob:{PW}@host/x"),
    ("URL password, %-encoded", "amqp://guest:g%40st!$@mq", f"amqp://guest:{PW}@mq"),
    ("Stripe live key", f"STRIPE_SECRET_KEY={STRIPE}", f"STRIPE_SECRET_KEY={A}"),
    ("Stripe restricted key", f"'{STRIPE_RESTRICTED}'", f"'{A}'"),
    ("Stripe test key", f"stripe.api_key = {STRIPE_TEST}", f"stripe.api_key = {A}"),
    ("GitLab token", f"PRIVATE-TOKEN: {GITLAB}", f"PRIVATE-TOKEN: {A}"),
    ("GitLab routable token", f"{GITLAB_ROUTABLE}.", f"{A}."),
    ("GitLab deploy token", f"token={GITLAB_DEPLOY}&x", f"token={A}&x"),
    (
        "GitLab token in a clone URL",
        f"https://oauth2:{GITLAB}@gitlab.com/a/b",
        f"https://oauth2:{A}@gitlab.com/a/b",
    ),
    (
        "npm token",
        f"//registry.npmjs.org/:_authToken={NPM}",
        f"//registry.npmjs.org/:_authToken={A}",
    ),
    ("Google API key", f"?key={GOOGLE}&q=1", f"?key={A}&q=1"),
    ("Hugging Face token", f"HF_TOKEN={HUGGING_FACE}", f"HF_TOKEN={A}"),
    (
        "Slack webhook",
        f"curl -X POST {SLACK_WEBHOOK} -d @m",
        f"curl -X POST https://hooks.slack.com/services/{A} -d @m",
    ),
    ("SendGrid key", f'"{SENDGRID}"', f'"{A}"'),
    ("Twilio API key", f"TWILIO_API_KEY={TWILIO}", f"TWILIO_API_KEY={A}"),
    ("Shopify access token", f"X-Shopify-Access-Token: {SHOPIFY}", f"X-Shopify-Access-Token: {A}"),
    ("Shopify shared secret", SHOPIFY_SECRET, A),
    ("DigitalOcean token", f"DIGITALOCEAN_TOKEN={DIGITALOCEAN}", f"DIGITALOCEAN_TOKEN={A}"),
    ("PyPI token after password", f"password = {PYPI}", f"password = {A}"),
    ("PyPI token in twine's env", f"TWINE_TOKEN={PYPI}", f"TWINE_TOKEN={A}"),
    ("Databricks token", f"{DATABRICKS}-2 and {DATABRICKS}", f"{A} and {A}"),
    (
        "Telegram bot token",
        f"api.telegram.org/bot{TELEGRAM}/getMe",
        f"api.telegram.org/bot110201543:{A}/getMe",
    ),
    ("Linear key", LINEAR, A),
    ("Perplexity key", f"({PERPLEXITY})", f"({A})"),
    ("Sentry user token", f"SENTRY_AUTH_TOKEN={SENTRY}", f"SENTRY_AUTH_TOKEN={A}"),
    ("age secret key", f"# key: {AGE}", f"# key: {K}"),
]

NEAR_MISSES: list[tuple[str, str]] = [
    ("15 digits failing Luhn", "378282246310006"),
    ("16 digits failing Luhn", "4111-1111-1111-1112"),
    ("epoch milliseconds passing Luhn", "ts=1769901185123"),
    ("a decimal", "ratio 0.4111111111111111"),
    ("digits glued to letters", "id4111111111111111 4111111111111111x"),
    ("dashed id", "order-4111111111111111"),
    ("date and time", "2026-02-03 12:34:56"),
    ("phone numbers", "+1 415-555-0100, +44 20 7946 0958"),
    ("UUID", "550e8400-e29b-41d4-4123-446655440000"),
    ("git SHA", "commit 3943bf5a1b2c3d4e5f60718293a4b5c6d7e8f901"),
    ("sk- inside a word", "task-list-of-everything-and-more-1234"),
    ("sk- words without a digit", "sk-learn-compatible-estimators-everywhere"),
    ("sk- too short", "sk-abc123"),
    ("ghp_ too short", "ghp_abc123"),
    ("xoxo", "xoxo-hugs-and-kisses-to-you-all"),
    ("AKIA too short", "AKIA1234"),
    ("AKIA too long", "AKIAIOSFODNN7EXAMPLEX"),
    ("ASIAN", "ASIAN markets opened"),
    ("one eyJ segment", "eyJhbGciOiJIUzI1NiJ9 alone"),
    ("the bearer of bad news", "the bearer of bad news, bearer responsibilities"),
    ("Bearer placeholder", "Authorization: Bearer <RELAY_TOKEN>"),
    ("a sentence with password", "Please enter your password to continue."),
    ("a type annotation", "def login(user: str, password: str) -> None:"),
    ("a comparison", "if password == confirm:"),
    ("an empty value", 'password = None; password = ""'),
    ("a password hash", "password_hash=ab12cd"),
    ("PWD is a directory", "PWD=/home/me/project"),
    ("a certificate", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"),
    ("a public key", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----"),
    ("a closing tag alone", "text </private> more"),
    ("a marker", f"{A} {PW} {C} Bearer {T} password={PW}"),
    ("code that names a key", "key = config.api_key or settings.stripe_api_key"),
    ("hf_hub_download", 'path = hf_hub_download("org/model", filename="config.json")'),
    ("npm_config_cache", "npm_config_cache=/tmp/x npm_config_registry_url_for_the_scope=1"),
    ("sk_live without a key", "sk_live, rk_live and sk_test_ keys; sk_live_abc123"),
    ("Stripe prefix and an identifier", "sk_test_" + "connection_pool_timeout_in_seconds_x"),
    ("Stripe publishable key", "pk_" + "live_" + ALNUM[:24]),
    ("AIzaSy too short", "AIzaSy and AIzaSyD3asb-2pEZ"),
    ("a 40-digit git SHA", "HEAD is " + HEX[:40]),
    ("SK glued to a word", "TASK" + HEX[:32] + " DISK_" + HEX[:32]),
    ("SK and too few hex digits", "SK" + HEX[:31]),
    ("Twilio account SID", "AC" + HEX[:32]),
    ("dapi inside a word", "sandapi" + HEX[:32]),
    ("glpat- too short", "glpat-abc123 gldt-token"),
    ("SG. too short", "SG.Abc.Def and e.g. SG.pipeline"),
    ("hf_ and too few letters", "hf_" + "abcdefghijklmnop"),
    ("a long identifier", "def test_the_cheap_tests_never_skip_a_rule_that_would_match() -> None:"),
    ("a long base64 run", "data:image/png;base64," + ALNUM + ALNUM),
    ("a Stripe docs URL", "see https://docs.stripe.com/keys#obtain-api-keys"),
    (
        "Slack docs URLs",
        "https://api.slack.com/messaging/webhooks https://hooks.slack.com/services/",
    ),
    ("a Slack webhook placeholder", "https://hooks.slack.com/services/T000/B000/XXXX"),
    ("a URL with a user and no password", "https://user@host/path ssh://git@github.com:22/x"),
    ("an empty URL password", "https://user:@host"),
    ("a URL with a port", "https://host:8443/path?next=a@b http://localhost:3000/#a@b"),
    ("@ after the authority", "https://example.com/a:b@c and https://example.com/u/x:y@z"),
    ("an IPv6 URL", "http://[::1]:8080/ http://[fe80::1]:80/@me"),
    ("git over SSH", "git@github.com:org/repo.git"),
    ("e-mail addresses", "bob@example.com, mailto:x@y.z, <alice@mail.example.org>"),
    ("a time and AA", "12:30:AA and 1234:AAbc"),
    ("a Telegram id and too short", "110201543:" + "AA" + "HdqTcvCH1vGWJxfSe"),
]


LONG_SK = "sk-or-v1-" + HEX  # 73 characters: an editor wraps it


def wide(text: str) -> str:
    """``text`` in full-width forms (U+FF01 to U+FF5E), which NFKC reads back as ASCII."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


UNICODE_POSITIVES: list[tuple[str, str, str]] = [
    # (what, text, redacted)
    ("key split by a newline", f"KEY={SK[:16]}\n{SK[16:]}\nnext", f"KEY={A}\nnext"),
    ("key split after its dash", f"{SK[:8]}\n{SK[8:]}", A),
    ("key split by CRLF", f"npm token {NPM[:30]}\r\n{NPM[30:]}", f"npm token {A}"),
    ("AWS key split by a newline", f"{AWS[:10]}\n{AWS[10:]}", W),
    ("a wrapped key over three lines", f"{LONG_SK[:40]}\n{LONG_SK[40:60]}\n{LONG_SK[60:]}", A),
    ("the line after a wrapped key stays", f"{SK}\nNext steps", f"{A}\nNext steps"),
    ("key split by a space", f"token {GHP[:20]} {GHP[20:]} ok", f"token {A} ok"),
    ("the word after a key stays", f"{SK} token2 expires", f"{A} token2 expires"),
    ("key split by a no-break space", f"{SK[:16]}\xa0{SK[16:]}", A),
    ("AWS key split by a narrow no-break space", f"{AWS[:8]}\u202f{AWS[8:]}", W),
    ("zero-width space in sk-", f"key={SK[:2]}\u200b{SK[2:]}", f"key={A}"),
    ("zero-width space inside an sk- key", f"{SK[:12]}\u200b{SK[12:]} ok", f"{A} ok"),
    ("zero-width joiner in ghp_", f"{GHP[:2]}\u200d{GHP[2:]}", A),
    ("soft hyphen in AKIA", f"id {AWS[:4]}\xad{AWS[4:]}.", f"id {W}."),
    ("zero-width space and a line end in a key", f"{SK[:6]}\u200b{SK[6:16]}\n{SK[16:]}.", f"{A}."),
    ("word joiner and BOM in a key", f"{SK[:5]}\u2060{SK[5:9]}\ufeff{SK[9:]}", A),
    ("Cyrillic dze in sk-", f"\u0455k-{SK[3:]}", A),
    ("Cyrillic A in AKIA", f"\u0410{AWS[1:]}", W),
    ("Greek Kappa in AKIA", f"A\u039a{AWS[2:]}", W),
    ("full-width sk-", f"{wide('sk-')}{SK[3:]}", A),
    ("a full-width key", f"key: {wide(GHP)}", f"key: {A}"),
    ("full-width password and colon", f"{wide('password:')} hunter2", f"{wide('password:')} {PW}"),
    ("zero-width space in password", "pass\u200bword=hunter2", f"pass\u200bword={PW}"),
    ("full-width colon after password", "password\uff1ahunter2", f"password\uff1a{PW}"),
    ("Cyrillic er in password", "\u0440assword=hunter2", f"\u0440assword={PW}"),
    ("password and a no-break space", "password\xa0=\xa0hunter2", f"password\xa0=\xa0{PW}"),
    ("Bearer and a no-break space", "Bearer\xa0abc123def456ghi", f"Bearer\xa0{T}"),
    ("card with dots", "card 4111.1111.1111.1111.", f"card {C}."),
    ("card with double spaces", "4111  1111  1111  1111 exp", f"{C} exp"),
    ("Amex with dots", "3782.822463.10005", C),
    ("card in full-width digits", wide("4111 1111 1111 1111"), C),
]

UNICODE_NEAR_MISSES: list[tuple[str, str]] = [
    ("accents and quotes", "naïve café — “quotes” and ‘more’ … ok"),
    ("Japanese with full-width punctuation", "日本語のテキスト（テスト）：ｏｋ、１２３"),
    ("Russian with look-alike letters", "Привет, мир: раскладка АРІ, ѕk-learn и Ассоль"),
    ("Greek", "Ο κωδικός είναι ΑΚΙΑ του ΚΑΙ"),
    ("ligatures and compatibility forms", "ﬁle ﬂow x² ½ ™ Ⅻ ① ㎏ ℃"),
    ("a word split from a key-like one by a space", "sk-learn-compatible estimators1234567890ab"),
    ("a line end before an identifier", "the sk-learn\nestimators_compatible_with_pipelines_v2"),
    ("a short key-like word at a line end", "ghp_\nabc and AKIA\nIOSF"),
    ("two long words split by a space", "test_the_cheap_tests_never_skip_a_rule thatWouldMatch2"),
    ("dotted groups, no card's layout", "OID 5105.105.105.105.100 and 2.16.840.1.113730.3.1.1"),
    ("an IP address and a decimal", "10.0.0.1:8080 192.168.100.200 pi 3.14159265358979323846"),
    ("a zero-width space in prose", "hello\u200bworld, soft\xadhyphen"),
    ("a key split by a space into two short halves (a limit)", f"{AWS[:10]} {AWS[10:]}"),
]


@pytest.mark.parametrize(("what", "text", "redacted"), POSITIVES, ids=[p[0] for p in POSITIVES])
def test_each_secret_is_replaced_by_its_typed_marker(what: str, text: str, redacted: str) -> None:
    out, counts = redact(text)
    assert out == redacted, what
    assert sum(counts.values()) == redacted.count("[redacted:")
    assert set(counts) <= set(KINDS)


@pytest.mark.parametrize(("what", "text"), NEAR_MISSES, ids=[n[0] for n in NEAR_MISSES])
def test_near_misses_survive_unchanged(what: str, text: str) -> None:
    out, counts = redact(text)
    assert (out, counts) == (text, {}), what
    assert out is text  # nothing was built


@pytest.mark.parametrize(("what", "text", "redacted"), POSITIVES, ids=[p[0] for p in POSITIVES])
def test_redacting_redacted_text_changes_nothing(what: str, text: str, redacted: str) -> None:
    assert redact(redacted) == (redacted, {}), what


def test_counts_are_by_kind_and_each_secret_counts_once() -> None:
    text = (
        f"{SK} {GHP} {AWS} {JWT} password={SK} Bearer {SK} {VISA} 5555555555554444 "
        f"<private>{SK} {VISA}</private> {PEM}"
    )
    out, counts = redact(text)
    assert counts == {
        "private": 1,
        "private-key": 1,
        "api-key": 4,  # the key after password= and Bearer counts as a key, once
        "aws-key": 1,
        "token": 1,
        "card": 2,
    }
    assert out == f"{A} {A} {W} {T} password={A} Bearer {A} {C} {C} {P} {K}"


def test_vendor_keys_and_url_credentials_count_by_kind() -> None:
    keys = (STRIPE, GITLAB, NPM, GOOGLE, HUGGING_FACE, SENDGRID, TWILIO, SHOPIFY, DIGITALOCEAN)
    more = (PYPI, DATABRICKS, LINEAR, PERPLEXITY, SENTRY, SLACK_WEBHOOK)
    text = " ".join((*keys, *more, URL, f"bot{TELEGRAM}", AGE, f"https://u:{NPM}@h"))
    out, counts = redact(text)
    assert counts == {"api-key": 17, "password": 1, "private-key": 1}
    assert out == " ".join(
        (
            *[A] * (len(keys) + len(more) - 1),
            f"https://hooks.slack.com/services/{A}",
            f"https://alice:{PW}@db.example.com:5432/app",
            f"bot110201543:{A}",
            K,
            f"https://u:{A}@h",  # a key as the password counts as a key, once
        )
    )


def test_a_burst_of_texts_is_tested_once_and_each_text_redacted_alone() -> None:
    redactor = Redactor()
    texts = (f"npm token {NPM}", "hooks.slack.com/services/", f"T0/B0/{ALNUM[:24]}", URL)
    assert redactor.texts(texts) == [
        f"npm token {A}",
        "hooks.slack.com/services/",
        f"T0/B0/{ALNUM[:24]}",
        f"https://alice:{PW}@db.example.com:5432/app",
    ]
    assert redactor.counts() == {**dict.fromkeys(KINDS, 0), "api-key": 1, "password": 1}


def test_no_marker_holds_the_literal_of_a_rule_or_a_run_of_key_characters() -> None:
    """What a marker puts in a text cannot make a rule left out by the cheap tests match.

    ``[redacted:password]`` holds the password rule's name, which its pattern needs followed by
    ``=`` or ``:``; no other rule is chosen for any marker.
    """
    for kind in KINDS:
        raw = marker(kind).encode()
        assert redaction_rules._key_words(raw) == b"", kind
        assert {rule.kind for rule in redaction_rules.rules_for(raw)} <= {"password"}, kind
        assert redact(marker(kind)) == (marker(kind), {}), kind


def test_positions_hold_around_characters_beyond_latin_1() -> None:
    text = f"— café 日本 password=hunter2 İstanbul {VISA} “{SK}” Bearer abc123def456"
    assert redact(text)[0] == f"— café 日本 password={PW} İstanbul {C} “{A}” Bearer {T}"


def test_a_pathological_run_of_digit_groups_is_replaced_whole() -> None:
    """Past the budget of digits read closely, runs that may hold a card are not let through."""
    text = "before " + "4111 " * 5000 + "after"
    assert redact(text) == (f"before {C} after", {"card": 1})
    epochs = ", ".join(["1769901185123"] * 5000)  # start with 1: never read closely
    assert redact(epochs) == (epochs, {})


FRAGMENTS = [
    *(text for _, text, _ in POSITIVES),
    *(text for _, text in NEAR_MISSES),
    " ",
    "\n",
    "-",
    "_",
    "=",
    ": ",
    '"',
    "'",
    "<",
    "J",
    "1",
    "4111",
    "PASS",
    "Bearer ",
    "x",
    "://",
    "https://u:",
    "@",
    ":",
    "AA",
    "123456789",
    "sk_live_",
    "hooks.slack.com/services/",
    ALNUM[:24],
    *(text for _, text, _ in UNICODE_POSITIVES),
    *(text for _, text in UNICODE_NEAR_MISSES),
    "\u200b",
    "\xa0",
    "\r\n",
    "\u0455k-",
    "ｓｋ-",
    "AKIA",
    "4111.",
    "  ",
    ALNUM[:12],
    f"{SK[:12]} ",
    f"{AWS[:10]} ",
]


def every_rule(text: str) -> tuple[str, dict[str, int]]:
    """Every rule applied in order until nothing changes, none skipped by a cheap test."""
    counts: dict[str, int] = {}
    changed = True
    while changed:
        changed = False
        read = redaction._read(text, redaction_rules.RULES)
        for rule in redaction_rules.RULES:
            text, n = rule.apply(read)
            if n:
                read = redaction._read(text, redaction_rules.RULES)
                counts[rule.kind] = counts.get(rule.kind, 0) + n
                changed = True
    return text, counts


@pytest.mark.slow
def test_the_cheap_tests_never_skip_a_rule_that_would_match() -> None:
    """Mixed fragments: redact (rules behind their cheap tests) equals every rule applied, and
    redacting its result changes nothing."""
    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 8)))
        redacted, counts = redact(text)
        assert (redacted, counts) == every_rule(text), text
        assert redact(redacted) == (redacted, {}), text


# -- payloads and the Redactor ---------------------------------------------------------------


def test_every_string_of_a_payload_is_redacted_but_image_data() -> None:
    body = capture_with_secrets()
    sent = sense_input(body).payload
    redacted, counts = redact_payload(sent)
    assert redacted["ocr"].endswith(f"\nOPENAI_API_KEY={A}")
    assert redacted["meta"]["windowTitle"] == f"password={PW} — Code"
    assert redacted["roi"] == {**body["roi"], "label": W}  # data kept, other strings not
    assert redacted["observation"]["facts"][-1] == f"card: {C}"
    assert redacted["observation"]["narrative"] == f"The user pastes {T} into a form"
    assert redacted["observation"]["concepts"] == ["auth", P]
    assert redacted["extra"] == {"nested": [{"note": f"Bearer {A}"}], "n": C}
    assert counts == {
        "api-key": 2,
        "password": 1,
        "aws-key": 1,
        "card": 2,
        "token": 1,
        "private": 1,
    }
    assert sent == body  # the client's object is not changed


def test_a_clean_payload_is_returned_as_it_is() -> None:
    for body in recorded():
        payload = sense_input(body).payload
        assert redact_payload(payload) == (payload, {})
        assert redact_payload(payload)[0] is payload


def test_the_redactor_counts_by_kind_across_threads() -> None:
    redactor = Redactor()
    assert redactor.counts() == dict.fromkeys(KINDS, 0)

    def work() -> None:
        for _ in range(200):
            redactor.texts([f"password=x {SK}", "normal"])
            redactor.payload({"ocr": VISA})

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert redactor.counts() == {
        **dict.fromkeys(KINDS, 0),
        "password": 800,
        "api-key": 800,
        "card": 800,
    }


def test_a_redactor_that_is_off_keeps_everything_and_counts_nothing() -> None:
    redactor = Redactor(enabled=False)
    texts = [f"password=hunter2 {SK}"]
    payload = {"ocr": VISA}
    assert redactor.texts(texts) is texts
    assert redactor.payload(payload) is payload
    assert redactor.counts() == dict.fromkeys(KINDS, 0)
    assert redactor.enabled is False


def test_clean_texts_come_back_as_the_same_object() -> None:
    texts = ("hello", "normal")
    assert Redactor().texts(texts) is texts


# -- what Unicode and line ends must not walk around ------------------------------------------


@pytest.mark.parametrize(
    ("what", "text", "redacted"), UNICODE_POSITIVES, ids=[p[0] for p in UNICODE_POSITIVES]
)
def test_unicode_and_splits_do_not_hide_a_secret(what: str, text: str, redacted: str) -> None:
    out, counts = redact(text)
    assert out == redacted, what
    assert sum(counts.values()) == redacted.count("[redacted:")
    assert redact(out) == (out, {}), what


@pytest.mark.parametrize(
    ("what", "text"), UNICODE_NEAR_MISSES, ids=[n[0] for n in UNICODE_NEAR_MISSES]
)
def test_unicode_near_misses_survive_unchanged(what: str, text: str) -> None:
    out, counts = redact(text)
    assert (out, counts) == (text, {}), what
    assert out is text


def test_the_replaced_span_covers_the_invisible_characters_inside_the_match_only() -> None:
    text = f"\u200b{SK[:10]}\u200b{SK[10:]}\u200b!"
    assert redact(text) == (f"\u200b{A}\u200b!", {"api-key": 1})


def test_a_secret_used_as_an_object_key_is_replaced_and_colliding_keys_keep_both_values() -> None:
    payload = {"type": "text", "ts": 1, "extra": {SK: 1, "ok": 2, GHP: {AWS: "x"}}}
    redacted, counts = redact_payload(payload)
    assert redacted["extra"] == {A: 1, "ok": 2, f"{A}#2": {W: "x"}}
    assert counts == {"api-key": 2, "aws-key": 1}
    assert redact_payload(redacted) == (redacted, {})


def test_a_card_sent_as_a_json_number_becomes_its_marker() -> None:
    payload = {
        "type": "text",
        "ts": 1,
        "card": 4111111111111111,
        "extra": {"n": 4111111111111111, "f": 5105105105105100.0, "list": [5105105105105100]},
    }
    redacted, counts = redact_payload(payload)
    assert redacted["card"] == C
    assert redacted["extra"] == {"n": C, "f": C, "list": [C]}
    assert counts == {"card": 4}


def test_numbers_that_are_no_card_or_must_stay_numbers_are_kept() -> None:
    payload = {
        "type": "text",
        "ts": 4111111111111111,  # validation needs a number here
        "meta": {"ssim": 4111111111111111},
        "extra": {"epoch": 1769901185123, "fails": 4111111111111112, "ok": True, "x": 0.5},
    }
    assert redact_payload(payload) == (payload, {})


def test_the_recorded_sessions_and_the_prompt_corpus_keep_every_string() -> None:
    """What screens and speech really hold (code, terminals, browsers, chat, Russian, Japanese
    and German beside English; a day of work) has no secret: nothing of it is redacted, with
    its line ends, no-break spaces and letters of other scripts."""
    bodies = [event.body for case in cases() for event in case.events]
    bodies += [event.body for event in load_session()]
    bodies += [event.body for event in load_session(ROOT / "tests/data/sessions/day.jsonl")]
    bodies += recorded()
    assert len(bodies) > 500
    assert any(not text.isascii() for body in bodies for text in _strings(body))
    for body in bodies:
        assert redact_payload(body) == (body, {}), body
        for text in _strings(body):
            assert redact(text) == (text, {}), text


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []
