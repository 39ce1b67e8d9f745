"""``smllm policy test FILE``: a team's own corpus of expected<TAB>command lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import smllm

CORPUS = (
    "# our evasions suite\n"
    "deny\trm -rf ~\n"
    "allow\tgit status\n"
    "\n"
    "allow\trm -rf build\n"
    "deny\tbash <<EOF\n"
    "\tgit reset --hard\n"
    "\tEOF\n"
    "!allow\tnpm publish\n"
    "ask\tmake wipe\n"
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with a Makefile whose wipe target deletes the home folder."""
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "Makefile").write_text("wipe:\n\trm -rf ~/\n")
    (root / "corpus.tsv").write_text(CORPUS)
    return root


def test_misses_are_printed_and_fail(project: Path) -> None:
    """Each miss names file:line, what was expected, the hook's decision and its stamp, the
    rule and the reason the agent would be given."""
    proc = smllm("policy", "test", "corpus.tsv", cwd=project)
    expected = (
        "corpus.tsv:5: expected allow, got ask (ask:user): rm -rf build\n"
        "    fs.delete-recursive-workspace: smllm escalates this call for your review: "
        "deletes recursively build (rule fs.delete-recursive-workspace)\n"
        "corpus.tsv:10: expected ask, got deny (deny:policy): make wipe\n"
        "    fs.delete-recursive-critical: smllm policy denies this call: make wipe: deletes "
        "recursively ~/, a protected location (rule fs.delete-recursive-critical, "
        "smllm/data/policy_defaults.toml:69)\n"
        "6 commands: 4 as expected, 2 misses\n"
    )
    home = str(Path.home())
    assert (expected, 1) == (proc.stdout.replace(home, "~"), proc.returncode)


def test_a_clean_corpus_passes(project: Path) -> None:
    """With every line as expected, the summary says so and the exit status is 0."""
    (project / "ok.tsv").write_text("deny\trm -rf /\nallow\tls -la\n!allow\tgit push -f\n")
    proc = smllm("policy", "test", "ok.tsv", cwd=project)
    assert ("3 commands: 3 as expected, 0 misses\n", 0) == (proc.stdout, proc.returncode)


def test_json_lists_the_misses(project: Path) -> None:
    """--json prints the file, the total and each miss as an object."""
    proc = smllm("policy", "test", "--json", "corpus.tsv", cwd=project)
    out = json.loads(proc.stdout)
    expected = (6, [5, 10], ["allow", "ask"], ["ask", "deny"])
    assert expected == (out["total"], [m["line"] for m in out["misses"]],
                        [m["expected"] for m in out["misses"]],
                        [m["actual"] for m in out["misses"]])


ERRORS = [
    ("maybe\tls\n", "smllm: error: {f}:1: unknown expectation 'maybe' (use one of: allow, ask, "
     "deny, !allow, then a tab and the command)\n"),
    ("deny\t\n", "smllm: error: {f}:1: no command after the expectation (write "
     "expected<TAB>command)\n"),
    ("\tls\n", "smllm: error: {f}:1: a continuation line with no command above it (start the "
     "file with expected<TAB>command)\n"),
]


@pytest.mark.parametrize(("text", "message"), ERRORS)
def test_a_malformed_line_is_reported_with_its_place(project: Path, text: str,
                                                     message: str) -> None:
    """A line the format does not allow is an error naming file:line and the fix."""
    (project / "bad.tsv").write_text(text)
    proc = smllm("policy", "test", "bad.tsv", cwd=project)
    assert (message.format(f="bad.tsv"), 1) == (proc.stderr, proc.returncode)


def test_a_missing_file_is_a_usage_error(project: Path) -> None:
    """A corpus that cannot be read is a usage error, with how to fix it."""
    proc = smllm("policy", "test", "nope.tsv", cwd=project)
    expected = ("smllm: error: cannot read the corpus nope.tsv: No such file or directory "
                "(give a readable UTF-8 file of expected<TAB>command lines)\n", 2)
    assert expected == (proc.stderr, proc.returncode)
