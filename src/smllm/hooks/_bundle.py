"""The hooks' code bundle: the compiled code of the smllm modules hooks load, in one file.

Python's import system spends about 40 µs on each module besides running its code: the
path finder probes the folder for five file kinds, the loader stats the source, opens,
reads and checks its ``.pyc``. A hook imports 25-50 smllm modules, so that is 1-2 ms of a
hook whose interpreter starts in about 7 (``bench/bench_trees.py``). The bundle keeps
the marshalled code of those modules in one file, read with one ``read``:

* **where**: in the package's own ``__pycache__`` (:func:`bundle_file`), beside the
  ``.pyc`` files Python itself loads from there, named for the interpreter's bytecode
  (``cache_tag``): it is smllm's code, in the protected set like the package
  (:mod:`smllm.base.protected`), and never depends on ``SMLLM_HOME``. Where the package
  folder is not writable (no ``.pyc`` either), or under ``-B`` (no ``.pyc`` written),
  there is no bundle and imports go as usual.
* **what**: per module, its source file (relative to the package), the source's
  ``st_mtime_ns`` and size, whether it is a package, and its code (the ``.pyc`` body when
  that matches the source, else the source compiled).
* **use**: :func:`install` serves a module from the bundle only when its source file
  still has the recorded mtime and size (the check Python's own ``.pyc`` cache makes, at
  nanoseconds); any other module, or a changed one, is found and loaded as usual. An
  ``import`` statement of the hook's main thread reaches a bundled module through
  :func:`_import` (``builtins.__import__``), which runs the module's code the way the
  import system does (``sys.modules`` first, the parent package first, the child bound on
  its parent, a failed module removed again) without the import system's per-module
  locks and spec search, another 25 µs a module; anything else (``importlib``, another
  thread, ``-X importtime``) goes through :class:`_Finder`, first on ``sys.meta_path``.
  Modules keep their usual ``__file__``, ``__spec__`` and a ``SourceFileLoader``, so
  resources and tracebacks are unchanged.
* **upkeep**: :func:`refresh`, after the hook's output is written, rewrites the bundle
  (atomically) when the hook imported an smllm module the bundle lacked or held stale, so
  it follows the code and converges on the modules the hooks load.

Hot path: ``os``, ``sys``, ``marshal`` and the frozen import machinery only.
"""

from __future__ import annotations

import _thread
import builtins
import marshal
import posix
import sys

# the import machinery's own module (frozen, always loaded): importlib.machinery would
# import importlib and more, on every hook
from _frozen_importlib import ModuleSpec
from _frozen_importlib_external import MAGIC_NUMBER, SourceFileLoader

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from os import stat_result
    from types import CodeType, ModuleType

#: the first line of a bundle (its format) and, after it, the interpreter's bytecode magic
HEADER = b"smllm hook code bundle 1\n"
#: a bundle larger than this is not read (the hooks' modules take about 0.7 MB)
LIMIT = 16 << 20


def _package_folder(here: str) -> str:
    """``os.path.dirname(os.path.dirname(os.path.abspath(here)))``, with ``posix`` alone:
    this module runs before the bundle can serve ``smllm.base.osfast`` (or anything)."""
    if not here.startswith("/"):
        here = posix.getcwd() + "/" + here
    norm = getattr(posix, "_path_normpath", None)  # CPython 3.11.2+; else as it is
    here = norm(here) if norm is not None else here
    return here.rsplit("/", 2)[0] or "/"


_PACKAGE = _package_folder(__file__)
_PREFIX = _PACKAGE.rstrip("/") + "/"

#: module name -> (source path relative to the package, st_mtime_ns, st_size, is a
#: package, offset of its marshalled code in the bundle, its length): the bundle's index
_index: dict[str, tuple[str, int, int, bool, int, int]] = {}
#: the open bundle (its code is read with one ``pread`` per module served), or -1
_fd = [-1]
#: where the code starts in it (the index's offsets count from there)
_base = [0]
#: the smllm modules a hook asked for that the bundle could not serve (not in it, or
#: changed since), and those whose code it could not give (read from their files instead)
_missing: set[str] = set()
_unread: set[str] = set()
_CODE = type((lambda: None).__code__)  # types.CodeType, without importing types
#: the import statements' usual function, and the thread whose statements :func:`_import`
#: serves
_usual_import = builtins.__import__
_main_thread = _thread.get_ident()
_modules = sys.modules


def bundle_file() -> str | None:
    """The bundle of this interpreter's bytecode, in the package's ``__pycache__``."""
    tag = sys.implementation.cache_tag
    if tag is None:  # pragma: no cover - an interpreter without bytecode caching
        return None
    return f"{_PREFIX}__pycache__/hooks.{tag}.bundle"


