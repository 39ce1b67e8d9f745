"""System, data and remote programs: services, signals, databases, clouds, ssh, containers."""

from __future__ import annotations

from smllm.gate.shell._analyse import judge_argv, nested, stdin_text
from smllm.gate.shell._model import IGNORECASE, Context, Finding, LazyRe
from smllm.gate.shell._model import re_lazy as re
from smllm.gate.shell._parse import Simple, Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Result = tuple[list[Finding], bool]

_SQL_DESTROY = LazyRe(
    r"\b(drop\s+(table|database|schema|index|view|collection|user)|"
    r"truncate\s+(table\s+)?\w|delete\s+from\s+\w+\s*(;|$)|"
    r"dropDatabase|\.drop\s*\(|flushall|flushdb)\b",
    IGNORECASE,
)


def _values(args: list[Word]) -> list[str]:
    return [a.value if a.value is not None else a.raw for a in args]


def _deny(rule: str, reason: str) -> Result:
    return [Finding(rule, "deny", reason)], False


def _ask(rule: str, reason: str) -> Result:
    return [Finding(rule, "ask", reason)], False


def crontab(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    if any(re.fullmatch(r"-[a-z]*r[a-z]*", v) for v in _values(args)):
        return _deny("sys.destroy", "crontab -r deletes every scheduled job")
    return [], False


def kill(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = _values(args)
    targets = [v for i, v in enumerate(values) if i > 0 or not v.startswith("-") or v == "-1"]
    if len(values) >= 2 and "-1" in targets[-1:]:
        return _deny("sys.destroy", "kill -1 signals every process you own")
    return [], False


def power(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    if "--help" in _values(args):
        return [], True
    if name in ("init", "telinit") and not set(_values(args)) & {"0", "6", "1", "s"}:
        return [], False
    return _deny("sys.destroy", f"{name} stops the machine")


def systemctl(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = [v.lower() for v in _values(args) if not v.startswith("-")]
    bad = {
        "stop",
        "disable",
        "mask",
        "kill",
        "poweroff",
        "reboot",
        "halt",
        "isolate",
        "rescue",
        "emergency",
        "kexec",
    }
    if name == "service" and len(values) >= 2 and values[1] in ("stop", "restart"):
        return _deny("sys.destroy", f"service {values[0]} {values[1]}")
    if name == "systemctl" and values and values[0] in bad:
        return _deny("sys.destroy", f"systemctl {values[0]} stops system services")
    return [], False


def database(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    text = " ".join(_values(args))
    body, _ = stdin_text(cmd)
    if body:
        text += "\n" + body
    m = _SQL_DESTROY.search(text)
    if m:
        return _deny("data.destroy", f"{name} {m.group(0).strip()} destroys data")
    return [], False


def kubectl(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = _values(args)
    if any(v.startswith("--dry-run") for v in values):
        return [], False
    sub = next((v for v in values if not v.startswith("-")), "")
    if sub in ("delete", "drain", "replace", "cordon", "scale"):
        return _ask("infra.delete", f"{name} {sub} changes or removes cluster resources")
    if sub in ("exec", "debug", "run", "attach"):
        out = [Finding("remote.exec", "ask", f"{name} {sub} runs commands in a container")]
        if "--" in values:
            inner = args[values.index("--") + 1 :]
            if inner:
                out += judge_argv(inner, cmd, ctx)[0]
        return out, False
    return [], sub in ("get", "describe", "logs", "version", "explain", "top")


def terraform(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = _values(args)
    sub = next((v for v in values if not v.startswith("-")), "")
    if sub == "destroy" or (sub == "apply" and "-destroy" in values):
        return _deny("data.destroy", f"{name} destroy tears down infrastructure")
    return [], False


def aws(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = [v for v in _values(args) if not v.startswith("--profile")]
    words = [v for v in values if not v.startswith("-")]
    if (words[:2] == ["s3", "rm"] and "--recursive" in values) or words[:2] == ["s3", "rb"]:
        return _deny("data.destroy", f"aws {' '.join(words[:2])} deletes bucket contents")
    if any(w.startswith(("delete", "terminate", "remove", "purge")) for w in words[1:3]):
        return _ask("infra.delete", f"aws {' '.join(words[:2])} deletes cloud resources")
    return [], False


def cloud(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = _values(args)
    if any(v in ("delete", "destroy", "purge", "rm") for v in values):
        return _ask("infra.delete", f"{name} deletes cloud resources")
    return [], False


def docker(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = _values(args)
    words = [v for v in values if not v.startswith("-")]
    if "prune" in words[:2]:
        if any(v.startswith("--filter") for v in values):
            return [], False
        return _ask("infra.delete", f"{name} {' '.join(words[:2])} deletes unused data")
    if words[:1] in (["rm"], ["rmi"]) or words[1:2] == ["rm"]:
        return _ask("infra.delete", f"{name} {' '.join(words[:2])} removes containers or data")
    if words[:1] in (["run"], ["exec"], ["compose"]) and words[:1] != ["compose"]:
        return _ask("remote.exec", f"{name} {words[0]} runs commands in a container")
    return [], words[:1] in (["ps"], ["images"], ["logs"], ["inspect"], ["version"])


_SSH_ARG = frozenset(
    [
        "-p",
        "-i",
        "-l",
        "-o",
        "-F",
        "-J",
        "-L",
        "-R",
        "-D",
        "-b",
        "-c",
        "-e",
        "-m",
        "-O",
        "-Q",
        "-S",
        "-W",
        "-w",
        "-E",
        "-B",
        "-I",
    ]
)


def ssh(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    i = 0
    while i < len(args):
        v = args[i].value or ""
        if v in _SSH_ARG:
            i += 2
            continue
        if v.startswith("-"):
            i += 1
            continue
        break
    rest = args[i + 1 :]
    if not rest:
        return [], False
    values = [a.value for a in rest]
    out = [Finding("remote.exec", "ask", f"{name} runs a command on another machine")]
    if all(v is not None for v in values):
        out += nested(" ".join(v for v in values if v is not None), ctx, f"{name} remote")
    return out, False


def redis(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    if any(v.lower() in ("flushall", "flushdb") for v in _values(args)):
        return _deny("data.destroy", "redis-cli FLUSHALL deletes every key")
    return [], False


HANDLERS: dict[str, Callable[[str, list[Word], Simple, Context], Result]] = {
    "crontab": crontab,
    "kill": kill,
    "shutdown": power,
    "reboot": power,
    "halt": power,
    "poweroff": power,
    "init": power,
    "telinit": power,
    "systemctl": systemctl,
    "service": systemctl,
    "kubectl": kubectl,
    "oc": kubectl,
    "terraform": terraform,
    "tofu": terraform,
    "aws": aws,
    "gcloud": cloud,
    "az": cloud,
    "gsutil": cloud,
    "docker": docker,
    "podman": docker,
    "ssh": ssh,
    "redis-cli": redis,
    **{
        d: database
        for d in (
            "psql",
            "mysql",
            "mariadb",
            "sqlite3",
            "mongo",
            "mongosh",
            "clickhouse-client",
            "cockroach",
            "sqlcmd",
        )
    },
}
