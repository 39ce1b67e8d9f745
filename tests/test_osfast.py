"""``smllm.base.osfast`` gives the hot path ``os`` without importing it: each function the
hooks call must answer as ``os``/``posixpath`` does, for every path of a corpus and over a
tree of links, and its ``environ`` must be the one ``os.environ`` and child processes see."""

from __future__ import annotations

import ast
import os
import posixpath
import subprocess
import sys
from pathlib import Path

import pytest

from smllm.base import osfast

#: paths as they come from tool inputs and settings: relative, absolute, doubled and
#: trailing slashes, dots, parents above the root, a home, two and three leading slashes
CORPUS = ["", ".", "..", "/", "//", "///", "a", "a/", "a//b", "/a/b/", "a/./b", "a/../b",
          "../a", "../../a/b", "/..", "/../a", "//a/b", "///a//b/", "a/b/..", "a/b/../..",
          "a/b/../../..", "./", ".a", "a.", "~", "~/x", "~/", "~root", "~root/x", "~nobody1x/y",
          "/a/./../b/./c/..", "a//./..//b", "é/ü", "a b/c d", "\udcff/x", "/tmp/x/../../../etc",
          ".claude/settings.json", "/work/p/.smllm/../.claude/hooks/../../x"]
PAIRS = [(a, b) for a in ["", "a", "/a", "a/", "/", "//"] for b in ["", "b", "/b", "b/", "..", "."]]


@pytest.mark.parametrize("p", CORPUS)
@pytest.mark.parametrize("name", ["split", "dirname", "basename", "normpath", "isabs",
                                  "abspath", "expanduser"])
def test_a_pure_path_function_answers_as_posixpath(name: str, p: str) -> None:
    assert getattr(posixpath, name)(p) == getattr(osfast.path, name)(p)


@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_join_answers_as_posixpath(a: str, b: str) -> None:
    assert posixpath.join(a, b) == osfast.path.join(a, b)
    assert posixpath.join(a, b, "c") == osfast.path.join(a, b, "c")
    assert posixpath.join(a) == osfast.path.join(a)


@pytest.mark.parametrize("p", [p for p in CORPUS if p])
@pytest.mark.parametrize("start", [None, "/", "a", "/a/b", "../x"])
def test_relpath_answers_as_posixpath(p: str, start: str | None) -> None:
    assert posixpath.relpath(p, start) == osfast.path.relpath(p, start)


def test_relpath_refuses_an_empty_path_as_posixpath_does() -> None:
    with pytest.raises(ValueError, match="no path specified"):
        osfast.path.relpath("")


def test_normpath_without_the_c_helper_answers_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """Python 3.10 has no ``posix._path_normpath``: the module's own loop answers."""
    monkeypatch.setattr(osfast, "_path_normpath", None)
    assert [posixpath.normpath(p) for p in CORPUS] == [osfast.path.normpath(p) for p in CORPUS]