class _Loader(SourceFileLoader):
    """The usual source loader, whose code comes from the bundle."""

    where = (0, 0)

    def get_code(self, fullname: str) -> CodeType:
        """The module's code from the bundle; from its file (as usual) when the bundle
        cannot give it (cut short, damaged), which :func:`refresh` then mends."""
        offset, length = self.where
        try:
            data = posix.pread(_fd[0], length, _base[0] + offset)
            # S302: the bundle is smllm's own code, in its protected package folder
            code = marshal.loads(data) if len(data) == length else None  # noqa: S302
        except (OSError, EOFError, ValueError, TypeError):
            code = None
        if type(code) is _CODE:
            found: CodeType = code
            return found
        _unread.add(fullname)
        usual = super().get_code(fullname)
        if usual is None:  # pragma: no cover - a .py source always has code
            raise ImportError(f"no code for {fullname}", name=fullname)
        return usual


def _spec(name: str) -> ModuleSpec | None:
    """The spec of bundled module ``name`` when its source is unchanged, else None (a
    module the bundle should hold is then remembered as missing)."""
    entry = _index.get(name)
    if entry is None:
        if name[:6] == "smllm.":
            _missing.add(name)
        return None
    rel, mtime, size, package, offset, length = entry
    file = _PREFIX + rel  # a path relative to the package (from os.path.relpath)
    try:
        st = posix.stat(file)
    except OSError:
        st = None
    if st is None or st.st_mtime_ns != mtime or st.st_size != size:
        _missing.add(name)
        return None
    loader = _Loader(name, file)
    loader.where = (offset, length)
    spec = ModuleSpec(name, loader, origin=file, is_package=package)
    spec.has_location = True
    if package:
        spec.submodule_search_locations = [file.rpartition("/")[0]]
    return spec


class _Finder:
    """Serves the bundled modules whose source has not changed (first on ``meta_path``)."""

    @classmethod
    def find_spec(cls, name: str, path: object = None, target: object = None
                  ) -> ModuleSpec | None:
        return _spec(name)


def _load(name: str) -> bool:
    """Run bundled module ``name`` (its parent first) unless it is imported already; False
    when it is not in the bundle as its source is now (the usual import then finds it)."""
    if name in sys.modules:
        return True
    parent, _, child = name.rpartition(".")
    if parent and not _load(parent):
        return False
    spec = _spec(name)
    loader = spec.loader if spec is not None else None
    if spec is None or not isinstance(loader, _Loader):
        return False
    module = type(sys)(name)
    attrs = module.__dict__
    search = spec.submodule_search_locations
    # as the import system sets them
    attrs.update(__spec__=spec, __loader__=loader, __file__=spec.origin,
                 __cached__=spec.cached, __package__=name if search is not None else parent)
    if search is not None:
        attrs["__path__"] = search
    sys.modules[name] = module
    try:
        exec(loader.get_code(name), attrs)  # noqa: S102 - smllm's own code, as import runs it
    except BaseException:
        sys.modules.pop(name, None)
        raise
    if parent:
        setattr(sys.modules[parent], child, sys.modules[name])
    return True


def _import(name: str, globals: Mapping[str, object] | None = None,
            locals: Mapping[str, object] | None = None,
            fromlist: Sequence[str] | None = (), level: int = 0) -> ModuleType:
    """``builtins.__import__`` while a hook runs: the bundled smllm modules an absolute
    import statement of the main thread names (and the submodules of its ``from`` list)
    are run by :func:`_load` first; the usual ``__import__`` then finds them imported."""
    if not level and name[:5] == "smllm":
        module = _modules.get(name)
        if module is None and _thread.get_ident() == _main_thread:
            _load(name)
            module = _modules.get(name)
        if fromlist and module is not None and hasattr(module, "__path__"):
            for sub in fromlist:
                if not hasattr(module, sub) and sub != "*" \
                        and _thread.get_ident() == _main_thread:
                    _load(f"{name}.{sub}")
    return _usual_import(name, globals, locals, fromlist, level)


def _open(path: str) -> int:
    """The bundle open for reading (a regular file, not through a link), or -1."""
    try:
        fd = posix.open(path, posix.O_RDONLY | getattr(posix, "O_NOFOLLOW", 0)
                        | getattr(posix, "O_NONBLOCK", 0))
    except OSError:
        return -1
    try:
        if (posix.fstat(fd).st_mode & 0o170000) == 0o100000:
            return fd
    except OSError:
        pass
    posix.close(fd)
    return -1


def _read_index(fd: int) -> dict[str, tuple[str, int, int, bool, int, int]]:
    """The index at the head of the bundle: :data:`HEADER`, the bytecode magic, the
    index's length (4 bytes), the marshalled index; the code follows it."""
    head = HEADER + MAGIC_NUMBER
    first = posix.pread(fd, 1 << 14, 0)
    if not first.startswith(head) or len(first) < len(head) + 4:
        return {}
    start = len(head) + 4
    size = int.from_bytes(first[len(head):start], "little")
    if size > LIMIT:
        return {}
    data = first[start:start + size]
    if len(data) < size:
        data += posix.pread(fd, size - len(data), start + len(data))
    try:
        index = marshal.loads(data)  # noqa: S302 - smllm's own bundle (see _Loader)
    except (EOFError, ValueError, TypeError):
        return {}
    _base[0] = start + size
    return index if isinstance(index, dict) else {}


