"""Which machines a project has: ``.smllm/config.toml`` → compiled machines, cached.

The hot path (hooks, ``smllm fire``) stats the config and machine files and reads
one cached JSON file; only when a stamp (path, mtime_ns, size) changed does it take
the slow path (tomllib, yaml, the schema: :mod:`smllm.machine.loader`) and rewrite
the cache under ``<state dir>/cache/machines``.
"""

from __future__ import annotations

from smllm.base import jsonfast, paths
from smllm.base import osfast as os
from smllm.base.digest import sha256_hex
from smllm.base.errors import ConfigError, MachineDefinitionError
from smllm.machine import CONFIG_DIR, locations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from smllm.base.shapes import Machines

CACHE_VERSION = 3


def project_root(configs: list[str]) -> str | None:
    """The folder holding the project's ``.smllm`` (where command guards run)."""
    for c in configs:
        folder = os.path.dirname(c)
        if os.path.basename(folder) == CONFIG_DIR:
            return os.path.dirname(folder)
    return None


def session_root(binding: dict[str, Any], fallback: str) -> str:
    """Where a session's command guards run and its tool rules' paths start: the project
    whose ``.smllm`` it was bound with, else the folder it was bound in (machines from the
    user's config only), never the folder a later fire happens to run in."""
    bound = binding.get("cwd")
    return project_root(list(binding.get("configs") or [])) or (
        bound if isinstance(bound, str) and bound else fallback)


def _stamp(path: str) -> list[Any] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [path, st.st_mtime_ns, st.st_size]


def _cache_file(configs: list[str]) -> str:
    """One cache file per list of configs: their paths, spelled safely (a digest if long)."""
    name = "!".join(configs).replace("%", "%25").replace(os.sep, "%2F").replace("!", "%21")
    if len(name) > 200:
        name = sha256_hex(name.encode("utf-8", "surrogateescape"))[:32]
    return os.path.join(locations.cache_dir(), "machines", f"{name}.json")


def load(configs: list[str]) -> Machines:
    """The machines the configs name, by id, in config order (compiled, cached)."""
    if not configs:
        return {}
    cache = _cache_file(configs)
    try:
        with open(cache, "rb") as f:
            data = jsonfast.loads(f.read())
    except (OSError, ValueError):
        data = None
    if (isinstance(data, dict) and data.get("v") == CACHE_VERSION
            and data.get("configs") == configs
            and all(_stamp(s[0]) == s for s in data["stamps"])):
        machines: Machines = data["machines"]
        return machines
    return _compile(configs, cache)


def parse_toml(path: str) -> tuple[dict[str, Any], str]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc}", "check the file") from None
    from smllm.base import tomlread  # noqa: PLC0415 - tomllib: a cache miss only

    try:
        text = data.decode("utf-8")
        doc: dict[str, Any] = tomlread.loads(text)
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8: {exc}", "re-save the file as UTF-8", where=path) from None
    except tomlread.TOMLDecodeError as exc:
        what, line = tomlread.error_at(exc)
        where = path if line is None else f"{path}:{line}"
        raise ConfigError(f"invalid TOML: {what}", "fix the TOML syntax", where=where) from None
    return doc, text


def read_config(path: str) -> list[str]:
    """The machine files a config names, as absolute paths (slow path: tomllib, pydantic).

    A project's config names files inside its own ``.smllm/`` folder only (what the agent
    cannot write), and leaves ``[guards]`` to the user's config."""
    doc, text = parse_toml(path)
    user = path == paths.user_config_file()
    if "guards" in doc and not user:
        raise ConfigError("[guards] is read from smllm's user config only, never a project's",
                          f"move it to {paths.user_config_file()}", where=path)
    try:
        from smllm.machine import _config  # noqa: PLC0415 - pydantic: a cache miss only
    except ImportError as exc:  # the plugin's python3 before its environment is built
        raise ConfigError(
            f"cannot validate {path}: {exc}",
            "install smllm's dependencies (pydantic); the plugin builds its environment "
            "in the background, so try again in a minute") from None
    config = _config.validate(doc, path, text)
    files = config.machines.files if config.machines is not None else []
    base = os.path.dirname(path)
    found = [os.path.realpath(os.path.join(base, f)) for f in files]
    if not user:
        inside = os.path.realpath(base) + os.sep
        for name, file in zip(files, found, strict=True):
            if not file.startswith(inside):
                raise ConfigError(
                    f"machine file {name!r} is outside {base} (at {file}): the agent may "
                    "be able to rewrite it", f"move it into {base}, the folder smllm "
                    "protects", where=path)
    return found


def _compile(configs: list[str], cache: str) -> Machines:
    from pathlib import Path  # noqa: PLC0415 - the slow path

    try:
        from smllm.machine import loader  # noqa: PLC0415 - yaml, jsonschema: a cache miss
    except ImportError as exc:  # the plugin's python3 before its environment is built
        raise ConfigError(
            f"cannot compile the state machines: {exc}",
            "install smllm's dependencies (PyYAML); the plugin builds its environment "
            "in the background, so try again in a minute") from None

    stamps: list[list[Any]] = []
    machines: Machines = {}
    for config in configs:
        stamp = _stamp(config)
        if stamp is None:
            raise ConfigError(f"config {config} no longer exists",
                              "restore it or start a new session")
        stamps.append(stamp)
        for file in read_config(config):
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
    _write_cache(cache, {"v": CACHE_VERSION, "configs": configs, "stamps": stamps,
                         "machines": machines})
    return machines


def _write_cache(cache: str, data: dict[str, Any]) -> None:
    try:
        locations.ensure(os.path.dirname(cache))
        paths.write_private(cache, jsonfast.dumps(data).encode("utf-8"))
    except OSError:
        pass  # a cache that cannot be written only costs speed