def test_expanduser_without_home_asks_the_password_database(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HOME")
    assert posixpath.expanduser("~/x") == osfast.path.expanduser("~/x")
    assert osfast.path.expanduser("~/x") != "~/x"


@pytest.fixture
def links(tmp_path: Path) -> Path:
    """A tree with a file, a folder, relative and absolute links, a dangling link, a link
    to a link, a link through a parent, and a loop."""
    (tmp_path / "d" / "e").mkdir(parents=True)
    (tmp_path / "d" / "f.txt").write_text("x")
    (tmp_path / "rel").symlink_to("d/e")
    (tmp_path / "abs").symlink_to(tmp_path / "d")
    (tmp_path / "dangling").symlink_to("nowhere/at/all")
    (tmp_path / "chain").symlink_to("abs")
    (tmp_path / "d" / "e" / "up").symlink_to("../f.txt")
    (tmp_path / "loop1").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop1")
    (tmp_path / "self").symlink_to("self/x")
    return tmp_path


TREE = ["d", "d/", "d/f.txt", "d/f.txt/", "d/e/..", "rel", "rel/..", "rel/up", "rel/up/..",
        "abs/f.txt", "abs/e/up", "chain/e", "chain/../d", "dangling", "dangling/x",
        "loop1", "loop1/x", "self", "self/y", "missing", "missing/../d", ".", "..", "rel/../..",
        "d\x00x"]


@pytest.mark.parametrize("rel", TREE)
def test_realpath_and_the_stat_questions_answer_as_os_over_a_tree_of_links(
        links: Path, rel: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(links)
    for p in (rel, str(links / rel)):
        for name in ("exists", "lexists", "isfile", "isdir", "islink"):
            assert getattr(posixpath, name)(p) == getattr(osfast.path, name)(p), (name, p)
        if "\x00" in p:
            with pytest.raises(ValueError, match="null"):
                osfast.path.realpath(p)
            continue
        assert posixpath.realpath(p) == osfast.path.realpath(p), p


def test_getsize_and_makedirs_behave_as_os(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"12345")
    assert osfast.path.getsize(tmp_path / "f") == 5
    deep = tmp_path / "a" / "b" / "c"
    osfast.makedirs(deep, 0o700)
    assert deep.is_dir()
    assert (deep.stat().st_mode & 0o777) == 0o700
    osfast.makedirs(str(deep) + "/", exist_ok=True)
    with pytest.raises(FileExistsError):
        osfast.makedirs(deep)
    with pytest.raises(FileExistsError):
        osfast.makedirs(tmp_path / "f", exist_ok=True)  # a file is not a folder


def test_environ_is_the_dict_os_environ_wraps(monkeypatch: pytest.MonkeyPatch) -> None:
    """A variable set through either is seen by the other and by a child process; one
    removed through osfast is gone from both."""
    monkeypatch.setenv("SMLLM_OSFAST_A", "from os")
    assert osfast.environ.get("SMLLM_OSFAST_A") == "from os"
    assert "SMLLM_OSFAST_A" in osfast.environ
    assert "SMLLM_OSFAST_A" in list(osfast.environ)
    osfast.environ["SMLLM_OSFAST_B"] = "from osfast é"
    try:
        assert os.environ["SMLLM_OSFAST_B"] == "from osfast é"
        child = subprocess.run(["/bin/sh", "-c", 'printf %s "$SMLLM_OSFAST_B"'],
                               env=None, capture_output=True, check=True).stdout
        assert child.decode() == "from osfast é"
        assert osfast.environ.pop("SMLLM_OSFAST_B") == "from osfast é"
        assert "SMLLM_OSFAST_B" not in os.environ
        child = subprocess.run(["/bin/sh", "-c", 'printf %s "${SMLLM_OSFAST_B-unset}"'],
                               capture_output=True, check=True).stdout
        assert child == b"unset"
    finally:
        os.environ.pop("SMLLM_OSFAST_B", None)
    assert osfast.environ.pop("SMLLM_OSFAST_B", "gone") == "gone"
    assert osfast.environ.get("SMLLM_OSFAST_NEVER") is None
    with pytest.raises(KeyError):
        osfast.environ["SMLLM_OSFAST_NEVER"]
    assert dict(os.environ) == osfast.environ.copy()
    assert len(os.environ) == len(osfast.environ)


def test_a_hook_process_never_imports_os() -> None:
    """The point of the module: loading it (and the path functions) imports neither ``os``
    nor ``_collections_abc`` (a quarter of an interpreter start between them)."""
    src = str(Path(osfast.__file__).resolve().parents[2])
    code = (f"import sys; sys.path.insert(0, {src!r})\n"
            "from smllm.base import osfast as os\n"
            "os.path.realpath(os.path.join(os.getcwd(), os.path.expanduser('~/x')))\n"
            "os.environ.get('HOME'); os.makedirs('/', exist_ok=True)\n"
            "print(sorted({'os', '_collections_abc', 'posixpath'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True,
                         check=True, text=True).stdout
    assert out.strip() == "[]"


def test_every_name_os_takes_from_posix_is_here_and_the_same_object() -> None:
    """``getattr(os, "O_NONBLOCK", 0)`` must find the flag here as in ``os``: a missing
    name would quietly turn a non-blocking open of a planted FIFO into one that hangs."""
    import posix

    names = [n for n in dir(posix) if not n.startswith("_") and n != "environ"]
    assert len(names) > 200
    assert [] == [n for n in names if getattr(osfast, n, None) is not getattr(os, n)]


SRC = Path(osfast.__file__).resolve().parents[1]
#: named only in annotations (strings at run time): the type checker sees os's own
TYPE_ONLY = {"PathLike", "stat_result"}


def _os_names(tree: ast.AST) -> set[str]:
    """``os.NAME`` and ``getattr(os, "NAME")``/``hasattr(os, "NAME")`` in a module."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == "os":
            found.add(node.attr)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2 \
                and isinstance(node.args[0], ast.Name) and node.args[0].id == "os" \
                and isinstance(node.args[1], ast.Constant):
            found.add(str(node.args[1].value))
    return found


def _uses_osfast(tree: ast.AST) -> bool:
    return any(isinstance(n, ast.ImportFrom) and n.module == "smllm.base"
               and any(a.name == "osfast" and a.asname == "os" for a in n.names)
               for n in ast.walk(tree))


def test_every_os_name_a_module_uses_through_osfast_exists() -> None:
    """Each ``os.NAME`` a module reaches through osfast exists there: a module moved to
    osfast that calls a function osfast lacks fails here, not in a hook at run time."""
    missing = {}
    modules = 0
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text())
        if not _uses_osfast(tree):
            continue
        modules += 1
        absent = sorted(n for n in _os_names(tree) - TYPE_ONLY if not hasattr(osfast, n))
        if absent:
            missing[str(path.relative_to(SRC))] = absent
    assert modules > 40
    assert {} == missing
