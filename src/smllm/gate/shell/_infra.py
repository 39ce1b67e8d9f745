# ruff: noqa: PLR0911 - command lines are case analyses
"""Clusters, clouds, containers and hosting platforms: what others depend on.

Every program here is read past its global options (``aws --region x s3 rm``,
``gh -R o/r repo delete``): the table ``_GLOBALS`` lists the options that take a value.
Tearing down what others depend on (``gh repo delete``, ``aws s3 rb``, a database
instance) is denied; deleting single resources and publishing releases escalate;
copying a secret to a bucket or a gist is exfiltration. Clusters, containers and
infrastructure tools whose rules are only prefixes (kubectl, helm, terraform, pulumi,
docker, ...) are rows of the program table (:mod:`._tabledata`).
"""

from __future__ import annotations

from smllm.gate.shell import _flows
from smllm.gate.shell._model import Context, Finding
from smllm.gate.shell._parse import Simple, Word
from smllm.gate.shell._table import read_argv

TYPE_CHECKING = False
if TYPE_CHECKING:

    Result = tuple[list[Finding], bool]


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_GLOBALS: dict[str, frozenset[str]] = {
    "gcloud": _set("--project --account --configuration --format --verbosity "
                   "--impersonate-service-account --billing-project --flags-file --flatten "
                   "--trace-token --zone --region"),
    "gsutil": _set("-o -h -u -p"),
    "az": _set("--subscription --output -o --query --only-show-errors -g --resource-group"),
    "doctl": _set("-t --access-token --context -o --output --config -c"),
    "heroku": _set("-a --app -r --remote"),
    "fly": _set("-a --app -c --config -t --access-token"),
    "flyctl": _set("-a --app -c --config -t --access-token"),
    "vercel": _set("--scope --token -t --cwd -A --local-config -Q --global-config"),
    "netlify": _set("--auth --site --filter"),
    "firebase": _set("--project -P --token --config"),
}


def _words(name: str, args: list[Word]) -> tuple[list[str], list[str]]:
    """(the operands after the global options, every value) of ``args``."""
    values = [a.value if a.value is not None else a.raw for a in args]
    return read_argv(values, _GLOBALS.get(name, ()))


def _deny(rule: str, reason: str) -> Result:
    return [Finding(rule, "deny", reason)], False


def _ask(rule: str, reason: str) -> Result:
    return [Finding(rule, "ask", reason)], False


def aws_rest(name: str, words: list[str], values: list[str], cmd: Simple, ctx: Context
             ) -> Result | None:
    """``aws s3 cp|mv|sync ... s3://``: what is sent to a bucket (the rules are the program
    table's, which read ``words``, the operands, and ``values``); None for anything else."""
    op = words[1] if len(words) > 1 and words[0] == "s3" else ""
    if op in ("cp", "mv", "sync") and len(words) >= 4 and words[-1].startswith("s3://"):
        out = _flows.sink("aws s3", words[2:-1], cmd, ctx)
        if op == "sync" and "--delete" in values:
            out.append(Finding("fs.sync-delete", "ask", "aws s3 sync --delete deletes "
                               "objects"))
        return out, False
    return None


