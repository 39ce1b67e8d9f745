"""--redacted: no planted secret survives, look-alikes do, and only secrets change."""

from __future__ import annotations

import doctest
import json
import random
import re
import string
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import smllm
from smllm import journal
from smllm.base import secrets as redact

CORPUS = json.loads((Path(__file__).parent / "fixtures" / "secrets" / "corpus.json").read_text())

# Token values with dots (issue 23): recognised by their shape, wherever they are assigned.
_DISCORD = ["NTQ0ODAxODE1Nzc4MDQ1NjQ2Mw.kcN2WT.qyI4bC6dnk-1c3ThAeVwBUVKOk8w95uxwPzokm",
            "ODE4MTkwMjMzOTA1NTA3MzIz.JJQnVK.N6BHtnp-EQsmXv5eh1YcuCbCh4lScW_yejH7z6",
            "pv0SgXq1Ei29oAbCdEfGhIjKl.JDrcWg.Ry1oZx9QwErTyUiOpAsDfGhJkLzXcVbNm"]
_VAULT = {
    "vault_hvs": "hvs.CAESdw52k1J9wMHlCh-Wc60LO0SMJRuXf19GJlXBHsVo7pJ4aeHoF8f0kJzUslxYULkvfpxc",
    "vault_hvb": "hvb.CAESN6qTWNf_YSAuAO02hfO28u1UFOeL5wZV-c2x4y3i6aYWGhe1XSIvsi7pi28sNpcAzSN",
    "vault_hvr": "hvr.CAESHI1azjqwB_hsHaXf1fcrsbT1b-k6PKevANosuro2zvAiImqo3TiAWQmFsV26BuFQ",
}
_DOTTED = ["C0dk74qwVnDTXRvtfZB6.EYYgzIQyyPUb.lK4P8ebc27XvSjg2UQXPO29v",
           "8zO87SjAtiHrHI8MOZNK.NO8GzRVlMrzU.vUj0a5vYtJf4FEwT7dXAQW2f",
           "rlhbNNo5xB541pMf0OHS.qq87mnRlIjFU.uVXUAvxIoLB2VdVy5uLYVhed"]
DOTTED_SECRETS: list[dict[str, str]] = [
    *({"kind": "discord_bot_env", "secret": v, "text": f"DISCORD_TOKEN={v}"} for v in _DISCORD),
    {"kind": "discord_bot_bare", "secret": _DISCORD[0], "text": f"client.run {_DISCORD[0]}"},
    {"kind": "discord_bot_yaml", "secret": _DISCORD[1], "text": f"bot_token: {_DISCORD[1]}"},
    *({"kind": k, "secret": v, "text": f"VAULT_TOKEN={v}"} for k, v in _VAULT.items()),
    {"kind": "vault_bare", "secret": _VAULT["vault_hvs"],
     "text": f"vault login {_VAULT['vault_hvs']}"},
    {"kind": "dotted_session_token", "secret": _DOTTED[0], "text": f"SESSION_TOKEN={_DOTTED[0]}"},
    {"kind": "dotted_api_secret", "secret": _DOTTED[1], "text": f"export APP_SECRET={_DOTTED[1]}"},
    {"kind": "dotted_auth_token", "secret": _DOTTED[2], "text": f"auth_token = {_DOTTED[2]}"},
]
#: assignments whose value only looks like a dotted token: code, versions, placeholders
DOTTED_LOOK_ALIKES: list[dict[str, str]] = [
    {"kind": "code_ref_dotted", "text": "DB_PASSWORD=config.db.host"},
    {"kind": "code_ref_call", "text": 'token = os.environ.get("GITHUB_TOKEN")'},
    {"kind": "code_ref_attr", "text": "password=request.form.password"},
    {"kind": "code_ref_settings", "text": "secret_key=settings.SECRET_KEY_V2"},
    {"kind": "code_ref_camel", "text": "api_key=cfg.getApiKeyV2"},
    {"kind": "code_ref_module", "text": "AUTH_TOKEN=auth.tokens.default_token"},
    {"kind": "version_secret", "text": "SECRET_KEY=1.2.3"},
    {"kind": "version_token", "text": "TOKEN_VERSION=v2.0.1-rc1"},
    {"kind": "placeholder_changeme", "text": "API_KEY=changeme"},
    {"kind": "placeholder_your", "text": "DISCORD_TOKEN=your-token-here"},
    {"kind": "placeholder_env", "text": "VAULT_TOKEN=$VAULT_TOKEN"},
    {"kind": "sha1_commit", "text": "commit 3f786850e387550fdab836ed7e6dc881de23001b"},
    {"kind": "uuid_v4", "text": "request id 9b2f7c1e-4a6d-4f0b-8e3c-2d1a5b6c7e8f"},
    {"kind": "dotted_module_path", "text": "python -m smllm.audit.export_helpers.longer_name"},
]
HEX = "0123456789abcdef"


