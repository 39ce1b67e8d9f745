"""The secret patterns, by family: redaction for share-safe exports (``smllm export
--redacted``, the viewer), and the gate's check of what a web request carries.

Every payload string goes through :func:`redact_text`; in structured payloads a string
whose *key* names a secret (``password``, ``api_key``, ``GITHUB_TOKEN``…) is replaced
whole, and a key that is itself a secret is replaced too (:func:`redact_value`). The
families, applied in this order (gitleaks' default rule set is the anchor for the
provider tokens):

* ``private_keys``: PEM/OpenSSH/PGP private key blocks, age secret keys;
* ``connections``: passwords in URLs, ``AccountKey=``/``SharedAccessKey=`` connection
  strings;
* ``headers``: ``Authorization``, ``Bearer``, API-key headers, cookies and session ids;
* ``cli``: passwords given on command lines (``mysql -pX``, ``curl -u u:p``,
  ``sshpass -p``, ``docker login -p``, ``--password X``, ``openssl -pass pass:X``, …);
* ``config_files``: ``.netrc``, ``.pgpass``, ``.npmrc``, docker ``auth``, htpasswd
  hashes, XML and NuGet passwords;
* ``webhooks``: Slack, Discord, Teams and Telegram hook URLs, secret query parameters;
* ``providers``: tokens recognised by their prefix (Anthropic, OpenAI, AWS, GitHub,
  GitLab, Slack, Google, Stripe, npm, PyPI, Hugging Face, … and chat-bot tokens);
* ``jwt``: JSON Web Tokens;
* ``assignments``: a secret-named key given a literal value (``DB_PASSWORD=…``,
  ``"api_key": "…"``, ``password: …``).

Look-alikes are kept: hashes, UUIDs, digests, integrity strings, image data, public
keys and certificates, and values that read a secret rather than hold one
(``os.environ['API_KEY']``, ``${{ secrets.TOKEN }}``, ``$TOKEN``, placeholders).
Redaction only removes: it never adds content beyond the marker, and it is a pure
function of its input, so two redacted exports of one log are byte-identical.

>>> redact_text("curl -H 'Authorization: Bearer abc.def.ghi123456' https://x")
"curl -H 'Authorization: [REDACTED:authorization]' https://x"
>>> redact_text("postgres://app:s3cr3t-pw@db:5432/main")
'postgres://app:[REDACTED:url_password]@db:5432/main'
>>> redact_text("commit 3f786850e387550fdab836ed7e6dc881de23001b")
'commit 3f786850e387550fdab836ed7e6dc881de23001b'
>>> redact_text("API_KEY = os.environ['API_KEY']")
"API_KEY = os.environ['API_KEY']"
"""

from __future__ import annotations

import re
from operator import add

TYPE_CHECKING = False  # typing costs milliseconds; the gate imports this for WebFetch
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

MARK = "[REDACTED:{}]"

# Keys whose string value is a secret wherever they appear (JSON keys, env names).
_SECRET_NAMES = (
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "token",
    "api[_-]?key",
    "apikey",
    "access[_-]?key",
    "private[_-]?key",
    "secret[_-]?key",
    "client[_-]?secret",
    "credentials?",
    "auth[_-]?key",
    "session[_-]?key",
    "signing[_-]?key",
    "encryption[_-]?key",
    "dsn",
    "authorization",
    "account[_-]?key",
    "master[_-]?key",
    "webhook[_-]?url",
    "connection[_-]?string",
    "conn[_-]?str",
    "cookie",
)
_SECRET_WORDS = "|".join(_SECRET_NAMES)
SECRET_KEY_RE = re.compile(
    rf"(?i)(?:^|[_.\-])(?:{_SECRET_WORDS})$|^(?:{_SECRET_WORDS}|auth|_auth|pass)$"
)

if TYPE_CHECKING:
    _Sub = Callable[[re.Match[str]], str]


class Rule:
    """One pattern of a family: what it finds (``kind``), and what replaces a match.

    The pattern is compiled on first use: a text holding none of the rule's needles
    never needs it (compiling every rule costs ~12 ms, more than a gate decision).
    """

    __slots__ = ("_rx", "family", "keep", "kind", "needles", "source", "sub")

    def __init__(
        self,
        family: str,
        kind: str,
        pattern: str,
        keep: tuple[int, ...] = (),
        needles: tuple[str, ...] = (),
    ) -> None:
        self.family = family
        self.kind = kind
        self.source = pattern
        self._rx: re.Pattern[str] | None = None
        self.keep = keep
        self.sub = _keeping(kind, keep) if keep else _whole(kind)
        #: lowercase substrings one of which every match contains (a text without any
        #: is not searched)
        self.needles = needles

    @property
    def pattern(self) -> re.Pattern[str]:
        if self._rx is None:
            self._rx = re.compile(self.source)
        return self._rx


def _whole(kind: str) -> _Sub:
    mark = MARK.format(kind)
    return lambda m: mark


def _keeping(kind: str, keep: tuple[int, ...]) -> _Sub:
    """Keep the groups ``keep`` (in order), the marker where the other groups were."""
    mark = MARK.format(kind)

    def sub(m: re.Match[str]) -> str:
        parts: list[str] = []
        for i in range(1, (m.re.groups or 0) + 1):
            if i in keep:
                parts.append(m.group(i) or "")
            elif (not parts or parts[-1] != mark) and m.group(i) is not None:
                parts.append(mark)
        return "".join(parts)

    return sub


_I = re.IGNORECASE
_V = r"(\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'&|;]+)"  # a command-line value: quoted or bare

