"""State machines (seed 001): loader, engine, audit, and the hooks' view of them."""

from __future__ import annotations

from smllm.base import osfast as os
from smllm.base import paths
from smllm.base.errors_hot import SmllmError

#: the harness name in bindings and audit lines
HARNESS = "claude"


CONFIG_DIR = ".smllm"
CONFIG_NAME = "config.toml"


def project_configs(project: str) -> list[str]:
    """The configs whose machines a session of ``project`` runs: the project's own
    ``.smllm/config.toml`` (in the protected set) and the user's ``config.toml`` when it
    names machines. Never a config in a subfolder or above the project: a plain ``smllm
    fire`` runs outside the agent's sandbox, so it must not load one the agent planted
    (docs/security.md)."""
    found: list[str] = []
    own = os.path.join(os.path.abspath(project), CONFIG_DIR, CONFIG_NAME)
    if os.path.isfile(own):
        found.append(own)
    user = paths.user_config_file()
    if os.path.isfile(user) and user not in found and _has_machines(user):
        found.append(user)
    return found


def nearest_config(cwd: str) -> str | None:
    """The nearest ``.smllm/config.toml`` at or above ``cwd``: what an smllm before issue 19
    loaded from the shell's folder. Only the gate's second layer asks it (a plain fire run
    where one lies outside the protected set is denied); nothing loads it."""
    cur = os.path.abspath(cwd)
    while True:
        cand = os.path.join(cur, CONFIG_DIR, CONFIG_NAME)
        if os.path.isfile(cand):
            return cand
        parent = os.path.dirname(cur)
        if parent == cur:
            return None
        cur = parent


def _has_machines(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return b"[machines]" in f.read()
    except OSError:
        return False


def binding_file(harness: str, host: str) -> str:
    """Where the smllm session key bound to a host session is kept.

    Light on purpose: the hooks check it before importing the rest of the package.
    """
    return os.path.join(paths.state_root(), "bindings", paths.check_id(harness, "harness"),
                        f"{paths.check_id(host, 'host session id')}.key")


def is_bound(host: str, harness: str = HARNESS) -> bool:
    """Is this host session (Claude Code's, or ``harness``'s) bound to an smllm session (was
    a machine ever in play)?"""
    try:
        return os.path.exists(binding_file(harness, host))
    except ValueError:
        return False


def check(project: str) -> list[str]:
    """Every problem of the machines configured for ``project`` (``file:line:col: what
    (how to fix)``), for ``smllm doctor``. Slow path: it compiles them all."""
    from pathlib import Path  # noqa: PLC0415 - slow path

    from smllm.machine import catalog, loader  # noqa: PLC0415 - doctor only: compiles every machine

    configs = project_configs(project)
    problems: list[str] = []
    for config in configs:
        try:
            files = catalog.read_config(config)
        except SmllmError as exc:
            problems.append(exc.render())
            continue
        for file in files:
            try:
                loader.load(Path(file))
            except SmllmError as exc:
                problems.append(exc.render())
    if not problems:
        try:
            catalog.load(configs)  # what only the whole set shows (an id defined twice)
        except SmllmError as exc:
            problems.append(exc.render())
    return problems
