"""`.smllm/config.toml`: finding it, reading it (tomllib, tomli on 3.10), errors."""


from __future__ import annotations

from pathlib import Path

import pytest

from smllm import machine
from smllm.base.errors import ConfigError
from smllm.machine import catalog

CONFIGS = [
    '[machines]\nfiles = ["fix.smllm.yaml"]\n',
    '# project machines\n[machines]\nfiles = [\n  "a.smllm.yaml",  # first\n  "b#c.yaml",\n]\n',
    "[machines]\nfiles = ['x.yaml', \"y.yaml\"]\n[other]\nname = \"z\"\n",
    "[machines]\nfiles = []\n",
]


@pytest.mark.parametrize("text", CONFIGS)
def test_every_documented_config_shape_reads(text: str, tmp_path: Path) -> None:
    """Every config shape the docs use names its machine files (comments, lists, sections)."""
    from smllm.base import tomlread

    path = tmp_path / "config.toml"
    path.write_text(text)
    names = tomlread.loads(text)["machines"]["files"]
    assert [str((tmp_path / n).resolve()) for n in names] == catalog.read_config(str(path))


@pytest.mark.parametrize(("text", "line", "what"), [
    ('[machines]\nfiles = "fix.smllm.yaml"\n', 2, "[machines] files must be a list of file names"),
    ("# mine\n[machines]\n\nfiles = [1]\n", 4, "[machines] files must be a list of file names"),
    ('[machines]\nfiles = [""]\n', 2, "[machines] files must be a list of file names"),
    ('[machines]\nfiles = []\nfile = "x.yaml"\n', 3, "unknown key 'file' in [machines]"),
    ("machines = 3\n", 1, "machines must be a table"),
    ("[machines\n", 1, "invalid TOML: Expected ']' at the end of a table declaration"),
])
def test_bad_config_is_a_config_error(tmp_path: Path, text: str, line: int, what: str) -> None:
    """A malformed config names itself, the line at fault and what is wrong (validated by
    the typed model: another feature's table is left alone)."""
    path = tmp_path / ".smllm" / "config.toml"
    path.parent.mkdir()
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        catalog.read_config(str(path))
    assert (f"{path}:{line}", what) == (info.value.where, info.value.what)


def test_nearest_config_upwards(tmp_path: Path) -> None:
    """The project config is the nearest .smllm/config.toml from the folder upwards."""
    (tmp_path / "a" / ".smllm").mkdir(parents=True)
    (tmp_path / "a" / ".smllm" / "config.toml").write_text("[machines]\nfiles = []\n")
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    assert [str(tmp_path / "a" / ".smllm" / "config.toml")] == machine.find_configs(str(deep))
    assert str(tmp_path / "a") == catalog.project_root(machine.find_configs(str(deep)))