def install() -> None:
    """Serve this process's smllm imports from the bundle, where there is one."""
    if _Finder in sys.meta_path:
        return
    path = bundle_file()
    fd = _open(path) if path is not None else -1
    if fd >= 0:
        try:
            _index.update(_read_index(fd))
        except OSError:
            _index.clear()
        _fd[0] = fd
    sys.meta_path.insert(0, _Finder)
    # -X importtime lists what the import system loads (tests/test_startup.py): let it
    if _index and "importtime" not in sys._xoptions:
        builtins.__import__ = _import


def _served(name: str) -> bool:
    """Whether module ``name`` was loaded from the bundle."""
    module = sys.modules.get(name)
    spec = getattr(module, "__spec__", None)
    return isinstance(getattr(spec, "loader", None), _Loader) and name not in _unread


def _missed() -> list[str]:
    """The modules this process imported from their files though the bundle should have
    served them: not in it, or changed since it was written."""
    return sorted(name for name in _missing | _unread if name in sys.modules)


def _code_of(name: str) -> tuple[str, int, int, bool, bytes] | None:
    """A bundle entry for the imported module ``name``, from its ``.pyc`` when that matches
    the source, else from the source."""
    from smllm.base import osfast as os  # noqa: PLC0415 - writing a bundle only (served by then)

    module = sys.modules.get(name)
    file = getattr(module, "__file__", None)
    if not isinstance(file, str) or not file.endswith(".py"):
        return None
    rel = os.path.relpath(file, _PACKAGE)
    if rel.startswith(os.pardir):
        return None
    st = os.stat(file)
    package = hasattr(module, "__path__")
    cached = getattr(module, "__cached__", None)
    body = _pyc_body(cached, st) if isinstance(cached, str) else None
    if body is None:
        with open(file, "rb") as fh:
            source = fh.read()
        body = marshal.dumps(compile(source, file, "exec", dont_inherit=True))
    return rel, st.st_mtime_ns, st.st_size, package, body


def _kept(name: str) -> tuple[str, int, int, bool, bytes] | None:
    """The bundle's entry for ``name`` when its source has not changed since."""
    from smllm.base import osfast as os  # noqa: PLC0415 - writing a bundle only (served by then)

    rel, mtime, size, package, offset, length = _index[name]
    try:
        st = os.stat(os.path.join(_PACKAGE, rel))
    except OSError:
        return None
    if (st.st_mtime_ns, st.st_size) != (mtime, size):
        return None
    body = os.pread(_fd[0], length, _base[0] + offset)
    return (rel, mtime, size, package, body) if len(body) == length else None


def _pyc_body(cached: str, st: stat_result) -> bytes | None:
    """The marshalled code of a ``.pyc`` that Python would accept for a source with stat
    ``st`` (the timestamp form: flags 0, mtime and size of the source), else None."""
    try:
        with open(cached, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    header = MAGIC_NUMBER + (0).to_bytes(4, "little") \
        + (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little") \
        + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    return data[16:] if data[:16] == header else None


def _pack(entries: dict[str, tuple[str, int, int, bool, bytes]]) -> bytes:
    """A bundle's bytes: the head, the index, then each module's code (the index's offsets
    count from the end of the index)."""
    names = sorted(entries)
    index: dict[str, tuple[str, int, int, bool, int, int]] = {}
    offset = 0
    for n in names:
        rel, mtime, size, package, body = entries[n]
        index[n] = (rel, mtime, size, package, offset, len(body))
        offset += len(body)
    packed = marshal.dumps(index)
    return b"".join([HEADER, MAGIC_NUMBER, len(packed).to_bytes(4, "little"), packed,
                     *(entries[n][4] for n in names)])


def refresh() -> None:
    """Rewrite the bundle when this hook imported an smllm module from its file (one the
    bundle lacked, or changed since): the kept entries that still match their source,
    plus those. Never raises: the bundle is an optimisation."""
    try:
        missed = _missed()
        path = bundle_file()
        if not missed or path is None or sys.dont_write_bytecode:  # -B: no .pyc, no bundle
            return
        entries: dict[str, tuple[str, int, int, bool, bytes]] = {}
        for name in _index:
            kept = _kept(name)
            if kept is not None:
                entries[name] = kept
        for name in missed:
            entry = _code_of(name)
            if entry is not None:
                entries[name] = entry
        if entries:
            _write(path, _pack(entries))
    except Exception:  # noqa: S110 - an optimisation: the hook's work is done
        pass


def _write(path: str, data: bytes) -> None:
    """Replace the bundle atomically (a new temporary file beside it, then a rename)."""
    from smllm.base import osfast as os  # noqa: PLC0415 - writing a bundle only (served by then)

    folder = os.path.dirname(path)
    if not os.path.isdir(folder):
        os.mkdir(folder)
    tmp = f"{path}.{os.getpid()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:  # readable like the .pyc files beside it: code, no secret
        fd = os.open(tmp, flags, 0o644)
    except FileExistsError:  # left by a killed writer with this pid
        os.unlink(tmp)
        fd = os.open(tmp, flags, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    os.close(fd)
    os.replace(tmp, path)
