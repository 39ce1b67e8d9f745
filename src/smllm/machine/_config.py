"""A ``config.toml`` as a typed model (pydantic), validated when machines are compiled.

Slow path only (:func:`smllm.machine.catalog.read_config`): the hooks read the compiled
machines from the cache and never import pydantic. Other features keep their own tables
in the same file, so only ``[machines]`` is checked key by key; a mistake becomes one
``ConfigError`` at the ``file:line`` of the key at fault.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from smllm.base.errors import ConfigError

FILES_FIX = 'write files = ["fix.smllm.yaml"] (relative to the config\'s folder)'


class MachinesSection(BaseModel):
    """``[machines]``: the machine files of this config, relative to its folder."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    files: list[Annotated[str, Field(min_length=1)]] = []


class ConfigFile(BaseModel):
    """One ``config.toml``; tables of other features are let through untouched."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)
    machines: MachinesSection | None = None


def _line(text: str, key: str | None) -> int:
    """The line of ``[machines]`` (or of ``key`` inside it, else of ``machines = ...``)."""
    lines = text.splitlines()
    header = next((i for i, ln in enumerate(lines)
                   if re.match(r"\s*\[\s*machines\s*\]", ln)), None)
    if header is None:
        return next((i + 1 for i, ln in enumerate(lines)
                     if re.match(r"\s*machines\s*[=.]", ln)), 1)
    if key is not None:
        for i in range(header + 1, len(lines)):
            if re.match(r"\s*\[", lines[i]):
                break
            if re.match(rf"\s*{re.escape(key)}\s*=", lines[i]):
                return i + 1
    return header + 1


def validate(doc: dict[str, Any], path: str, text: str) -> ConfigFile:
    """The typed config, or a ``ConfigError`` for its first mistake, at its line."""
    try:
        return ConfigFile.model_validate(doc)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
    loc = tuple(error["loc"])
    key = str(loc[1]) if len(loc) > 1 else None
    where = f"{path}:{_line(text, key)}"
    if error["type"] == "extra_forbidden":
        raise ConfigError(f"unknown key {key!r} in [machines]", "use one of: files",
                          where=where) from None
    if key is None:
        raise ConfigError("machines must be a table", f"write [machines], then {FILES_FIX}",
                          where=where) from None
    raise ConfigError("[machines] files must be a list of file names", FILES_FIX,
                      where=where) from None