def _generated_secrets() -> list[dict[str, str]]:
    """Two secrets of each further kind, in the shape their issuer gives them (a fixed
    seed: the same corpus every run): the rules' kinds the corpus above lacks, and
    multi-line keys (OpenSSH, EC, PGP) whose body lines must go too."""
    rnd = random.Random(2323)
    an = string.ascii_letters + string.digits
    b64 = an + "+/"

    def t(n: int, al: str = an) -> str:
        return "".join(rnd.choice(al) for _ in range(n))

    def key(label: str, first: str, lines: int) -> str:
        body = "\n".join([first] + [t(64, b64) for _ in range(lines)])
        return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"

    shapes: list[tuple[str, Callable[[], str], str]] = [
        ("azure_ad_client", lambda: t(3) + "8Q~" + t(34),
         "az login --service-principal -u app -p {} --tenant t"),
        ("cloudflare_origin_ca", lambda: f"v1.0-{t(24, HEX)}-{t(146, HEX)}", "origin ca key {}"),
        ("duffel", lambda: "duffel_test_" + t(43, an + "_-"), "Duffel(access_token='{}')"),
        ("flutterwave", lambda: f"FLWSECK_TEST-{t(32, 'abcdefgh0123456789')}-X", "FLW_KEY {}"),
        ("frameio", lambda: "fio-u-" + t(64, an + "_-"), "frameio token {}"),
        ("harness", lambda: f"pat.{t(22)}.{t(24)}.{t(20)}", "harness login --api-key {}"),
        ("scalingo", lambda: "tk-us-" + t(48, an + "_-"), "scalingo login --api-token {}"),
        ("telegram_bot_url", lambda: f"{t(8, string.digits)}:AA{t(33)}",
         "curl https://api.telegram.org/bot{}/getMe"),
        ("session_id", lambda: t(32), "curl -v https://shop.example.com/cart JSESSIONID={}"),
        ("xml_secret", lambda: t(20, an + "!#%"), "<client_secret>{}</client_secret>"),
        ("kube_client_key", lambda: t(60, b64), "    client-key-data: {}"),
        ("docker_auth_json", lambda: t(40, b64), '{{"auths":{{"ghcr.io":{{"auth":"{}"}}}}}}'),
        ("htpasswd_cli", lambda: t(16), "htpasswd -b -c .htpasswd admin {}"),
        ("keystore_pass", lambda: t(18), "keytool -list -keystore app.jks -storepass {}"),
        ("connection_string_pwd", lambda: t(24), "Server=db;Database=app;User Id=sa;Pwd={};"),
        ("grafana_service_account", lambda: f"glsa_{t(32)}_{t(8, HEX)}", "GF_TOKEN {}"),
        ("openssh_private_key", lambda: key("OPENSSH PRIVATE KEY", "b3BlbnNzaC1rZXktdjEAAAAA"
                                            "BG5vbmUAAAAEbm9uZQAAAAAAAAABAAABlwAAAAdzc2gtcn", 5),
         "{}"),
        ("mongodb_srv_url", lambda: t(16), "MONGO_URL=mongodb+srv://app:{}@c0.ab1cd.mongodb.net/db"),
        ("redis_url_password", lambda: t(16), "redis-cli -u redis://:{}@cache:6379/0 ping"),
        ("amqp_url_password", lambda: t(16), "AMQP_URL=amqp://svc:{}@mq:5672/"),
        ("ec_private_key", lambda: key("EC PRIVATE KEY", "MHcCAQEEI" + t(55, b64), 3), "{}"),
        ("pgp_private_key", lambda: key("PGP PRIVATE KEY BLOCK", "\nlQOYBF" + t(58, b64), 4),
         "{}"),
    ]
    out = []
    for kind, make, context in shapes:
        for _ in range(2):
            secret = make()
            out.append({"kind": kind, "secret": secret, "text": context.format(secret)})
    return out