PRIVATE_KEYS = [
    Rule(
        "private_keys",
        "pem",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
        r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        needles=("private key",),
    ),
    Rule(
        "private_keys",
        "putty",
        r"PuTTY-User-Key-File-\d: [\s\S]*?Private-MAC: [0-9a-f]+",
        needles=("putty-user-key",),
    ),
    Rule(
        "private_keys",
        "age",
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        needles=("age-secret-key-1",),
    ),
]
CONNECTIONS = [
    Rule(
        "connections",
        "url_password",
        r"(\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@\"']*:)([^\s@/\"']+)(@)",
        (1, 3),
        needles=("://",),
    ),
    Rule(
        "connections",
        "connection_string",
        r"(?i)(\b(?:AccountKey|SharedAccessKey|SharedSecretValue|SharedAccessSignature|"
        r"SecretKey|User\s?Password|Pwd)=)([^;\"'\s]+)",
        (1,),
        needles=(
            "accountkey=",
            "sharedaccesskey=",
            "sharedsecretvalue=",
            "sharedaccesssignature=",
            "secretkey=",
            "userpassword=",
            "user password=",
            "pwd=",
        ),
    ),
]
HEADERS = [
    Rule(
        "headers",
        "authorization",
        r"(?i)(\b(?:proxy-)?authorization\b[\"']?\s*[:=]\s*[\"']?)"
        r"((?:bearer|basic|token|digest|bot|apikey|negotiate|sso-key)\s+)?([^\s\"',;]{4,})",
        (1,),
        needles=("authorization",),
    ),
    Rule(
        "headers",
        "bearer",
        r"(?i)(\bbearer\s+)([A-Za-z0-9._~+/=\-]{8,})",
        (1,),
        needles=("bearer",),
    ),
    Rule(
        "headers",
        "api_key_header",
        r"(?i)(\b(?:x-api-key|x-auth-token|x-access-token|private-token|job-token|"
        r"x-goog-api-key|api-key|x-vault-token|x-rundeck-auth-token|x-figma-token|"
        r"ocp-apim-subscription-key|x-apikey|x-csrf-token|x-xsrf-token)\b[\"']?\s*[:=]\s*"
        r"[\"']?)([^\s\"',;]{8,})",
        (1,),
        needles=("key", "token"),
    ),
    Rule(
        "headers",
        "cookie",
        r"(?im)(\b(?:set-)?cookie[\"']?\s*:\s*[\"']?)([^\r\n\"']+)",
        (1,),
        needles=("cookie",),
    ),
    Rule(
        "headers",
        "cookie",
        r"(\s(?:-b|--cookie)\s+[\"']?)([\w.-]+=[^\s\"';]{6,})",
        (1,),
        needles=("-b", "--cookie"),
    ),
    Rule(
        "headers",
        "session_id",
        r"(?i)(\b(?:PHPSESSID|JSESSIONID|ASP\.NET_SessionId|connect\.sid|_gitlab_session|"
        r"sessionid|laravel_session|_session_id|sid)=)([^;\s&\"',]{8,})",
        (1,),
        needles=("sessid", "session", "sid="),
    ),
]
CLI = [
    Rule(
        "cli",
        "cli_password",
        r"(\b(?:mysql|mysqldump|mariadb|mariadb-dump|mysqladmin|mysqlimport|mysqlshow|"
        r"mysqlcheck)\b[^\n|;&]*?\s-p)(\"[^\"]+\"|'[^']+'|[^\s\"'-][^\s\"']*)",
        (1,),
        needles=("mysql", "mariadb"),
    ),
    Rule(
        "cli",
        "cli_password",
        r"(?i)(--(?:[a-z]+-)*(?:password|passwd|passphrase|pass|secret|token|api-key|"
        r"apikey|access-key|secret-key|auth-token|private-key|client-secret|"
        r"storepass|keypass)(?:=|\s+))" + _V,
        (1,),
        needles=("--",),
    ),
    Rule(
        "cli",
        "cli_password",
        r"(\b(?:curl|wget|http|https|xh|httpie)\b[^\n]*?\s(?:-u|--user|--proxy-user|-U)"
        r"(?:=|\s*)[\"']?[^\s:\"'@]+:)([^\s\"'@]+)",
        (1,),
        needles=("curl", "wget", "http", "xh"),
    ),
    Rule("cli", "cli_password", r"(\bsshpass\b[^\n]*?\s-p\s*)" + _V, (1,), needles=("sshpass",)),
    Rule(
        "cli",
        "cli_password",
        r"(\b(?:docker|podman|helm|buildah|skopeo|nerdctl|oras)\s+(?:registry\s+)?login\b"
        r"[^\n]*?\s-p\s*)" + _V,
        (1,),
        needles=("login",),
    ),
    Rule(
        "cli",
        "cli_password",
        r"(\bredis-cli\b[^\n]*?\s(?:-a|--pass)\s*)" + _V,
        (1,),
        needles=("redis-cli",),
    ),
    Rule("cli", "cli_password", r"(-pass(?:in|out)?\s+(?:pass):)(\S+)", (1,), needles=("-pass",)),
    Rule(
        "cli",
        "cli_password",
        r"(-(?:src|dest)?(?:store|key)pass\s+)(\S+)",
        (1,),
        needles=("pass",),
    ),
    Rule(
        "cli",
        "cli_password",
        r"(\b(?:zip|unzip|7z|7za|7zz|rar|unrar)\b[^\n]*?\s-[pP](?:\s+|(?=[^\s-])))" + _V,
        (1,),
        needles=("zip", "7z", "rar"),
    ),
    Rule("cli", "cli_password", r"(\bldap\w*\b[^\n]*?\s-w\s+)" + _V, (1,), needles=("ldap",)),
    Rule(
        "cli",
        "cli_password",
        r"(\b(?:sqlcmd|bcp|osql|isql|mongo|mongosh|mongodump|mongorestore)\b[^\n]*?\s-[Pp]"
        r"\s+)" + _V,
        (1,),
        needles=("sqlcmd", "bcp", "osql", "isql", "mongo"),
    ),
    Rule("cli", "cli_password", r"(\s-U\s+[^\s%]+%)(\S+)", (1,), needles=("%",)),
    Rule(
        "cli",
        "cli_password",
        r"(\bhtpasswd\b[^\n]*?\s-\w*b\w*(?:\s+-\w+)*\s+\S+\s+\S+\s+)(\S+)",
        (1,),
        needles=("htpasswd",),
    ),
    Rule(
        "cli", "cli_password", r"(\bnet\s+user\s+\S+\s+)(\S+)(\s+/add)", (1, 3), needles=("net",)
    ),
]
CONFIG_FILES = [
    Rule(
        "config_files",
        "netrc",
        r"(?i)(\b(?:login\s+\S+|machine\s+\S+)\s+password\s+)(\S+)",
        (1,),
        needles=("password",),
    ),
    Rule(
        "config_files",
        "pgpass",
        r"(?<![\w.:/-])([A-Za-z0-9_.\-*]+:(?:\d+|\*):[^:\s/]+:[^:\s/]+:)(?!/)(\S+)",
        (1,),
        needles=(":",),
    ),
    Rule(
        "config_files",
        "npmrc",
        r"((?:^|[\s/:])_(?:auth|authToken|password)\s*=\s*)(\S+)",
        (1,),
        needles=("_auth", "_password"),
    ),
    Rule(
        "config_files",
        "docker_auth",
        r"(\"auth\"\s*:\s*\")([A-Za-z0-9+/=]{8,})(\")",
        (1, 3),
        needles=('"auth"',),
    ),
    Rule(
        "config_files",
        "htpasswd",
        r"(?<![\w.@-])([\w.@-]+:)(\$(?:apr1|2[aby]|1|5|6)\$[^\s\"']+|\{SHA\}[A-Za-z0-9+/=]+)",
        (1,),
        needles=("$apr1$", "$2a$", "$2b$", "$2y$", "$1$", "$5$", "$6$", "{sha}"),
    ),
    Rule(
        "config_files",
        "nuget_password",
        r"(?i)(<add\s+key=\"(?:ClearText)?Password\"\s+value=\")([^\"]+)",
        (1,),
        needles=("password",),
    ),
    Rule(
        "config_files",
        "xml_secret",
        r"(?i)(<(password|passwd|secret|token|apikey|api_key|client_secret|"
        r"privatekey)>)([^<]{3,})(</\2>)",
        (1, 4),
        needles=("</",),
    ),
    Rule(
        "config_files",
        "kube_key",
        r"((?:client-key-data|token)\s*:\s*)([A-Za-z0-9+/=._\-]{20,})",
        (1,),
        needles=("client-key-data", "token"),
    ),
]
WEBHOOKS = [
    Rule(
        "webhooks",
        "slack_webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_\-+]+",
        needles=("hooks.slack.com",),
    ),
    Rule(
        "webhooks",
        "discord_webhook",
        r"https://(?:\w+\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]+",
        needles=("/api/webhooks/",),
    ),
    Rule(
        "webhooks",
        "teams_webhook",
        r"https://[a-z0-9-]+\.webhook\.office\.com/\S+",
        needles=("webhook.office.com",),
    ),
    Rule(
        "webhooks",
        "telegram_bot_url",
        r"(api\.telegram\.org/bot)(\d+:[A-Za-z0-9_\-]+)",
        (1,),
        needles=("api.telegram.org",),
    ),
    Rule(
        "webhooks",
        "url_secret",
        r"(?i)([?&;](?:access_token|api_key|apikey|key|token|secret|client_secret|password|"
        r"sig|signature|auth|x-amz-signature|x-goog-signature|sessionid)=)"
        r"([^&#\s\"']{8,})",
        (1,),
        needles=("=",),
    ),
]


