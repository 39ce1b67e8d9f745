"""Run smllm from this plugin folder: ``python -I hooks/smllm_entry.py ARGS``.

``-I`` keeps the user's PYTHONPATH, user site-packages and the current folder out of
``sys.path``; this file then puts the plugin's ``src/`` first, so the code that runs is
always the plugin's own, whichever interpreter the launcher picked.

Besides every ``smllm`` command, the slash commands use:

* ``@show ARGS``: run ``smllm ARGS`` and always exit 0, adding ``(exit status N)`` when
  it failed: Claude Code drops a slash command whose shell step fails, and the model
  should see smllm's error message instead;

* ``@ledger [SESSION]``: export the session (default: the latest of this folder) to a
  temporary file and print ``smllm ledger --plain`` of it;
* ``@export [ARGS]``: ``smllm export ARGS``, with ``--last`` unless ARGS name a session;
* ``@audit [KEY]``: ``smllm session show KEY --audit`` for KEY, else ``$SMLLM_SESSION``,
  else the list of smllm sessions;
* ``@path [DATA]``: put the ``smllm`` command on PATH (``/smllm:cli``,
  ``smllm.setup.onpath``), DATA being ``$CLAUDE_PLUGIN_DATA``.
"""

# ruff: noqa: UP031, UP036, PLC0415, SIM115 - this file must still parse and run on an old
# python3 (to say "too old" instead of a SyntaxError), and imports lazily to stay fast.
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GATING = ("PreToolUse",)


def _too_old(argv):
    msg = "smllm needs Python >= 3.10, this is %d.%d" % sys.version_info[:2]
    if argv[:1] == ["hook"] and argv[1:2] and argv[1] in GATING:
        import json

        sys.stdout.write(json.dumps({"hookSpecificOutput": {
            "hookEventName": argv[1], "permissionDecision": "deny",
            "permissionDecisionReason": msg + " (set SMLLM_PYTHON to a newer python3)"}}))
        return 0
    sys.stderr.write("smllm: error: %s (set SMLLM_PYTHON to a newer python3)\n" % msg)
    return 0 if argv[:1] == ["hook"] else 1


def _ledger(main, args):
    import tempfile

    fd, out = tempfile.mkstemp(prefix="smllm-ledger-", suffix=".json")
    os.close(fd)
    try:
        pick = ["--journal", args[0]] if args else ["--last"]
        devnull = open(os.devnull, "w")
        saved, sys.stdout = sys.stdout, devnull
        try:
            rc = main(["export", *pick, "--out", out])
        finally:
            sys.stdout = saved
            devnull.close()
        return rc if rc else main(["ledger", "--plain", out])
    finally:
        os.unlink(out)


def _export(main, args):
    picks = ("--last", "--journal")
    named = any(a in picks or a.startswith("--journal=") for a in args)
    return main(["export", *([] if named else ["--last"]), *args])


def _audit(main, args):
    key = args[0] if args else os.environ.get("SMLLM_SESSION", "")
    if not key:
        sys.stdout.write("no smllm session is bound to this Claude Code session "
                         "($SMLLM_SESSION is unset); the smllm sessions are:\n")
        return main(["session", "list"])
    return main(["session", "show", key, "--audit"])


def _path(main, args):
    from smllm.base.errors import SmllmError
    from smllm.setup import onpath

    data = args[0] if args and args[0] and "${" not in args[0] else \
        os.environ.get("CLAUDE_PLUGIN_DATA", "")
    try:
        lines = onpath.link(ROOT, data or onpath.plugin_data(ROOT))
    except SmllmError as exc:
        sys.stderr.write("smllm: error: %s\n" % exc.render())
        return 1
    sys.stdout.write("".join(line + "\n" for line in lines))
    return 0


def run(argv):
    if sys.version_info < (3, 10):
        return _too_old(argv)
    sys.path.insert(0, os.path.join(ROOT, "src"))
    from smllm.cli import main

    if argv[:1] == ["@show"]:
        rc = _dispatch(main, argv[1:])
        sys.stdout.flush()
        if rc:
            sys.stdout.write("(exit status %d)\n" % rc)
        return 0
    return _dispatch(main, argv)


def _dispatch(main, argv):
    views = {"@ledger": _ledger, "@audit": _audit, "@export": _export, "@path": _path}
    if argv[:1] and argv[0] in views:
        return views[argv[0]](main, argv[1:])
    return main(argv)


def _failed(argv):
    """smllm could not even start: a gating hook still blocks the call (exit 2)."""
    if argv[:1] != ["hook"]:
        raise  # noqa: PLE0704 - a command: let Python report it
    try:
        sys.stderr.write("smllm hook could not start (%s): the call is denied\n"
                         % sys.exc_info()[0].__name__)
    finally:
        os._exit(2 if argv[1:2] and argv[1] in GATING else 0)


if __name__ == "__main__":
    try:
        code = run(sys.argv[1:])
    except SystemExit:
        raise
    except BaseException:
        _failed(sys.argv[1:])
    if sys.argv[1:2] == ["hook"] and "smllm.hooks" in sys.modules:
        sys.modules["smllm.hooks"].leave(code)  # as the installed hook ends (no teardown)
    raise SystemExit(code)
