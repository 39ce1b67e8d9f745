"""Programs that talk to other machines: what they send, what they run, where they write.

Each network program names the files it sends (``curl -T``, ``curl -d @file``,
``scp FILE host:``, ``wget --post-file``, ``mail -a``, …) and :func:`._flows.sink`
decides whether a secret reaches the network (directly, through a pipe, a substitution
or a file written from a secret earlier in the command). A program wired to a socket
(``nc -e``, ``socat TCP:… EXEC:…``) is a reverse shell. ``ssh``/``scp`` options that run
commands locally (``-o ProxyCommand``, a config file with one) are analysed as shell.
"""

from __future__ import annotations

from smllm.gate.shell import _flows
from smllm.gate.shell._analyse import into_folder, nested, stdin_text, write_target
from smllm.gate.shell._flags import Options, item, read, skip_options
from smllm.gate.shell._model import Context, Finding
from smllm.gate.shell._parse import Simple, Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    Result = tuple[list[Finding], bool]

_CURL_DATA = frozenset({"-d", "--data", "--data-ascii", "--data-binary", "--data-urlencode",
                        "--json", "-F", "--form", "-T", "--upload-file"})
_CURL_OUT = frozenset({"-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar",
                       "--trace", "--trace-ascii", "--output-dir", "--stderr", "--libcurl"})
_CURL_ARG = frozenset({"-H", "--header", "-u", "--user", "-A", "--user-agent", "-e",
                       "--referer", "-X", "--request", "-x", "--proxy", "-b", "--cookie",
                       "-E", "--cert", "--key", "--cacert", "-m", "--max-time", "-w",
                       "--write-out", "-r", "--range", "-K", "--config", "--connect-timeout",
                       "--retry", "-U", "--proxy-user", "--resolve", "--url", "-Y", "-y",
                       "--limit-rate", "-z", "--time-cond", "--oauth2-bearer"})


#: curl's options that take a value, as the argv reader reads them (GNU order)
_CURL = Options(_CURL_DATA | _CURL_OUT | _CURL_ARG, permute=True)
_WGET = Options(("--post-file", "--body-file", "-O", "--output-document", "-P",
                 "--directory-prefix", "-o", "--output-file", "-a", "--append-output",
                 "--use-askpass"), permute=True)


def _options(args: list[Word], spec: Options) -> Iterator[tuple[str, Word | None]]:
    """Each word's option of ``spec`` and its value (``("", None)`` for any other word);
    every word is read, options after operands and after ``--`` too, as curl and wget
    always were."""
    values = [a.value for a in args]
    i = 0
    while i < len(args):
        arg = item(values, spec, i)
        yield (arg.name, arg.word(args)) if arg.name in spec.value else ("", None)
        i = arg.end