def _top_level(rx: str) -> list[str]:
    """The alternatives of ``rx`` at the top level (not those inside a group or a class)."""
    out, depth, start, i, in_class = [], 0, 0, 0, False
    while i < len(rx):
        ch = rx[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if rx[i + 1 : i + 2] == "]":  # a class whose first member is ``]``
                i += 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            out.append(rx[start:i])
            start = i + 1
        i += 1
    out.append(rx[start:])
    return out


def _needles(rx: str) -> tuple[str, ...]:
    """The literal start of each top-level alternative of ``rx`` (lowercase), or () if
    one has none: every match holds one of them."""
    out = []
    for piece in _top_level(rx):
        alt = piece.removeprefix("\\b").removeprefix("(?<![A-Za-z0-9_~.])")
        lit = ""
        for ch in alt:
            if not (ch.isalnum() or ch in "_-~"):
                if ch in "?*{":  # the last character may be absent
                    lit = lit[:-1]
                break
            lit += ch
        if len(lit) < 2:
            return ()
        out.append(lit.lower())
    return tuple(out)


#: tokens recognised by their shape (gitleaks' default rules are the anchor)
_PROVIDER_PATTERNS: list[tuple[str, str]] = [
    ("anthropic", r"sk-ant-(?:api|admin|oat|ort)\d{2}-[A-Za-z0-9_\-]{20,}"),
    ("openai", r"sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}"),
    (
        "aws_access_key",
        r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)"
        r"[A-Z0-9]{16}\b",
    ),
    ("aws_bedrock", r"ABSK[A-Za-z0-9+/]{109,269}={0,2}"),
    ("github", r"gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255}"),
    (
        "gitlab",
        r"gl(?:pat|dt|rt|cbt|ptt|ft|imt|agent|oas|soat|ffct)-[A-Za-z0-9_\-]{20,}|"
        r"GR1348941[A-Za-z0-9_\-]{20}",
    ),
    ("slack", r"xox[abposre]-[A-Za-z0-9\-]{10,}|xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+"),
    ("google_api_key", r"AIza[0-9A-Za-z_\-]{35}"),
    ("google_oauth", r"ya29\.[0-9A-Za-z_\-]{20,}|GOCSPX-[A-Za-z0-9_\-]{28}"),
    ("stripe", r"(?:sk|rk|pk)_(?:live|test|prod)_[0-9A-Za-z]{10,}|whsec_[0-9A-Za-z]{24,}"),
    ("npm", r"npm_[A-Za-z0-9]{36}\b"),
    ("pypi", r"pypi-AgE[A-Za-z0-9_\-]{50,}"),
    ("huggingface", r"hf_[A-Za-z0-9]{34,}\b|api_org_[A-Za-z]{34}\b"),
    ("sendgrid", r"SG\.[A-Za-z0-9_\-]{20,24}\.[A-Za-z0-9_\-]{39,50}"),
    ("twilio", r"SK[0-9a-fA-F]{32}\b"),
    ("digitalocean", r"do[por]_v1_[a-f0-9]{64}\b"),
    ("shopify", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    ("databricks", r"dapi[a-f0-9]{32}(?:-\d)?\b"),
    ("dynatrace", r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}"),
    ("doppler", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}"),
    ("linear", r"lin_api_[A-Za-z0-9]{40}"),
    ("notion", r"ntn_\d{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43}\b"),
    ("perplexity", r"pplx-[A-Za-z0-9]{48}"),
    ("postman", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}"),
    ("pulumi", r"pul-[a-f0-9]{40}\b"),
    ("rubygems", r"rubygems_[a-f0-9]{48}\b"),
    ("sentry", r"sntry[su]_[A-Za-z0-9_=+/]{40,}"),
    ("vault", r"hv[sbr]\.[A-Za-z0-9_\-]{24,300}"),
    (
        "onepassword",
        r"ops_eyJ[A-Za-z0-9+/]{250,}={0,3}|A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|"
        r"[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
    ),
    (
        "grafana",
        r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,3}|"
        r"eyJrIjoi[A-Za-z0-9]{70,}",
    ),
    ("heroku", r"HRKU-AA[A-Za-z0-9_\-]{58}"),
    ("flyio", r"fo1_[A-Za-z0-9_\-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3}"),
    ("planetscale", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.\-]{32,64}"),
    ("prefect", r"pnu_[A-Za-z0-9]{36}"),
    ("readme", r"rdme_[a-z0-9]{70}"),
    ("sendinblue", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    ("square", r"sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,60}|EAAA[A-Za-z0-9_\-]{60}"),
    ("mailgun", r"\bkey-[0-9a-f]{32}\b"),
    ("mailchimp", r"\b[0-9a-f]{32}-us\d{1,2}\b"),
    ("atlassian", r"ATATT3[A-Za-z0-9_\-=]{150,}"),
    ("azure_ad", r"(?<![A-Za-z0-9_~.])[a-zA-Z0-9_~.]{3}\dQ~[a-zA-Z0-9_~.\-]{31,34}"),
    ("alibaba", r"\bLTAI[A-Za-z0-9]{20}\b"),
    ("clojars", r"CLOJARS_[a-z0-9]{60}"),
    ("easypost", r"EZ[AT]K[A-Za-z0-9]{54}"),
    ("frameio", r"fio-u-[A-Za-z0-9_=\-]{64}"),
    ("infracost", r"ico-[A-Za-z0-9]{32}\b"),
    ("openshift", r"sha256~[A-Za-z0-9_\-]{43}"),
    ("scalingo", r"tk-us-[A-Za-z0-9_\-]{48}"),
    ("artifactory", r"AKCp[A-Za-z0-9]{69}"),
    ("facebook", r"EAA[MC][A-Za-z0-9]{100,}"),
    ("cloudflare_origin", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}"),
    ("duffel", r"duffel_(?:test|live)_[A-Za-z0-9_=\-]{43}"),
    ("flutterwave", r"FLW(?:SECK|PUBK)_TEST-[a-h0-9]{32}-X"),
    ("harness", r"(?:pat|sat)\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}"),
    ("terraform_cloud", r"[a-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,70}"),
    ("telegram_bot", r"\b\d{8,10}:AA[A-Za-z0-9_\-]{33}\b"),
    (  # the first part is a base64 user id: any letter first, a digit and both cases in it
        "discord_bot",
        r"\b(?=[A-Za-z\d_\-]{0,27}\d)(?=[A-Za-z\d_\-]{0,27}[A-Z])(?=[A-Za-z\d_\-]{0,27}[a-z])"
        r"[A-Za-z\d_\-]{23,28}\.[A-Za-z\d_\-]{6}\.[A-Za-z\d_\-]{27,38}\b",
    ),
]
#: the needles of the provider patterns whose alternatives do not start with a literal
_PROVIDER_NEEDLES: dict[str, tuple[str, ...]] = {
    "aws_access_key": ("a3t", "akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "anpa",
                       "anva", "aipa"),
    "stripe": ("sk_", "rk_", "pk_", "whsec_"),
    "onepassword": ("ops_eyj", "a3-"),
    "mailchimp": ("-us",),
    "azure_ad": ("q~",),
    "harness": ("pat.", "sat."),
    "terraform_cloud": (".atlasv1.",),
    "telegram_bot": (":aa",),
    "discord_bot": (".",),
}
PROVIDERS = [
    Rule("providers", kind, rf"(?<![A-Za-z0-9_\-])(?:{rx})",
         needles=_PROVIDER_NEEDLES.get(kind) or _needles(rx))
    for kind, rx in _PROVIDER_PATTERNS
]
JWT = [
    Rule(
        "jwt",
        "jwt",
        r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
        needles=("eyj",),
    )
]
ASSIGNMENTS = [
    Rule(
        "assignments",
        "secret",
        rf"(?i)(\b[A-Za-z0-9_.\-]*(?:{_SECRET_WORDS})[\"']?\s*(?::=|=>|=|:)\s*)"
        r"(\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;&|)}\]]+)",
        (1,),
        # every secret name holds one of these
        needles=("pass", "pwd", "secret", "token", "key", "credential", "dsn", "auth",
                 "webhook", "conn", "cookie"),
    ),
]
FAMILIES: dict[str, list[Rule]] = {
    "private_keys": PRIVATE_KEYS,
    "connections": CONNECTIONS,
    "headers": HEADERS,
    "cli": CLI,
    "config_files": CONFIG_FILES,
    "webhooks": WEBHOOKS,
    "providers": PROVIDERS,
    "jwt": JWT,
    "assignments": ASSIGNMENTS,
}
_RULES: list[Rule] = [rule for rules in FAMILIES.values() for rule in rules]
#: values that only refer to a secret, or stand in for one
_REFERENCE = re.compile(
    r"^(?:\$|%[A-Za-z_]|<|\{\{|\[REDACTED|\*{3,}|x{4,}$|os\.(?:environ|getenv)|"
    r"process\.env|ENV\[|ENV\.fetch|getenv\(|env\(|Deno\.env|System\.getenv|"
    r"secrets\.|settings\.|config\.|self\.|this\.|request\.|args\.|options\.|opts\.|"
    r"params\.|vault\.|keyring\.|getpass|input\(|prompt\(|None$|null$|nil$|true$|false$|"
    r"undefined$|your[_-]|changeme$|example$|\.\.\.$|REPLACE|TODO)",
    re.IGNORECASE,
)
_CODE_VALUE = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*(?:\(|\[|$)")
#: a version string (``1.2.3``, ``v2.0.1-rc1``): never a secret
_VERSION = re.compile(r"^v?\d+(?:\.\d+)+(?:[-+][A-Za-z0-9.]+)?$")


def token_shaped(part: str) -> bool:
    """A dot-free part that reads as a generated token, not a name: long, with digits and
    both cases, that changes case or kind often (``pv0SgXq1Ei29o…``, ``CAESIJ3kd8…``).
    Names (``db``, ``environ``, ``DATABASE_URL``, ``getApiKeyV2``) are not."""
    if len(part) < 16:
        return False
    digits = sum(c.isdigit() for c in part)
    upper = sum(c.isupper() for c in part)
    lower = sum(c.islower() for c in part)
    if digits < 2 or not upper or not lower:
        return False
    # case changes and letter/digit changes: a name has few (one per word), a token many
    changes = sum(1 for i in range(1, len(part))
                  if part[i - 1].isupper() != part[i].isupper()
                  or part[i - 1].isdigit() != part[i].isdigit())
    return changes >= len(part) // 4


def _reference(value: str) -> bool:
    """An assignment whose value refers to a secret (or is a placeholder), not one."""
    inner = value.strip().strip("\"'`").strip()
    if not inner or _REFERENCE.match(inner) or _VERSION.match(inner):
        return True
    # os.environ['X'], get_token(), cfg.api_key; not a dotted token (a Discord bot
    # token, Vault's hvs.…): a value whose dotted parts include a token-shaped one
    if value[:1] in "\"'`" or not _CODE_VALUE.match(inner):
        return False
    if "(" in inner or "[" in inner:
        return True
    return "." in inner and not any(token_shaped(p) for p in inner.split("."))


def _assignment(rule: Rule) -> _Sub:
    def guarded(m: re.Match[str]) -> str:
        return m.group(0) if _reference(m.group(2)) else rule.sub(m)

    return guarded


_SUBS: list[tuple[Rule, _Sub]] = [
    (r, _assignment(r) if r.family in ("assignments", "cli") else r.sub) for r in _RULES
]


#: every rule's needles, once: a text is searched for each distinct needle a single time
_NEEDLES = sorted({n for rule in _RULES for n in rule.needles})
_BY_NEEDLE = {n: frozenset(i for i, (rule, _) in enumerate(_SUBS) if n in rule.needles)
              for n in _NEEDLES}
_ALWAYS = frozenset(i for i, (rule, _) in enumerate(_SUBS) if not rule.needles)
_SHORT_NEEDLES = tuple(n for n in _NEEDLES if len(n) < 2)  # one character
_BY_PAIR: dict[str, tuple[str, ...]] = {}
for _n in _NEEDLES:
    if len(_n) >= 2:
        _BY_PAIR[_n[:2]] = (*_BY_PAIR.get(_n[:2], ()), _n)
_PAIRS_UP_TO = 256  # longer texts: every needle is looked for (fewer than their pairs)


def _trie(words: list[str]) -> str:
    """A regex matching where any of ``words`` starts, as a trie (``sk``, ``sk-ant-``,
    ``sg``: ``s(?:g|k)``): a few literal tests a position, not one per word."""
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        if "" in node:  # a word ends here: the longer ones hold it, so it is enough
            return ""
        alts = [re.escape(ch) + emit(sub) for ch, sub in sorted(node.items())]
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    return emit(root)


#: any needle of two characters or more: one search (in C) clears most of a log's strings
_LONG_NEEDLE = re.compile(_trie([n for n in _NEEDLES if len(n) >= 2]))
_PAIR_STARTS = frozenset(_BY_PAIR)


def _needles_in(lowered: str) -> list[str]:
    """Every needle ``lowered`` holds. In a short text, the needles of one character are
    looked for, and the longer ones only if the trie finds one: through the text's character
    pairs (one set intersection in C), as only the needles starting with one of them can be
    in it; a longer text is searched for every needle (fewer than its pairs)."""
    if len(lowered) > _PAIRS_UP_TO:
        return [n for n in _NEEDLES if n in lowered]
    found = [ch for ch in _SHORT_NEEDLES if ch in lowered]
    if _LONG_NEEDLE.search(lowered) is not None:
        for pair in _PAIR_STARTS.intersection(map(add, lowered, lowered[1:])):
            found += [n for n in _BY_PAIR[pair] if n in lowered]
    return found


#: the rules each set of needles selects (a log's texts hold few such sets)
_RULES_OF: dict[frozenset[str], tuple[tuple[Rule, _Sub], ...]] = {}


def _rules_of(needles: list[str]) -> tuple[tuple[Rule, _Sub], ...]:
    """The rules holding one of ``needles`` (and those without needles), in order."""
    key = frozenset(needles)
    rules = _RULES_OF.get(key)
    if rules is None:
        chosen = set(_ALWAYS)
        for n in key:
            chosen |= _BY_NEEDLE[n]
        rules = tuple(_SUBS[i] for i in sorted(chosen))
        if len(_RULES_OF) < _MEMO_SIZE:
            _RULES_OF[key] = rules
    return rules


#: the letters outside ASCII that a case-insensitive pattern takes for ASCII ones and that
#: ``str.lower`` leaves as they are (``re`` matches ``(?i)s`` with "ſ" and ``(?i)i`` with
#: "ı"; "K" and "İ" lower to ASCII already): a needle is looked for in their ASCII spelling
_FOLD = str.maketrans({"\u017f": "s", "\u0131": "i"})


def _lowered(text: str) -> str:
    """``text`` as the needles are looked for in it: lower case, with the letters that a
    case-insensitive pattern matches as ASCII spelt so (``pa\u017f\u017fword`` has
    ``password``'s needle)."""
    low = text.lower()
    return low if low.isascii() else low.translate(_FOLD)


def _candidates(text: str) -> tuple[tuple[Rule, _Sub], ...]:
    """The rules that may match ``text``: those holding none of their needles cannot
    (and so are never compiled)."""
    return _rules_of(_needles_in(_lowered(text)))


#: short strings recur (keys, tool names, outcomes): their redaction is remembered, with
#: what it learnt, so a document's passes pay for each once
_MEMO_TEXT = 96
_MEMO_SIZE = 1 << 14
_memo: dict[str, tuple[str, int, tuple[tuple[str, str], ...]]] = {}


#: once the memo is full, the texts seen lately: a log repeats its ids a few records
#: apart (a tool call's id in its intent, start and end), then never again
_RECENT_SIZE = 1 << 12
_recent: dict[str, tuple[str, int, tuple[tuple[str, str], ...]]] = {}


def _remember(text: str, hit: tuple[str, int, tuple[tuple[str, str], ...]]) -> None:
    if len(text) > _MEMO_TEXT:
        return
    if len(_memo) < _MEMO_SIZE:  # full: the first stay
        _memo[text] = hit
        return
    if len(_recent) >= _RECENT_SIZE:
        _recent.clear()
    _recent[text] = hit


def _redact_text_noting(text: str, found: Masker) -> str:
    hit = (_memo.get(text) or _recent.get(text)) if len(text) <= _MEMO_TEXT else None
    if hit is None:
        needles = _needles_in(_lowered(text))
        if not needles and not _ALWAYS:
            _remember(text, (text, 0, ()))  # no rule can match: most of a log's new strings
            return text
        local: Masker | None = None
        out = text
        for rule, sub in _rules_of(needles):
            if rule.pattern.search(out) is None:  # most candidates: no closure to build
                continue
            local = local if local is not None else Masker()
            out = rule.pattern.sub(local.noting(rule, sub), out)
        hit = (out, local.hits, tuple(local.values.items())) if local else (out, 0, ())
        _remember(text, hit)
    out, hits, values = hit
    if hits:
        found.hits += hits
        for value, kind in values:
            found.add(value, kind)
    return out


_secret_keys: dict[str, bool] = {}


def _secret_key(key: str) -> bool:
    """``key`` names a secret (remembered: a document repeats its keys)."""
    named = _secret_keys.get(key)
    if named is None:
        named = bool(SECRET_KEY_RE.search(key))
        if len(_secret_keys) < _MEMO_SIZE:
            _secret_keys[key] = named
    return named


def redact_text(text: str, found: Masker | None = None) -> str:
    """``text`` with every secret the rules recognise replaced by a marker; each secret
    replaced is added to ``found`` when given."""
    if len(text) < 8:
        return text
    if found is not None:
        return _redact_text_noting(text, found)
    for rule, sub in _candidates(text):
        text = rule.pattern.sub(sub, text)
    return text


def find(text: str) -> list[str]:
    """The kinds of secret the rules find in ``text`` (empty: none)."""
    kinds: list[str] = []
    for rule, sub in _candidates(text):
        for m in rule.pattern.finditer(text):
            if sub(m) != m.group(0):
                kinds.append(rule.kind)
                break
    return kinds


#: the shortest secret masked wherever it occurs, and the shortest fragment of one
MIN_VALUE = 6
FRAGMENT = 8


class Masker:
    """The secret values the rules found in a record or a document, masked by value.

    A pattern finds a secret in its context (``DB_PASSWORD=…``, a PEM block); once found,
    the value itself is a secret wherever it appears in the same record or document: a
    copy in another field, each body line of a multi-line key, and any run of
    :data:`FRAGMENT` or more characters of it that smllm quoted into a derived field (the
    gate's ``reason`` quoting a key's first body line, a target, a summary). Masking is
    a pure function of the values found and the text, so it is deterministic.
    """

    __slots__ = ("_grams", "_quads", "_rx", "hits", "values")

    def __init__(self) -> None:
        #: how many secrets the rules replaced while this masker was collecting
        self.hits = 0
        #: secret value -> the kind of rule that found it
        self.values: dict[str, str] = {}
        self._grams: dict[str, str] | None = None
        self._rx: re.Pattern[str] | None = None
        #: every run of 4 characters inside a fragment (see :meth:`mask_text`)
        self._quads: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.values)

    def add(self, value: str, kind: str) -> None:
        """Learn one secret value (and each line of a multi-line one)."""
        value = value.strip().strip("\"'`").strip()
        pieces = [value] + ([ln.strip() for ln in value.splitlines()] if "\n" in value else [])
        for piece in pieces:
            if _learnable(piece) and piece not in self.values:
                self.values[piece] = kind
                self._grams = self._rx = None

    def noting(self, rule: Rule, sub: _Sub) -> _Sub:
        """``sub``, also learning the secret of every match it replaces."""

        def noted(m: re.Match[str]) -> str:
            out = sub(m)
            if out != m.group(0):
                self.hits += 1
                if rule.keep:
                    for i in range(1, (m.re.groups or 0) + 1):
                        part = m.group(i)
                        if i not in rule.keep and part:
                            self.add(part, rule.kind)
                else:
                    self.add(m.group(0), rule.kind)
            return out

        return noted

    def _compile(self) -> tuple[re.Pattern[str], dict[str, str]]:
        if self._rx is None or self._grams is None:
            ordered = sorted(self.values, key=lambda v: (-len(v), v))
            self._rx = re.compile("|".join(re.escape(v) for v in ordered))
            grams: dict[str, str] = {}
            for value in ordered:
                # fragments never span whitespace, nor a URL's punctuation (its scheme,
                # host and path words are everyone's)
                words = _URL_WORDS.split(value) if "://" in value else value.split()
                for word in words:
                    if not _fragmentable(word):
                        continue
                    for i in range(len(word) - FRAGMENT + 1):
                        grams.setdefault(word[i : i + FRAGMENT], self.values[value])
            self._grams = grams
            self._quads = frozenset(g[i : i + 4] for g in grams for i in range(FRAGMENT - 3))
        return self._rx, self._grams

    def mask_text(self, text: str) -> str:
        """``text`` with every known secret, and every fragment of one, masked."""
        if not self.values or len(text) < MIN_VALUE:
            return text
        rx, grams = self._compile()
        text = rx.sub(lambda m: MARK.format(self.values[m.group(0)]), text)
        # a fragment at i holds the 4 characters from the first multiple of 4 at or after
        # i: a text none of whose aligned runs of 4 (split in C) is in one holds none
        if len(text) < FRAGMENT or not grams or self._quads.isdisjoint(_QUARTERS.findall(text)):
            return text
        spans: list[tuple[int, int, str]] = []
        end = -1
        for i in range(len(text) - FRAGMENT + 1):
            kind = grams.get(text[i : i + FRAGMENT])
            if kind is None:
                continue
            if spans and i <= end:
                end = i + FRAGMENT
                spans[-1] = (spans[-1][0], end, spans[-1][2])
            else:
                end = i + FRAGMENT
                spans.append((i, end, kind))
        if not spans:
            return text
        out: list[str] = []
        at = 0
        for start, stop, kind in spans:
            out.append(text[at:start])
            out.append(MARK.format(kind))
            at = stop
        out.append(text[at:])
        return "".join(out)

    def mask_value(self, value: Any) -> Any:
        """A JSON value with :meth:`mask_text` applied to every string and key."""
        if isinstance(value, str):
            return self.mask_text(value)
        if isinstance(value, dict):
            out: dict[Any, Any] = {}
            for k, v in value.items():
                out[_distinct(self.mask_text(k), k, out) if isinstance(k, str) else k] = (
                    self.mask_value(v))
            return out
        if isinstance(value, list):
            return [self.mask_value(v) for v in value]
        return value


_URL_WORDS = re.compile(r"[^A-Za-z0-9_\-]+")
_QUARTERS = re.compile(r"(?s).{4}")


def _single_case_word(text: str) -> bool:
    return text.isalpha() and (text.islower() or text.isupper())


def _learnable(value: str) -> bool:
    """A secret value worth masking wherever it occurs: long enough, and not a plain word
    (a secret found as ``password`` must not mask every ``password`` of a document)."""
    return (len(value) >= MIN_VALUE and "[REDACTED:" not in value
            and (len(value) >= 16 or not _single_case_word(value)))


def _fragmentable(word: str) -> bool:
    """A word of a secret whose fragments are masked too: long, not a PEM armour line,
    not a plain word (``services`` of a webhook URL)."""
    return len(word) >= FRAGMENT and "-----" not in word and not _single_case_word(word)


def _distinct(name: str, key: str, out: dict[Any, Any]) -> str:
    """``name`` (``key`` redacted), made distinct from the keys already in ``out``."""
    if name != key and name in out:  # two secret keys: keep them apart
        n = 2
        while f"{name}#{n}" in out:
            n += 1
        name = f"{name}#{n}"
    return name


def _redact(value: Any, key: str | None, found: Masker) -> Any:
    if isinstance(value, str):
        if key is not None and value and _secret_key(key) and not _reference(value):
            found.hits += 1
            found.add(value, "secret")
            return MARK.format("secret")
        return redact_text(value, found)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            name = _distinct(redact_text(k, found), k, out) if isinstance(k, str) else k
            out[name] = _redact(v, k if isinstance(k, str) else None, found)
        return out
    if isinstance(value, list):
        return [_redact(v, key, found) for v in value]
    return value


def redact_value(value: Any, key: str | None = None, known: Masker | None = None) -> Any:
    """A JSON value (a record's payload) with every string redacted; secret-keyed strings
    replaced whole, keys that are themselves secrets replaced (kept distinct); then every
    secret found anywhere in it (and ``known``'s, the rest of a document's) masked by
    value wherever it occurs in it. No key is trusted by its name: a value under
    ``signature`` or ``hash`` is redacted like any other (the journal's own ``hash`` and
    ``prev`` are envelope fields, never passed here)."""
    found = Masker() if known is None else known
    out = _redact(value, key, found)
    return found.mask_value(out) if found else out


def _learn_text(value: str, key: str | None, found: Masker) -> None:
    if key is not None and value and (_secret_keys.get(key) or (
            key not in _secret_keys and _secret_key(key))) and not _reference(value):
        found.hits += 1
        found.add(value, "secret")
    elif len(value) >= 8:
        hit = _memo.get(value)  # inline: most strings of a log are remembered, and clean
        if hit is None or hit[1]:
            _redact_text_noting(value, found)


#: key -> it is a plain key: not a secret's name, and no secret in its own text (a log
#: repeats its keys: each is judged once)
_plain_keys: dict[str, bool] = {}


#: the keys judged plain (what :data:`_plain_keys` holds True for), as a set: one C call
#: tells whether a dict's keys all are
_known_plain: set[str] = set()


def _plain(key: str) -> bool:
    plain = not _secret_key(key) and (len(key) < 8 or _clean(key))
    if len(_plain_keys) < _MEMO_SIZE:
        _plain_keys[key] = plain
        if plain:
            _known_plain.add(key)
    return plain


def _clean(text: str) -> bool:
    """The rules find nothing in ``text`` (remembered like any redaction)."""
    probe = Masker()
    _redact_text_noting(text, probe)
    return not probe.hits


def _learn_pair(k: Any, v: Any, found: Masker) -> None:
    """One key and its value, in general (a key naming a secret, or holding one)."""
    if isinstance(k, str):
        if len(k) >= 8:
            _learn_text(k, None, found)
        if isinstance(v, str):
            _learn_text(v, k, found)
        elif isinstance(v, (dict, list)):
            _learn(v, k, found)
    else:
        _learn(v, None, found)


def _learn(value: Any, key: str | None, found: Masker) -> None:  # noqa: C901, PLR0912 - the hot loop, inline
    """What :func:`_redact` learns about ``value``, without building its redacted copy.
    Leaves are handled in their container's loop: a log is mostly leaves, most of them
    recur, and most keys are plain (:func:`_plain`), so a pair whose key is plain and
    whose value is short or remembered clean costs two dictionary look-ups; a dict all
    of whose keys are known plain (most of a log's: its records repeat their fields) is
    read by its values alone."""
    memo, plain_keys = _memo, _plain_keys
    if isinstance(value, dict):
        if _known_plain.issuperset(value):
            for v in value.values():
                kind = type(v)
                if kind is str:
                    if len(v) >= 8:
                        hit = memo.get(v)
                        if hit is None or hit[1]:
                            _redact_text_noting(v, found)
                elif kind is dict or kind is list or isinstance(v, (str, dict, list)):
                    _learn(v, None, found)  # under a plain key: as under none
            return
        for k, v in value.items():
            plain = plain_keys.get(k) if type(k) is str else False
            if plain is None:
                plain = _plain(k)
            kind = type(v)
            if not plain or (kind is not str and kind is not dict and kind is not list):
                if not plain or isinstance(v, (str, dict, list)):  # else a number, null
                    _learn_pair(k, v, found)
            elif kind is str:
                if len(v) >= 8:
                    hit = memo.get(v)
                    if hit is None or hit[1]:
                        _redact_text_noting(v, found)
            else:
                _learn(v, k, found)
    elif isinstance(value, list):
        plain_list = key is None or plain_keys.get(key) is True
        for v in value:
            if plain_list and type(v) is str:
                if len(v) >= 8:
                    hit = memo.get(v)
                    if hit is None or hit[1]:
                        _redact_text_noting(v, found)
            elif isinstance(v, str):
                _learn_text(v, key, found)
            elif isinstance(v, (dict, list)):
                _learn(v, key, found)
    elif isinstance(value, str):
        _learn_text(value, key, found)


def learn(value: Any, into: Masker) -> bool:
    """Add to ``into`` every secret the rules find in ``value`` (a document's first pass);
    True if the rules found any (the value needs them again when it is written)."""
    before = into.hits
    _learn(value, None, into)
    return into.hits != before
