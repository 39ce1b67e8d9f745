"""Python code read as Python: what it runs, deletes, moves, writes and sends.

The code is parsed (:mod:`ast`, imported only when the code mentions something worth
reading) and every call is resolved through the imports and simple assignments, so
``from os import system as s; s(…)``, ``import shutil as sh; sh.rmtree(…)`` and
``p = Path.home() / ".bashrc"; p.write_text(…)`` are seen for what they call. Path
arguments are evaluated when they are built from literals, ``~``, the home folder,
``os.path.join``, ``pathlib`` and f-strings; a delete or move whose path cannot be
told escalates ("cannot tell"), a write is judged by what is known of its folder.
Code that builds code (``eval``, ``exec``, ``__import__`` of a variable, ``getattr``
with a computed name) escalates.
"""

from __future__ import annotations

import ast

from smllm.gate.shell._analyse import delete_target, judge_argv, nested, write_target
from smllm.gate.shell._model import Context, Finding
from smllm.gate.shell._parse import Simple, Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

_SHELL = {"os.system": "shell", "os.popen": "shell", "subprocess.getoutput": "shell",
          "subprocess.getstatusoutput": "shell", "commands.getoutput": "shell",
          "asyncio.create_subprocess_shell": "shell", "pty.spawn": "argv",
          "subprocess.run": "auto", "subprocess.call": "auto", "subprocess.check_call": "auto",
          "subprocess.check_output": "auto", "subprocess.Popen": "auto",
          "asyncio.create_subprocess_exec": "args", "os.execv": "args", "os.execvp": "args",
          "os.execve": "args", "os.execl": "args", "os.execlp": "args", "os.spawnl": "args",
          "os.spawnlp": "args", "os.spawnv": "args", "os.spawnvp": "args",
          "os.posix_spawn": "args", "os.posix_spawnp": "args", "sh.Command": "argv"}
_DELETE = {"os.remove": False, "os.unlink": False, "os.rmdir": False, "os.removedirs": True,
           "shutil.rmtree": True, "send2trash.send2trash": True, "os.truncate": False,
           "pathlib.Path.unlink": False, "pathlib.Path.rmdir": False}
_MOVE = ("os.rename", "os.replace", "os.renames", "shutil.move", "pathlib.Path.rename",
         "pathlib.Path.replace")
_COPY = ("shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.copytree",
         "shutil.copymode", "os.symlink", "os.link", "pathlib.Path.symlink_to",
         "pathlib.Path.hardlink_to")
_WRITE_METHODS = ("write_text", "write_bytes", "touch", "mkdir", "chmod", "symlink_to")
_NETWORK = ("requests.", "httpx.", "urllib.request.", "urllib3.", "http.client.", "socket.",
            "smtplib.", "ftplib.", "paramiko.", "aiohttp.", "pycurl.", "boto3.", "telnetlib.")
_DYNAMIC = ("eval", "exec", "compile", "__import__", "importlib.import_module",
            "marshal.loads", "pickle.loads", "runpy.run_path", "runpy.run_module",
            "types.FunctionType", "ctypes.CDLL", "builtins.exec", "builtins.eval")
_HOME_CALLS = ("pathlib.Path.home", "os.path.expanduser")


class PathValue:
    """A path built by the code: its text and whether all of it is known."""

    __slots__ = ("complete", "text")

    def __init__(self, text: str, complete: bool) -> None:
        self.text = text
        self.complete = complete