def gcloud(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    words, values = _words(name, args)
    if name == "gsutil":
        sub = words[0] if words else ""
        if sub == "rb" or (sub == "rm" and any(v in ("-r", "-R", "-a", "-rf") for v in values)):
            return _deny("data.destroy", f"gsutil {sub} deletes bucket contents")
        if sub == "rm":
            return _ask("infra.delete", "gsutil rm deletes objects")
        if sub in ("cp", "mv", "rsync") and len(words) >= 3 and words[-1].startswith("gs://"):
            return _flows.sink("gsutil", words[1:-1], cmd, ctx), False
        return [], sub in ("ls", "cat", "du", "stat")
    if "delete" in words:
        if words[:2] in (["projects", "delete"],) or words[:3] in (
                ["sql", "instances", "delete"], ["storage", "buckets", "delete"],
                ["container", "clusters", "delete"], ["spanner", "instances", "delete"]):
            return _deny("data.destroy", f"gcloud {' '.join(words[:3])} destroys data")
        return _ask("infra.delete", f"gcloud {' '.join(words[:3])} deletes cloud resources")
    if words[:2] == ["storage", "rm"]:
        if any(v in ("-r", "--recursive") for v in values):
            return _deny("data.destroy", "gcloud storage rm -r deletes bucket contents")
        return _ask("infra.delete", "gcloud storage rm deletes objects")
    if words[:2] in (["storage", "cp"], ["storage", "mv"], ["storage", "rsync"]) and (
            len(words) >= 4 and words[-1].startswith("gs://")):
        return _flows.sink("gcloud storage", words[2:-1], cmd, ctx), False
    if words[:3] == ["secrets", "versions", "access"] or words[:2] == ["auth",
                                                                         "print-access-token"]:
        return _ask("exfil.read-credentials", f"gcloud {' '.join(words[:3])} prints a secret")
    return [], any(w in ("list", "describe") for w in words[:4])


def az(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    words, values = _words(name, args)
    if words[:2] == ["group", "delete"]:
        return _deny("data.destroy", "az group delete deletes every resource of the group")
    if any(w in ("delete", "delete-batch", "purge") for w in words):
        return _ask("infra.delete", f"az {' '.join(words[:3])} deletes cloud resources")
    if words[:3] in (["storage", "blob", "upload"], ["storage", "blob", "upload-batch"]):
        sent = [values[j + 1] for j, v in enumerate(values)
                if v in ("-f", "--file", "-s", "--source") and j + 1 < len(values)]
        return _flows.sink("az storage", sent, cmd, ctx), False
    if words[:3] == ["keyvault", "secret", "show"]:
        return _ask("exfil.read-credentials", "az keyvault secret show prints a secret")
    return [], any(w in ("list", "show") for w in words[:4])


def gh_rest(name: str, words: list[str], values: list[str], cmd: Simple, ctx: Context
            ) -> Result | None:
    """``gh gist create FILE`` and ``gh api``: what is sent (the rules are the program
    table's, which read ``words``, the operands, and ``values``); None for anything else."""
    if words[:2] == ["gist", "create"]:
        return _flows.sink(f"{name} gist create", words[2:], cmd, ctx), False
    if words[:1] == ["api"]:
        method = next((values[j + 1] for j, v in enumerate(values)
                       if v in ("-X", "--method") and j + 1 < len(values)), "GET")
        sent = [v.split("=", 1)[1] for j, v in enumerate(values)
                if j > 0 and values[j - 1] in ("-F", "--field") and "=@" in v]
        sent += [values[j + 1] for j, v in enumerate(values) if v == "--input"
                 and j + 1 < len(values)]
        out = _flows.sink(f"{name} api", sent, cmd, ctx)
        if method.upper() == "DELETE":
            out.append(Finding("infra.delete", "ask", f"{name} api -X DELETE deletes a "
                               "resource"))
        return out, False
    return None


def platform(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    """doctl, heroku, fly, vercel, netlify, firebase: deleting apps, sites, databases."""
    words, values = _words(name, args)
    text = " ".join(words[:3])
    teardown_forms = ("apps:destroy", "apps:delete", "pg:reset", "apps destroy", "destroy",
                      "sites:delete", "projects:delete", "database:remove", "pg:kill")
    if any(w in teardown_forms for w in words[:2]) or text.startswith(("apps destroy",
                                                                        "postgres destroy")):
        return _deny("data.destroy", f"{name} {text} deletes what others depend on")
    if name == "firebase" and words[:1] == ["firestore:delete"] and any(
            v in ("--all-collections", "-r", "--recursive") for v in values):
        return _deny("data.destroy", "firebase firestore:delete deletes collections")
    if any(w in ("delete", "rm", "remove", "destroy") or w.endswith((":delete", ":remove",
                                                                    ":destroy", ":disable"))
           for w in words[:3]):
        return _ask("infra.delete", f"{name} {text} deletes cloud resources")
    return [], False
