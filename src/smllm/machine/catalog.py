"""Which machines a project has: ``.smllm/config.toml`` → compiled machines, cached.

The hot path (hooks, ``smllm fire``) stats the config and machine files and reads
one cached JSON file; only when a stamp (path, mtime_ns, size) changed does it take
the slow path (tomllib, yaml, the schema: :mod:`smllm.machine.loader`) and rewrite
the cache under ``paths.cache_dir()/machines``.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from smllm import paths
from smllm.errors import ConfigError, MachineDefinitionError

CONFIG_DIR = ".smllm"
CONFIG_NAME = "config.toml"
CACHE_VERSION = 3

Machines = dict[str, dict[str, Any]]


def find_configs(cwd: str) -> list[str]:
    """The project config (nearest ``.smllm/config.toml`` upwards) and the user config."""
    found: list[str] = []
    cur = Path(cwd).absolute()
    for d in (cur, *cur.parents):
        cand = d / CONFIG_DIR / CONFIG_NAME
        if cand.is_file():
            found.append(str(cand))
            break
    user = paths.config_dir() / CONFIG_NAME
    if user.is_file() and str(user) not in found and _has_machines(user):
        found.append(str(user))
    return found


def _has_machines(path: Path) -> bool:
    try:
        return b"[machines]" in path.read_bytes()
    except OSError:
        return False


def project_root(configs: list[str]) -> str | None:
    """The folder holding the project's ``.smllm`` (where command guards run)."""
    for c in configs:
        p = Path(c)
        if p.parent.name == CONFIG_DIR:
            return str(p.parent.parent)
    return None


def _stamp(path: str) -> list[Any] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [path, st.st_mtime_ns, st.st_size]


def _cache_file(configs: list[str]) -> Path:
    digest = hashlib.sha256(json.dumps(configs).encode()).hexdigest()[:24]
    return paths.cache_dir() / "machines" / f"{digest}.json"


def load(configs: list[str]) -> Machines:
    """The machines the configs name, by id, in config order (compiled, cached)."""
    if not configs:
        return {}
    cache = _cache_file(configs)
    try:
        data = json.loads(cache.read_bytes())
    except (OSError, ValueError):
        data = None
    if (isinstance(data, dict) and data.get("v") == CACHE_VERSION
            and all(_stamp(s[0]) == s for s in data["stamps"])):
        machines: Machines = data["machines"]
        return machines
    return _compile(configs, cache)


def _read_config(path: str) -> list[str]:
    if sys.version_info >= (3, 11):
        import tomllib  # noqa: PLC0415
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[import-not-found,no-redef,unused-ignore]  # noqa: PLC0415
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc}", "check the file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{exc}", "fix the TOML syntax", where=path) from None
    section = doc.get("machines", {})
    files = section.get("files", []) if isinstance(section, dict) else None
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise ConfigError("[machines] files must be a list of file names",
                          'write files = ["fix.smllm.yaml"] (relative to the config\'s folder)',
                          where=path)
    base = Path(path).parent
    return [str((base / f).resolve()) for f in files]


def _compile(configs: list[str], cache: Path) -> Machines:
    from smllm.machine import loader  # noqa: PLC0415 - the slow path

    stamps: list[list[Any]] = []
    machines: Machines = {}
    for config in configs:
        stamp = _stamp(config)
        if stamp is None:
            raise ConfigError(f"config {config} no longer exists", "restore it or start a "
                              "new session")
        stamps.append(stamp)
        for file in _read_config(config):
            machine = loader.load(Path(file))
            if machine["id"] in machines:
                other = machines[machine["id"]]["file"]
                raise MachineDefinitionError(
                    f"machine id {machine['id']!r} is also defined in {other}",
                    "give each machine its own id", where=file)
            machines[machine["id"]] = machine
            file_stamp = _stamp(file)
            if file_stamp is not None:
                stamps.append(file_stamp)
    _write_cache(cache, {"v": CACHE_VERSION, "stamps": stamps, "machines": machines})
    return machines


def _write_cache(cache: Path, data: dict[str, Any]) -> None:
    try:
        paths.ensure_private_tree(cache.parent, paths.state_dir())
        tmp = cache.with_name(f".{cache.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        os.chmod(tmp, paths.FILE_MODE)
        os.replace(tmp, cache)
    except OSError:
        pass  # a cache that cannot be written only costs speed