class _Reader:
    def __init__(self, ctx: Context, where: str) -> None:
        self.ctx = ctx
        self.where = where
        self.names: dict[str, str] = {"open": "open", "Path": "pathlib.Path"}
        self.paths: dict[str, ast.expr | None] = {}
        self.out: list[Finding] = []
        self.reads: list[str] = []
        self.network: str | None = None

    # ------------------------------------------------------------ names

    def qualify(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return self.names.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.qualify(node.value)
            if base is None:
                value = self.value(node.value)
                return f"pathlib.Path.{node.attr}" if value is not None else None
            return f"{base}.{node.attr}"
        if isinstance(node, ast.Call):
            inner = self.qualify(node.func)
            if inner in ("pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath"):
                return "pathlib.Path()"
            if inner in ("__import__", "importlib.import_module") and node.args and isinstance(
                    node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                return node.args[0].value
        return None

    def bind(self, tree: ast.AST) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.names[(a.asname or a.name).split(".")[0]] = (
                        a.name if a.asname else a.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    self.names[a.asname or a.name] = f"{node.module}.{a.name}"
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                    node.targets[0], ast.Name):
                name = node.targets[0].id
                if isinstance(node.value, (ast.Name, ast.Attribute)):
                    qual = self.qualify(node.value)
                    if qual and "." in qual:
                        self.names[name] = qual
                self.paths[name] = node.value if name not in self.paths else None
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if isinstance(item.optional_vars, ast.Name):
                        self.paths[item.optional_vars.id] = None

    # ------------------------------------------------------------ values

    def value(self, node: ast.expr | None, depth: int = 0) -> PathValue | None:
        """The path text ``node`` builds (None: nothing known about it)."""
        if node is None or depth > 12:
            return None
        reader = _VALUES.get(type(node))
        return reader(self, node, depth) if reader is not None else None

    def _constant_value(self, node: ast.expr, depth: int) -> PathValue | None:
        assert isinstance(node, ast.Constant)
        return PathValue(node.value, True) if isinstance(node.value, str) else None

    def _fstring_value(self, node: ast.expr, depth: int) -> PathValue | None:
        """An f-string: known up to its first unknown part."""
        assert isinstance(node, ast.JoinedStr)
        parts: list[str] = []
        for v in node.values:
            part = self.value(v.value if isinstance(v, ast.FormattedValue) else v, depth + 1)
            if part is None:
                return PathValue("".join(parts), False) if parts else None
            parts.append(part.text)
            if not part.complete:
                return PathValue("".join(parts), False)
        return PathValue("".join(parts), True)

    def _binop_value(self, node: ast.expr, depth: int) -> PathValue | None:
        """``a + b`` (strings) and ``a / b`` (paths)."""
        assert isinstance(node, ast.BinOp)
        if not isinstance(node.op, (ast.Add, ast.Div)):
            return None
        left = self.value(node.left, depth + 1)
        if left is None:
            return None
        sep = "/" if isinstance(node.op, ast.Div) else ""
        right = self.value(node.right, depth + 1) if left.complete else None
        if right is None:
            return PathValue(left.text + sep, False)
        return PathValue(left.text + sep + right.text, right.complete)

    def _name_value(self, node: ast.expr, depth: int) -> PathValue | None:
        assert isinstance(node, ast.Name)
        target = self.paths.get(node.id)
        return self.value(target, depth + 1) if target is not None else None

    def _subscript_value(self, node: ast.expr, depth: int) -> PathValue | None:
        """``os.environ["HOME"]``."""
        assert isinstance(node, ast.Subscript)
        qual = self.qualify(node.value)
        key = node.slice
        if qual == "os.environ" and isinstance(key, ast.Constant) and key.value == "HOME":
            return PathValue(self.ctx.home, True)
        return None

    def _call_value(self, node: ast.expr, depth: int) -> PathValue | None:
        assert isinstance(node, ast.Call)
        qual = self.qualify(node.func) or ""
        args = node.args
        fixed = self._fixed_value(qual, args)
        if fixed is not None:
            return fixed
        if qual in _JOINS:
            parts = list(args)
            if qual.endswith("joinpath") and isinstance(node.func, ast.Attribute):
                parts = [node.func.value, *parts]
            return self._join(parts, depth)
        if qual in _SAME_PATH or qual.endswith((".expanduser", ".resolve", ".absolute")):
            inner = args[0] if args else (node.func.value if isinstance(
                node.func, ast.Attribute) else None)
            value = self.value(inner, depth + 1)
            if value is not None and value.text.startswith("~"):
                return PathValue(self.ctx.home + value.text[1:], value.complete)
            return value
        return None

    def _fixed_value(self, qual: str, args: list[ast.expr]) -> PathValue | None:
        """The home folder and the working folder, however the code asks for them."""
        if qual in ("pathlib.Path.home", "os.path.expanduser") and not args:
            return PathValue(self.ctx.home, True)
        if qual in ("os.getcwd", "pathlib.Path.cwd"):
            return PathValue(self.ctx.cwd or self.ctx.root, True)
        if qual in ("os.getenv", "os.environ.get") and args and isinstance(
                args[0], ast.Constant) and args[0].value == "HOME":
            return PathValue(self.ctx.home, True)
        return None

    def _join(self, parts: list[ast.expr], depth: int) -> PathValue | None:
        text = ""
        for p in parts:
            value = self.value(p, depth + 1)
            if value is None:
                return PathValue(text.rstrip("/") + "/", False) if text else None
            text = value.text if value.text.startswith("/") or not text else (
                text.rstrip("/") + "/" + value.text)
            if not value.complete:
                return PathValue(text, False)
        return PathValue(text, True)

    # ------------------------------------------------------------ calls

    def call(self, node: ast.Call) -> None:
        qual = self.qualify(node.func) or ""
        method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        on_path = isinstance(node.func, ast.Attribute) and (
            qual.startswith("pathlib.Path") or self._is_path(node.func.value))
        self._effect(node, qual, method, on_path=on_path)
        if qual.startswith(_NETWORK) or qual in ("urllib.request.urlopen", "socket.socket"):
            self.network = self.network or qual
        self._dynamic(node, qual)

    def _effect(self, node: ast.Call, qual: str, method: str, *, on_path: bool) -> None:
        """What the call does to paths: runs a shell, deletes, moves, copies, writes,
        opens, reads."""
        func = node.func.value if isinstance(node.func, ast.Attribute) else None
        if qual in _SHELL:
            self._shell(qual, node)
        elif qual in _DELETE or (on_path and method in ("unlink", "rmdir")):
            target = node.args[0] if node.args and qual in _DELETE and not on_path else func
            self._path_effect("delete", target, _DELETE.get(qual, False), qual or method)
        elif qual in _MOVE or (on_path and method in ("rename", "replace")):
            self._move(node, qual, method, func if on_path else None)
        elif qual in _COPY or (on_path and method in ("symlink_to", "hardlink_to")):
            dest = func if on_path and func is not None else (
                node.args[1] if len(node.args) > 1 else None)
            self._path_effect("write", dest, False, qual or method)
            if node.args:
                self._note_read(node.args[0])
        elif on_path and method in _WRITE_METHODS and func is not None:
            self._path_effect("write", func, False, method)
        elif qual in ("open", "io.open", "codecs.open", "builtins.open", "os.open") or (
                on_path and method == "open"):
            self._open(node, qual, on_path)
        elif qual in ("os.chmod", "os.chown"):
            self._path_effect("write", node.args[0] if node.args else None, False, qual)
        elif on_path and method in ("read_text", "read_bytes"):
            self._note_read(func)

    def _move(self, node: ast.Call, qual: str, method: str, path: ast.expr | None) -> None:
        """``os.rename(src, dst)``, ``shutil.move``; ``path.rename(dst)`` (``path``)."""
        if path is not None:
            self._path_effect("move", path, False, method)
            dest = node.args[0] if node.args else None
        else:
            self._path_effect("move", node.args[0] if node.args else None, False, qual)
            dest = node.args[1] if len(node.args) > 1 else None
        self._path_effect("write", dest, False, qual or method)

    def _dynamic(self, node: ast.Call, qual: str) -> None:
        """Code built at run time: eval/exec/compile/__import__ of a run-time name, and a
        getattr of a computed name."""
        last = qual.rsplit(".", maxsplit=1)[-1]
        if qual in _DYNAMIC or (last in ("eval", "exec") and qual.startswith(
                ("builtins", "eval", "exec"))):
            if not (qual == "__import__" and node.args and isinstance(node.args[0],
                                                                       ast.Constant)):
                self.out.append(Finding("code.dynamic", "ask",
                                        f"{self.where} builds code at run time ({qual})"))
        elif qual in ("getattr", "builtins.getattr") and len(node.args) >= 2 and not (
                isinstance(node.args[1], ast.Constant)):
            self.out.append(Finding("code.dynamic", "ask",
                                    f"{self.where} calls a name computed at run time (getattr)"))

    def _is_path(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Call):
            return (self.qualify(node.func) or "").startswith("pathlib.Path")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            return True
        if isinstance(node, ast.Name):
            target = self.paths.get(node.id)
            return target is not None and self._is_path(target)
        return False

    def _open(self, node: ast.Call, qual: str, on_path: bool) -> None:
        mode_node: ast.expr | None = None
        if on_path:
            target = node.func.value if isinstance(node.func, ast.Attribute) else None
            mode_node = node.args[0] if node.args else None
        else:
            target = node.args[0] if node.args else None
            mode_node = node.args[1] if len(node.args) > 1 else None
        for kw in node.keywords:
            if kw.arg in ("mode", "flags"):
                mode_node = kw.value
        mode = mode_node.value if isinstance(mode_node, ast.Constant) else "r"
        if qual == "os.open":
            self._path_effect("write", target, False, qual)
        elif isinstance(mode, str) and any(ch in mode for ch in "wax+"):
            self._path_effect("write", target, False, f"open(…, {mode!r})")
        else:
            self._note_read(target)

    def _note_read(self, node: ast.expr | None) -> None:
        value = self.value(node)
        if value is not None and value.complete:
            path = self.ctx.resolve(_home(value.text, self.ctx))
            if path and self.ctx.secret_kind(path):
                self.reads.append(path)

    def _path_effect(self, kind: str, node: ast.expr | None, recursive: bool, api: str) -> None:
        value = self.value(node)
        what = f"{self.where}: {api}"
        if value is not None and value.complete:
            text = _home(value.text, self.ctx)
            word = Word(text, text)
            if kind == "delete":
                self.out += delete_target(word, recursive, self.ctx,
                                          f"{what} deletes" + (" recursively" if recursive
                                                               else ""), by="python")
            elif kind == "move":
                where = self.ctx.where(word, last=False)
                path = self.ctx.record("move", word, "python")
                if where in ("critical", "sensitive", "device"):
                    self.out.append(Finding("fs.move-critical", "deny",
                                            f"{what} moves the protected location {text}", path))
                elif where in ("outside", "dynamic"):
                    self.out.append(Finding("fs.delete-outside", "ask",
                                            f"{what} moves {text} away from where it is", path))
            else:
                self.out += write_target(word, self.ctx, truncate=False, what=f"{what} writes",
                                         by="python")
            return
        self.ctx.record(kind, None, "python")
        folder = _home(value.text, self.ctx) if value is not None else ""
        known = self.ctx.resolve(folder.rsplit("/", 1)[0] or "/") if folder.startswith(
            ("/", "~")) else None
        if kind == "write" and known is None:
            return  # a path built at run time inside wherever the code runs
        where = self.ctx.where_path(known) if known else "dynamic"
        if kind == "write" and where in ("workspace", "temp"):
            return
        self.out.append(Finding(
            "code.cannot-tell", "ask",
            f"{what}: cannot tell which path it "
            f"{'deletes' if kind == 'delete' else 'moves' if kind == 'move' else 'writes'}"
            + (f" (somewhere under {known})" if known else "")))

    def _shell(self, qual: str, node: ast.Call) -> None:
        style = _SHELL[qual]
        if style == "auto":
            shell = any(kw.arg == "shell" and isinstance(kw.value, ast.Constant)
                        and kw.value.value for kw in node.keywords)
            style = "shell" if shell else "argv"
        first = node.args[0] if node.args else None
        if style == "args":
            first = ast.List(elts=list(node.args[1:] if qual.startswith("os.") else node.args),
                             ctx=ast.Load())
        # a command known in full is judged like the shell's own; one built at run time
        # cannot be told
        if style == "shell":
            value = self.value(first)
            if value is not None and value.complete:
                self.out += nested(value.text, self.ctx, f"{self.where} runs")
            else:
                self.out.append(Finding("code.cannot-tell", "ask",
                                        f"{self.where}: {qual} runs a command built at run time"))
            return
        items = first.elts if isinstance(first, (ast.List, ast.Tuple)) else None
        if items is None:
            value = self.value(first)
            items_text = [value.text] if value is not None and value.complete else None
        else:
            parts = [self.value(e) for e in items]
            items_text = [p.text for p in parts if p is not None and p.complete] if all(
                p is not None and p.complete for p in parts) else None
        if not items_text:
            self.out.append(Finding("code.cannot-tell", "ask",
                                    f"{self.where}: {qual} runs a program built at run time"))
            return
        words = [Word(t, t) for t in items_text]
        found, _ = judge_argv(words, Simple(), self.ctx)
        self.out += [Finding(f.rule, f.decision, f"{self.where} runs: {f.reason}", f.path)
                     for f in found]


#: how :meth:`_Reader.value` reads each kind of expression
_VALUES: dict[type[ast.expr], Callable[[_Reader, ast.expr, int], PathValue | None]] = {
    ast.Constant: _Reader._constant_value,
    ast.JoinedStr: _Reader._fstring_value,
    ast.BinOp: _Reader._binop_value,
    ast.Name: _Reader._name_value,
    ast.Subscript: _Reader._subscript_value,
    ast.Call: _Reader._call_value,
}
#: calls that join their arguments into a path
_JOINS = frozenset({"os.path.join", "posixpath.join", "pathlib.Path", "pathlib.PurePath",
                    "pathlib.PosixPath", "pathlib.Path()", "pathlib.Path.joinpath",
                    "pathlib.Path().joinpath"})
#: calls whose result names the path of their argument (``~`` expanded)
_SAME_PATH = frozenset({"os.path.expanduser", "os.path.abspath", "os.path.realpath",
                        "os.path.normpath", "str", "os.fspath", "pathlib.Path.expanduser",
                        "pathlib.Path().expanduser", "pathlib.Path.resolve",
                        "pathlib.Path().resolve", "pathlib.Path.absolute"})


def _home(text: str, ctx: Context) -> str:
    return ctx.home + text[1:] if text == "~" or text.startswith("~/") else text


def scan(code: str, ctx: Context, where: str) -> list[Finding] | None:
    """Findings for Python ``code`` (None: it does not parse as Python)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    reader = _Reader(ctx, where)
    reader.bind(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            reader.call(node)
    if reader.network and reader.reads:
        reader.out.append(Finding("exfil.secret-to-network", "deny",
                                  f"{where} reads {reader.reads[0]} and sends data over the "
                                  f"network ({reader.network})", reader.reads[0]))
    elif reader.reads:
        reader.out.append(Finding("exfil.read-credentials", "ask",
                                  f"{where} reads the credential store {reader.reads[0]}",
                                  reader.reads[0]))
    seen: set[tuple[str, str]] = set()
    unique = []
    for f in reader.out:
        if (f.rule, f.reason) not in seen:
            seen.add((f.rule, f.reason))
            unique.append(f)
    return unique