def curl(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    sent: list[Word | str] = []
    out: list[Finding] = []
    for key, value in _options(args, _CURL):
        if key in _CURL_DATA and value is not None and value.value is not None:
            text = value.value
            if key in ("-F", "--form") and "=" in text:
                text = text.split("=", 1)[1].split(";", 1)[0]
            if key in ("-T", "--upload-file") or text.startswith(("@", "<")):
                sent.append(text if key not in ("-T", "--upload-file") else "@" + text)
        elif key in _CURL_OUT and value is not None and key not in ("--stderr",):
            out += write_target(value, ctx, truncate=True, what=f"{name} {key} writes", by=name)
    return out + _flows.sink(name, sent, cmd, ctx), False


def wget(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    sent: list[Word | str] = []
    out: list[Finding] = []
    for key, value in _options(args, _WGET):
        if value is not None and value.value is not None:
            if key in ("--post-file", "--body-file"):
                sent.append(value)
            elif key == "--use-askpass":
                out += nested(value.value, ctx, "wget --use-askpass")
            elif value.value != "-":
                out += write_target(value, ctx, truncate=key != "-a", what=f"{name} {key} writes",
                                    by=name)
    return out + _flows.sink(name, sent, cmd, ctx), False


def netcat(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    for i, a in enumerate(args):
        v = a.value or ""
        if v in ("-e", "-c", "--exec", "--sh-exec", "--lua-exec") or (
            v.startswith("-") and not v.startswith("--") and v[-1] in "ec" and len(v) > 2
            and name != "socat"
        ):
            prog = args[i + 1].value if i + 1 < len(args) else None
            return [Finding("net.reverse-shell", "deny",
                            f"{name} {v} {prog or ''} wires a program to a network socket")
                    ], False
    return _flows.sink(name, [], cmd, ctx), False


_SOCAT_NET = ("tcp", "udp", "openssl", "ssl", "sctp", "socks", "proxy", "dccp", "vsock")


def socat(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    addresses = [a.value or "" for a in args if not (a.value or "-").startswith("-")
                 or a.value == "-"]
    kinds = [a.split(":", 1)[0].split(",", 1)[0].lower() for a in addresses]
    network = any(k.startswith(_SOCAT_NET) for k in kinds)
    out: list[Finding] = []
    for address, kind in zip(addresses, kinds, strict=True):
        if kind in ("exec", "system"):
            body = address.split(":", 1)[1] if ":" in address else ""
            if network:
                return [Finding("net.reverse-shell", "deny",
                                f"socat {kind.upper()} wires a program to a network socket")
                        ], False
            out += nested(body.split(",", 1)[0], ctx, "socat EXEC")
    if network:
        sent: list[Word | str] = [a for a, k in zip(addresses, kinds, strict=True)
                                  if k in ("file", "open", "gopen", "create")]
        out += _flows.sink(name, sent, cmd, ctx)
    return out, False


_SSH_ARG = frozenset({"-p", "-i", "-l", "-o", "-F", "-J", "-L", "-R", "-D", "-b", "-c", "-e",
                      "-m", "-O", "-Q", "-S", "-W", "-w", "-E", "-B", "-I", "-P"})
#: scp/sftp read options in GNU order: they may follow the operands
_SCP = Options(_SSH_ARG, permute=True)
#: ssh options whose value runs a command on this machine
_SSH_LOCAL = ("proxycommand", "localcommand", "knownhostscommand")


def ssh_options(name: str, args: list[Word], ctx: Context) -> list[Finding]:
    """``-o ProxyCommand=…`` (and a ``-F`` config holding one) run a command here."""
    out: list[Finding] = []
    for i, a in enumerate(args):
        v = a.value or ""
        setting: str | None = None
        if v == "-o" and i + 1 < len(args):
            setting = args[i + 1].value
        elif v.startswith("-o") and len(v) > 2:
            setting = v[2:]
        elif v == "-F" and i + 1 < len(args):
            out += _ssh_config(name, args[i + 1], ctx)
        elif v == "-S" and name in ("scp", "sftp") and i + 1 < len(args):
            program = args[i + 1].value
            out += nested(program, ctx, f"{name} -S") if program else []
        if setting is None:
            continue
        key, sep, value = setting.partition("=")
        if not sep or " " in key:
            key, _, value = setting.partition(" ")
        if key.lower() in _SSH_LOCAL:
            out.append(Finding("exec.code-option", "ask", f"{name} -o {key} runs a command here"))
            out += nested(value.replace("%h", "host").replace("%p", "22"), ctx,
                          f"{name} -o {key}")
    return out


def _ssh_config(name: str, word: Word, ctx: Context) -> list[Finding]:
    path = ctx.resolve(word.value) if word.value is not None else None
    try:
        with open(path or "", encoding="utf-8", errors="replace") as fh:
            lines = fh.read(64 * 1024).splitlines()
    except OSError:
        return [Finding("exec.code-option", "ask",
                        f"{name} -F reads a configuration smllm cannot read")]
    out: list[Finding] = []
    for line in lines:
        key, _, value = line.strip().replace("=", " ", 1).partition(" ")
        if key.lower() in _SSH_LOCAL:
            out.append(Finding("exec.code-option", "ask",
                               f"{name} -F {word.value}: {key} runs a command here"))
            out += nested(value.strip(), ctx, f"{name} config {key}")
    return out


def ssh(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    out = ssh_options(name, args, ctx)
    rest = skip_options(args, _SSH_ARG, 1)  # the words after the destination
    out += _flows.sink(name, [], cmd, ctx)
    if not rest:
        if stdin_text(cmd)[1] != "the terminal":
            out.append(Finding("remote.exec", "ask", f"{name} feeds commands to another machine"))
        return out, False
    values = [a.value for a in rest]
    out.append(Finding("remote.exec", "ask", f"{name} runs a command on another machine"))
    if all(v is not None for v in values):
        out += nested(" ".join(v for v in values if v is not None), ctx, f"{name} remote")
    return out, False


def scp(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    out = ssh_options(name, args, ctx)
    operands = [args[a.at] for a in read([a.value for a in args], _SCP) if a.name == ""]
    if name == "sftp":
        return out + _sftp_batch(args, cmd, ctx), False
    if len(operands) >= 2 and _flows.remote(operands[-1].value):
        out += _flows.sink(name, list(operands[:-1]), cmd, ctx)
    elif len(operands) >= 2:
        for dest in into_folder(operands[-1], operands[:-1], ctx):
            out += write_target(dest, ctx, truncate=True, what=f"{name} writes", by=name)
    return out, False


def _sftp_batch(args: list[Word], cmd: Simple, ctx: Context) -> list[Finding]:
    values = [a.value for a in args]
    text: str | None = None
    if "-b" in values:
        j = values.index("-b") + 1
        path = ctx.resolve(values[j] or "") if j < len(values) and values[j] else None
        if path and path != "-":
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read(64 * 1024)
            except OSError:
                text = None
    if text is None:
        text, _ = stdin_text(cmd)
    sent: list[Word | str] = []
    for line in (text or "").splitlines():
        words = line.split()
        if len(words) >= 2 and words[0].lower() in ("put", "mput", "reput"):
            sent.append(words[1])
    return _flows.sink("sftp", sent, cmd, ctx)


def httpie(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    sent: list[Word | str] = []
    for a in args:
        v = a.value or ""
        if v.startswith("@"):
            sent.append(v)
        elif "@" in v and not v.startswith("-") and "://" not in v:
            sent.append("@" + v.split("@", 1)[1].lstrip("@"))
    return _flows.sink(name, sent, cmd, ctx), False


def mail(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    sent: list[Word | str] = []
    for i, a in enumerate(args):
        if a.value in ("-a", "-A", "--attach") and i + 1 < len(args):
            sent.append(args[i + 1])
    return _flows.sink(name, sent, cmd, ctx), False


def openssl(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    sub = args[0].value if args else None
    if sub in ("s_client", "s_server"):
        return _flows.sink(name, [], cmd, ctx), False
    out: list[Finding] = []
    for i, a in enumerate(args):
        if a.value == "-out" and i + 1 < len(args):
            out += write_target(args[i + 1], ctx, truncate=True, what="openssl writes", by=name)
    return out, sub in ("version", "x509", "req", "verify", "list", "help") and not out


def lftp(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    sent: list[Word | str] = []
    for i, a in enumerate(args):
        if a.value in ("-e", "-c") and i + 1 < len(args):
            for part in (args[i + 1].value or "").split(";"):
                words = part.split()
                if len(words) >= 2 and words[0] in ("put", "mput", "reput"):
                    sent.append(words[-1])
    return _flows.sink(name, sent, cmd, ctx), False


HANDLERS: dict[str, Callable[[str, list[Word], Simple, Context], Result]] = {
    "curl": curl,
    "wget": wget,
    "nc": netcat,
    "ncat": netcat,
    "netcat": netcat,
    "telnet": netcat,
    "socat": socat,
    "ssh": ssh,
    "scp": scp,
    "sftp": scp,
    "http": httpie,
    "https": httpie,
    "xh": httpie,
    "mail": mail,
    "mailx": mail,
    "mutt": mail,
    "sendmail": mail,
    "msmtp": mail,
    "openssl": openssl,
    "lftp": lftp,
}
