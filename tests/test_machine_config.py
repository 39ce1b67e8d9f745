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


def test_a_project_reads_its_own_config_and_the_users_only(tmp_path: Path) -> None:
    """Issue 19: a project's machines come from its own .smllm/config.toml and the user's
    config (when it names machines), never from a config in a subfolder or above the
    project, which the agent could have planted; the gate's second layer still finds the
    nearest one from a folder."""
    from smllm.base import paths

    project = tmp_path / "a"
    (project / ".smllm").mkdir(parents=True)
    own = project / ".smllm" / "config.toml"
    own.write_text("[machines]\nfiles = []\n")
    planted = project / "b" / ".smllm" / "config.toml"
    planted.parent.mkdir(parents=True)
    planted.write_text('[machines]\nfiles = ["evil.smllm.yaml"]\n')
    (tmp_path / ".smllm").mkdir()
    (tmp_path / ".smllm" / "config.toml").write_text('[machines]\nfiles = ["up.smllm.yaml"]\n')
    user = Path(paths.user_config_file())
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("# no machines\n")
    assert [str(own)] == machine.project_configs(str(project))
    assert [] == machine.project_configs(str(project / "b" / "c"))
    user.write_text("[machines]\nfiles = []\n")
    assert [str(own), str(user)] == machine.project_configs(str(project))
    assert str(project) == catalog.project_root(machine.project_configs(str(project)))
    deep = project / "b" / "c"
    deep.mkdir()
    assert (str(planted), str(own)) == (machine.nearest_config(str(deep)),
                                        machine.nearest_config(str(project)))


@pytest.mark.parametrize("name", ["../machines/m.smllm.yaml", "link.smllm.yaml",
                                  "/abs/m.smllm.yaml"])
def test_a_project_config_names_machine_files_inside_its_folder_only(tmp_path: Path,
                                                                      name: str) -> None:
    """Issue 19: a machine file a project's config names must lie in its .smllm/ folder
    (what smllm protects): one outside it, reached by a relative path, an absolute one or
    a link, is an error that says where to move it."""
    smllm_dir = tmp_path / ".smllm"
    smllm_dir.mkdir()
    (tmp_path / "machines").mkdir()
    (smllm_dir / "link.smllm.yaml").symlink_to(tmp_path / "machines" / "m.smllm.yaml")
    path = smllm_dir / "config.toml"
    path.write_text(f'[machines]\nfiles = ["{name}"]\n')
    with pytest.raises(ConfigError) as info:
        catalog.read_config(str(path))
    assert (str(path), f"machine file {name!r} is outside {smllm_dir}") == (
        info.value.where, info.value.what.split(" (at ")[0])
    assert f"move it into {smllm_dir}, the folder smllm protects" == info.value.fix