#: further everyday texts near a secret's shape or name: digests, ids, versions, reads
MORE_LOOK_ALIKES: list[dict[str, str]] = [
    {"kind": "git_format", "text": "git log --format=%H -n 1"},
    {"kind": "image_digest", "text": "docker pull python@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
    {"kind": "etag", "text": "ETag: \"33a64df551425fcc55e4d42a148795d9f25f89d4\""},
    {"kind": "trace_id", "text": "trace_id=4bf92f3577b34da6a3ce929d0e0e4736"},
    {"kind": "password_timestamp", "text": "password_reset_sent_at: 2026-01-01T00:00:00Z"},
    {"kind": "token_count", "text": "token_count: 1234"},
    {"kind": "aws_region", "text": "AWS_REGION=us-east-1"},
    {"kind": "node_options", "text": "export NODE_OPTIONS=--max-old-space-size=4096"},
    {"kind": "token_url", "text": "config.auth.token_url = https://auth.example.com/oauth/token"},
    {"kind": "yaml_version", "text": "version: 1.2.3"},
    {"kind": "pip_pin", "text": "python==3.12.1"},
    {"kind": "uuid_field", "text": "uuid: 123e4567-e89b-12d3-a456-426614174000"},
    {"kind": "source_map", "text": "//# sourceMappingURL=app.js.map"},
    {"kind": "csp_hash", "text": "Content-Security-Policy: script-src 'sha256-B2yPHKaXnvFWtRChIbabYmUBFZdVfKKXHbWtWidDVF8='"},
    {"kind": "npm_cache", "text": "npm_config_cache=/home/u/.npm"},
    {"kind": "git_scp_url", "text": "git clone git@github.com:org/repo.git"},
    {"kind": "search_query", "text": "https://example.com/search?q=token+rotation&page=2"},
    {"kind": "secret_prose", "text": "SECRET_KEY_BASE is read from credentials.yml.enc"},
    {"kind": "secret_file_read", "text": "password=$(cat /run/secrets/db_password)"},
    {"kind": "vault_prose", "text": "the hvs. prefix marks Vault service tokens"},
    {"kind": "image_tag", "text": "image: ghcr.io/org/app:1.4.2"},
    {"kind": "env_get_vault", "text": "os.environ.get('VAULT_TOKEN')"},
    {"kind": "config_discord", "text": "DISCORD_TOKEN = config.discord.bot_token"},
    {"kind": "getenv_call", "text": "client.run(os.getenv('DISCORD_TOKEN'))"},
    {"kind": "process_env", "text": "const token = process.env.API_TOKEN;"},
    {"kind": "token_ttl", "text": "TOKEN_TTL=3600"},
    {"kind": "k8s_secret_ref", "text": "secretKeyRef: {name: db, key: password}"},
    {"kind": "dotted_version_token", "text": "TOKEN_SCHEMA=2.1.0"},
]
SECRETS: list[dict[str, str]] = CORPUS["secrets"] + DOTTED_SECRETS + _generated_secrets()
SURVIVORS: list[dict[str, str]] = CORPUS["survivors"] + DOTTED_LOOK_ALIKES + MORE_LOOK_ALIKES
PLACES = ("prompt", "tool input", "tool output", "nested json", "json key", "derived reason")


def _quoted(entry: dict[str, str]) -> str:
    """What the gate's reason quotes of a secret: its first line, cut, without context."""
    first = entry["secret"].splitlines()[-2 if "-----BEGIN" in entry["secret"] else 0]
    return first[:40]


def test_corpus_is_large_and_varied(capsys: pytest.CaptureFixture[str]) -> None:
    """The corpus holds at least 200 secrets of 130 kinds, in every family of rules, and at
    least 80 look-alikes (issue 23's floor); the counts are printed."""
    kinds = {s["kind"] for s in SECRETS}
    families = {r.family for r in redact._RULES for s in SECRETS
                if r.pattern.search(s["text"]) and r.kind != "secret"}
    with capsys.disabled():
        print(f"\nredaction corpus: {len(SECRETS)} secrets of {len(kinds)} kinds, "
              f"{len(SURVIVORS)} look-alikes, {len(PLACES)} places")
    expected = (True, True, True, set(redact.FAMILIES) - {"assignments"})
    assert expected == (len(SECRETS) >= 200, len(kinds) >= 130, len(SURVIVORS) >= 80,
                        families - {"assignments"})


def _plant(entry: dict[str, str], place: str, n: int) -> journal.Entry:
    """One journal entry carrying ``entry``'s secret in ``place``."""
    value: Any = {entry["key"]: entry["text"]} if "key" in entry else entry["text"]
    text = entry["text"] if "key" not in entry else json.dumps(value)
    if place == "prompt":
        return journal.event("proposed", turn=n, prompt=f"please use this: {text}")
    if place == "tool input":
        inp = {"command": f"echo start && {text}"} if "key" not in entry else value
        return journal.event("side_effect_intent", operation="tool:bash", tool_name="Bash",
                             tool_use_id=f"t{n}", idempotency_key=f"k{n}",
                             policy_decision="allow:policy", input=inp)
    if place == "derived reason":  # the gate quotes a piece of it, out of its context
        return journal.event("side_effect_intent", operation="tool:bash", tool_name="Bash",
                             tool_use_id=f"t{n}", idempotency_key=f"k{n}",
                             policy_decision="ask", reason=f"runs {_quoted(entry)}…",
                             input={"command": f"echo start && {text}"})
    if place == "json key":  # the secret, in its context, used as a key
        return journal.fact("tool_batch.effect.terminal", {
            "tool_use_id": f"t{n}", "outcome": "succeeded",
            "output": {"index": {text: {"seen": n}, "other": "kept"}}})
    if place == "tool output":
        return journal.fact("tool_batch.effect.terminal", {
            "tool_use_id": f"t{n}", "outcome": "succeeded",
            "output": {"stdout": f"line one\n{text}\nline three", "stderr": ""}})
    return journal.fact("tool_batch.effect.terminal", {
        "tool_use_id": f"t{n}", "outcome": "succeeded",
        "output": {"config": {"deploy": [{"env": value, "note": "from the vault"}]}}})


def _session(tmp_path: Path) -> Path:
    log = tmp_path / "sid-secrets" / "session.jsonl"
    log.parent.mkdir()
    entries = [journal.fact("session.start", {"session_id": "sid-secrets"})]
    n = 0
    for entry in SECRETS:
        for place in PLACES:
            n += 1
            entries.append(_plant(entry, place, n))
    for s in SURVIVORS:
        entries.append(journal.fact("tool_batch.effect.terminal", {
            "tool_use_id": "s", "outcome": "succeeded",
            "output": {"stdout": s["text"], "digest": s["text"]}}))
    journal.append(log, entries)
    return log


@pytest.fixture
def exports(tmp_path: Path) -> tuple[bytes, bytes]:
    log = _session(tmp_path)
    raw, red = tmp_path / "raw.json", tmp_path / "red.json"
    for out, flags in ((raw, ()), (red, ("--redacted",))):
        proc = smllm("export", "--journal", str(log), "--out", str(out), *flags)
        expected = 0
        assert expected == proc.returncode, proc.stderr
    return raw.read_bytes(), red.read_bytes()


def _forms(secret: str) -> set[str]:
    """The secret as it can appear in a JSON document (raw, escaped, line by line)."""
    escaped = json.dumps(secret)[1:-1]
    forms = {secret, escaped}
    forms.update(ln for ln in secret.splitlines() if len(ln) >= 16 and "-----" not in ln)
    return forms


def test_every_secret_is_planted_in_the_raw_export(exports: tuple[bytes, bytes]) -> None:
    """Sanity: the raw export does contain every secret (so the next test is meaningful)."""
    raw = exports[0].decode()
    expected = []
    assert expected == [s["kind"] for s in SECRETS if not any(f in raw for f in _forms(s["secret"]))]


def test_no_secret_survives_redaction(exports: tuple[bytes, bytes]) -> None:
    """No planted secret, in any place, appears in the redacted export."""
    red = exports[1].decode()
    survived = [(s["kind"], s["text"][:60]) for s in SECRETS
                if any(f in red for f in _forms(s["secret"]))]
    expected = []
    assert expected == survived


def test_no_quoted_piece_survives_redaction(exports: tuple[bytes, bytes]) -> None:
    """What a derived field quotes of a secret (its first line cut at 40 characters, without
    the context a pattern needs) is masked by value: no 8-character run of it survives."""
    events = exports[1].decode().split('"events": [', 1)[1]  # the header holds a commit id
    red = re.sub(r"\[REDACTED:[a-z_]+\]", "[]", events)  # kinds are not secrets
    survived = [(s["kind"], piece) for s in SECRETS for piece in _pieces(_quoted(s))
                if json.dumps(piece)[1:-1] in red]
    expected = []
    assert expected == survived


def _pieces(quoted: str) -> set[str]:
    """The 8-character runs of the secret-bearing words of ``quoted``: a URL's scheme, host
    and path words, and plain words (``services``), are everyone's and stay."""
    split = r"[^A-Za-z0-9_\-]+" if "://" in quoted else r"\s+"
    words = [w for w in re.split(split, quoted)
             if not (w.isalpha() and (w.islower() or w.isupper()))]
    return {w[i:i + 8] for w in words for i in range(len(w) - 7)}


def test_look_alikes_survive_redaction(exports: tuple[bytes, bytes]) -> None:
    """Hashes, UUIDs, digests, base64 content, public keys, certificates and values that
    only refer to a secret (environment reads, placeholders) are kept verbatim."""
    red = exports[1].decode()
    lost = [s["kind"] for s in SURVIVORS if json.dumps(s["text"])[1:-1] not in red]
    expected = []
    assert expected == lost


def _diff(a: Any, b: Any, path: str, out: list[tuple[str, str, str]]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        assert len(a) == len(b), path
        for (ka, va), (kb, vb) in zip(a.items(), b.items(), strict=True):
            if ka != kb:
                out.append((f"{path}.<key>", ka, kb))
            _diff(va, vb, f"{path}.{ka}", out)
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _diff(x, y, f"{path}[{i}]", out)
    elif a != b:
        out.append((path, str(a), str(b)))


def test_raw_and_redacted_differ_only_where_redacted(exports: tuple[bytes, bytes]) -> None:
    """Same structure; every changed value or key is a string that now holds a marker."""
    raw, red = json.loads(exports[0]), json.loads(exports[1])
    changes: list[tuple[str, str, str]] = []
    _diff(raw, red, "$", changes)
    bad = [c for c in changes if c[0] != "$.redaction" and "[REDACTED:" not in c[2]]
    header = [c for c in changes if not c[0].startswith("$.events")]
    expected = ([], [("$.redaction", "raw", "redacted")])
    assert expected == (bad, header)
    assert len(changes) >= len(SECRETS) * len(PLACES)


def test_redaction_only_removes() -> None:
    """Outside the markers, the redacted text is a subsequence of the original."""
    for s in SECRETS:
        out = redact.redact_text(s["text"])
        rest = out
        for marker in {m for m in _markers(out)}:
            rest = rest.replace(marker, "")
        it = iter(s["text"])
        assert all(ch in it for ch in rest), (s["kind"], out)


def _markers(text: str) -> list[str]:

    return re.findall(r"\[REDACTED:[a-z_]+\]", text)


REDACT_CASES = [
    ("Authorization: Bearer abcdefghijkl", "Authorization: [REDACTED:authorization]"),
    ("export OPENAI_API_KEY=$OPENAI_API_KEY", "export OPENAI_API_KEY=$OPENAI_API_KEY"),
    ("password: ", "password: "),
    ("max_tokens=4096 and input_tokens: 12", "max_tokens=4096 and input_tokens: 12"),
    ("https://user:hunter22@example.com/x", "https://user:[REDACTED:url_password]@example.com/x"),
    ("see 550e8400-e29b-41d4-a716-446655440000", "see 550e8400-e29b-41d4-a716-446655440000"),
    ("API_KEY = os.environ['API_KEY']", "API_KEY = os.environ['API_KEY']"),
    ("mysql -u root -phunter2x shop", "mysql -u root -p[REDACTED:cli_password] shop"),
    ("mysql -u root -p shop", "mysql -u root -p shop"),
    ("curl -u bot:s3cretpass https://x", "curl -u bot:[REDACTED:cli_password] https://x"),
    ("sshpass -p 'pa ss' ssh h", "sshpass -p [REDACTED:cli_password] ssh h"),
    ("docker login --password-stdin -u bot", "docker login --password-stdin -u bot"),
    ("db.internal:5432:app:app:Zq8x!p2", "db.internal:5432:app:app:[REDACTED:pgpass]"),
    ("password: ********", "password: ********"),
]


@pytest.mark.parametrize(("text", "expected"), REDACT_CASES, ids=[c[0][:30] for c in REDACT_CASES])
def test_redact_text_cases(text: str, expected: str) -> None:
    """Known inputs redact (or not) exactly as listed; references and counts are kept."""
    assert expected == redact.redact_text(text)


@pytest.mark.parametrize("entry", DOTTED_SECRETS, ids=[e["kind"] for e in DOTTED_SECRETS])
def test_dotted_tokens_are_redacted(entry: dict[str, str]) -> None:
    """A token with dots (Discord bot, Vault hvs./hvb./hvr., any dotted generated value) is
    recognised by its shape, assigned or bare; the text around it is kept."""
    out = redact.redact_text(entry["text"])
    expected = (False, True)
    assert expected == (entry["secret"] in out, "[REDACTED:" in out), out


@pytest.mark.parametrize("entry", DOTTED_LOOK_ALIKES, ids=[e["kind"] for e in DOTTED_LOOK_ALIKES])
def test_dotted_look_alikes_are_kept(entry: dict[str, str]) -> None:
    """Code references, version strings, placeholders, hashes and UUIDs stay as they are."""
    assert entry["text"] == redact.redact_text(entry["text"])


def test_redaction_is_deterministic() -> None:
    """The same input always gives the same output."""
    texts = [s["text"] for s in SECRETS]
    assert [redact.redact_text(t) for t in texts] == [redact.redact_text(t) for t in texts]


def test_module_examples() -> None:
    """The examples in smllm.base.secrets's docstring hold."""
    result = doctest.testmod(redact)
    expected = (0, True)
    assert expected == (result.failed, result.attempted > 0)


NEEDLE_FRAGMENTS = ["sk-ant-api03-", "sk-", "AKIA", "ghp_", "glpat-", "xoxb-", "AIza", "ya29.",
                    "sk_live_", "npm_", "hf_", "SG.", "dop_v1_", "eyJ", "Authorization: ",
                    "Bearer ", "Cookie: ", "mysql -p", "--password ", "curl -u a:", "://u:",
                    "AccountKey=", "_authToken=", "$apr1$", "x" * 8, "A" * 20, "0123456789",
                    " ", ".", "-", "_", ":", "=", "/", "abcdefghijklmnopqrstuvwxyz",
                    "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "hooks.slack.com/services/", "<password>",
                    "</password>", "machine h password ", "key-", "pplx-", "hvs."]


@settings(max_examples=800)
@given(st.lists(st.sampled_from(NEEDLE_FRAGMENTS), max_size=8).map("".join))
def test_needles_never_hide_a_match(text: str) -> None:
    """A rule skips a text only when none of its needles is in it: the skip changes nothing."""
    hidden = [r.kind for r in redact._RULES if r.needles and r.pattern.search(text)
              and not any(n in text.lower() for n in r.needles)]
    assert [] == hidden


def test_needles_on_the_corpus() -> None:
    """On every corpus text, a rule that matches has one of its needles in the text."""
    texts = [s["text"] for s in SECRETS] + [s["text"] for s in SURVIVORS]
    hidden = [(r.kind, t[:40]) for t in texts for r in redact._RULES
              if r.needles and r.pattern.search(t) and not any(n in t.lower() for n in r.needles)]
    assert [] == hidden


def test_find_names_the_kinds() -> None:
    """find() lists what a text carries (used to stop secrets leaving in web requests)."""
    text = "https://api.example.com/v1?key=AIzaSyA1234567890abcdefghijklmnopqrstuv"
    assert ["url_secret", "google_api_key"] == redact.find(text)
    assert [] == redact.find("https://docs.python.org/3/library/re.html?highlight=sub")


def test_find_compiles_only_the_rules_a_text_may_match() -> None:
    """find() (the gate runs it on every web request) skips, uncompiled, each rule none of
    whose needles the text holds, as redact_text() does: compiling all costs ~10 ms."""
    url = "https://docs.python.org/3/library/re.html?highlight=sub"
    code = ("import json, sys; from smllm.base import secrets as redact; redact.find(sys.argv[1]); "
            "print(json.dumps(sorted(r.kind for r in redact._RULES if r._rx is not None)))")
    proc = subprocess.run([sys.executable, "-c", code, url], capture_output=True, text=True,
                          check=True)
    expected = sorted(r.kind for r in redact._RULES
                      if not r.needles or any(n in url.lower() for n in r.needles))
    assert expected == json.loads(proc.stdout)


def test_redacted_twice_is_byte_identical_whatever_the_caches_hold(
        tmp_path: Path, exports: tuple[bytes, bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    """The corpus session exported redacted in a fresh process (the fixture) and twice more
    in this one, once with the caches warm and once with them tiny (the memo full at once,
    the recent texts cleared every few strings), is the same document byte for byte: the
    caches only remember, never decide."""
    from smllm.audit import export

    log = tmp_path / "sid-secrets" / "session.jsonl"
    outs = []
    for memo, recent in ((redact._MEMO_SIZE, redact._RECENT_SIZE), (8, 4)):
        monkeypatch.setattr(redact, "_MEMO_SIZE", memo)
        monkeypatch.setattr(redact, "_RECENT_SIZE", recent)
        out = tmp_path / f"again-{memo}.json"
        export.export(log, out, redacted=True)
        outs.append(out.read_bytes())
    assert [exports[1], exports[1]] == outs


@pytest.mark.parametrize("ascii_form", ['password = "Sup3rS3cretValue9x!"',
                                        'secret_key = "Sup3rS3cretValue9x!"',
                                        "API_KEY=Sup3rS3cretValue9x"])
def test_letters_a_case_insensitive_pattern_takes_for_ascii_do_not_hide_a_secret(
        ascii_form: str) -> None:
    """A case-insensitive pattern matches U+017F (long s) as s and U+0131 (dotless i) as
    i: the cheap search for a rule's needles must too, or ``password = ...`` spelt with a
    long s would skip the rule that redacts it."""
    secret = ascii_form.split("=", 1)[1].strip().strip('"')
    assert secret not in redact.redact_text(ascii_form)
    for odd in (ascii_form.replace("s", "\u017f", 2), ascii_form.replace("i", "\u0131", 1),
                ascii_form.replace("I", "\u0130", 1)):
        if odd != ascii_form:
            assert secret not in redact.redact_text(odd), odd
