"""The hand-written matchers on the analyser's hot path equal the regular expressions they
replace (``re`` costs half an interpreter start, so common commands must not need it)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from smllm.gate.shell import _analyse, _model, _parse, _programs

shellish = st.text(alphabet="aZ_09=+[]{}-.c$x/ é", max_size=12)


@settings(max_examples=500)
@given(shellish)
def test_is_assignment(word: str) -> None:
    """NAME=, NAME+=, NAME[sub]= exactly as the regular expression says."""
    expected = re.match(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=", word) is not None
    assert expected == _parse.is_assignment(word)


@settings(max_examples=500)
@given(shellish, st.integers(0, 4))
def test_fd_prefix(text: str, i: int) -> None:
    """A redirect's descriptor prefix: digits or {name}."""
    m = re.compile(r"[0-9]+|\{[A-Za-z_][A-Za-z0-9_]*\}").match(text, i)
    assert (m.end() if m else None) == _parse._fd_prefix_end(text, i)


@settings(max_examples=500)
@given(shellish)
def test_small_matchers(word: str) -> None:
    """Lowercase assignments, short-flag bundles, version suffixes, descriptor targets."""
    assert (re.fullmatch(r"[a-z_][a-z0-9_]*=.*", word, re.DOTALL) is not None) == \
        _model.is_lower_assignment(word)
    assert (re.fullmatch(r"-[a-zA-Z]*c", word) is not None) == _model.is_short_flags(word, "c")
    assert re.sub(r"[0-9.]+$", "", word) == _model.strip_version(word)
    assert (re.fullmatch(r"[0-9]+-?|-", word) is not None) == _analyse._fd_duplication(word)


@given(st.sampled_from(["python", "python3", "python3.11", "pypy3", "node", "nodejs", "node18",
                        "deno", "bun", "ruby2.7", "perl", "php8", "lua", "luajit2.1", "rscript",
                        "tclsh", "osascript", "pwsh", "powershell", "pythonx", "bash", "git",
                        "mkfs.ext4", "npm", "py"]))
def test_interpreter_family(name: str) -> None:
    """Which program names are interpreters whose inline code is analysed."""
    expected = re.fullmatch(
        r"python[0-9.]*|pypy[0-9.]*|node(js)?|deno|ruby[0-9.]*|perl[0-9.]*|"
        r"php[0-9.]*|lua(jit)?[0-9.]*|rscript|tclsh|osascript|pwsh|powershell", name) is not None
    assert expected == (_programs.family_of(name) == _programs.family_of("python"))


def test_common_commands_need_no_regular_expression() -> None:
    """Analysing everyday commands never imports ``re`` (checked in a fresh interpreter)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from smllm.gate.shell import analyse\n"
        "for c in ['git status && ls -la | head', 'pytest -q tests/x.py', 'python3 x.py',\n"
        "          'rm -rf stale_cache.txt', 'cat a | grep foo > out.txt', 'npm run build 2>&1',\n"
        "          'cd src && python -m pytest', 'echo $(date)']:\n"
        "    analyse(c, cwd='/tmp/p')\n"
        "print('re' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "False\n" == out.stdout


FRAGMENTS = [
    "os.", "os . ", "remove", "unlink(", ".unlink(", "rmdir", "removedirs", "truncate(", "rmtree",
    "fs.", "fs . rm", "promises.rm", "rm_rf", "rm_r", "FileUtils.rm", "remove_tree", "File.delete",
    "Dir.delete", "Remove-Item", "Clear-Content", "Format-Volume", "del /", "send2trash", "shred",
    "rmSync", "rmdirSync", "unlinkSync", "system(", "os.system", "popen(", "os.popen", "execv",
    "spawnl", "subprocess", "pty.spawn", "commands.", "child_process", "execSync", "spawnSync",
    "execFile", "exec(", "%x{", "IO.popen", "Open3", "qx(", "passthru", "shell_exec",
    "proc_open", "Start-Process", "Invoke-Expression", " iex ", "`ls`", "spawn(", "__import__",
    "eval(", "compile(", "getattr(", "importlib", "b64decode", "base64", "codecs.decode",
    "marshal", "pickle.loads", "Function(", "require(x", "send(", "instance_eval", "class_eval",
    "String.fromCharCode", "print(", " ", "\n", "x", "(", ")", "'", '"', ".", "REMOVE", "Rmtree",
    "appendFileSync", "writeFileSync(", "File.write", "FileUtils.mv(", "file_put_contents",
    "open(", "Set-Content", "fetch(", "Net::HTTP", "XMLHttpRequest", "axios", "socket",
    "cpSync(", "FileUtils.ln_s", "Invoke-WebRequest", "https.request", "LWP",
]


@settings(max_examples=1500)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=6).map("".join))
def test_hinted_patterns_match_like_their_regex(code: str) -> None:
    """A pattern's hints never hide a match: search() equals the bare regular expression."""
    from smllm.gate.shell import _codescan

    for lazy in (_codescan.DESTRUCTIVE_API, _codescan.SHELL_API, _codescan.DYNAMIC_API,
                 _codescan.WRITE_API, _codescan.NETWORK_API):
        expected = re.search(lazy.pattern, code, lazy.flags) is not None
        assert expected == (lazy.search(code) is not None), (lazy.pattern[:30], code)
