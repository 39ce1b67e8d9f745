"""Install and the native client (smllm.setup.install, smllm.worker.native): the client in
front of the Python hook where a compiler is found, the Python hook alone where none is,
and a client already built kept by an install that finds no compiler."""

from __future__ import annotations

from pathlib import Path

import pytest

from smllm.base.errors import InstallError
from smllm.setup import install
from smllm.worker import native

TEXT = "#!/usr/bin/python3 -IS\nprint('hook')\n"


@pytest.fixture
def exe(tmp_path: Path) -> Path:
    return tmp_path / "bin" / "smllm-hook"


def _no_compiler(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native, "compiler", lambda: None)


def test_with_a_compiler_the_client_stands_in_front_of_the_python_hook(exe: Path) -> None:
    if not install.native_client():
        pytest.fail("the tests need a C compiler (tests/system-packages.txt)")
    install.write_executable(exe, TEXT)
    assert (b"\x7fELF", TEXT) == (exe.read_bytes()[:4], install.python_hook(exe).read_text())
    assert native.is_current(exe, str(install.python_hook(exe)))


def test_without_a_compiler_smllm_hook_is_the_python_hook(
        exe: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_compiler(monkeypatch)
    install.write_executable(exe, TEXT)
    assert (TEXT, False) == (exe.read_text(), install.python_hook(exe).exists())


def test_an_install_that_finds_no_compiler_keeps_the_client_and_updates_the_hook(
        exe: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A later install run where PATH lacks the compiler does not swap the client for the
    script (which would change a watched file for nothing): the Python hook is updated."""
    install.write_executable(exe, TEXT)
    client = exe.read_bytes()
    _no_compiler(monkeypatch)
    assert "keep" == install._client_mode(exe)
    install.write_executable(exe, TEXT + "# newer\n")
    assert (client, TEXT + "# newer\n") == (exe.read_bytes(),
                                            install.python_hook(exe).read_text())


def test_a_client_that_fails_to_build_leaves_the_python_hook_as_smllm_hook(
        exe: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def broken(out: Path, hook: str, **kw: object) -> None:
        raise InstallError("cannot compile the native hook client: boom", "install gcc")

    monkeypatch.setattr(native, "build", broken)
    install.write_executable(exe, TEXT)
    assert TEXT == exe.read_text()
    assert "cannot compile the native hook client" in capsys.readouterr().err
