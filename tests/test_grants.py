"""Grants pin what was reviewed (issue 19): an "always allow in this workspace" covers the
command together with the digest of every script file it runs (a Python script, the
Makefile whose target it makes, the package.json whose script it runs) and the findings it
was granted for; any change is reviewed again, journaled with the grant it no longer
matches. A grants file written before the pins existed stays readable. Through the real
PreToolUse hook and the scripted judge of tests/judge_server.py."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from helpers import smllm
from judge_server import JudgeServer
from smllm.base import paths
from smllm.gate import grants
from test_gate import (  # noqa: F401 - judge, project: fixtures
    JUDGE_GATE,
    bodies,
    decision,
    intents,
    judge,
    judge_env,
    policy,
    pre,
    project,
)

FIXTURES = Path(__file__).parent / "fixtures" / "grants"
SCHEMA = json.loads((Path(__file__).parent / "schemas" / "policy-grants.schema.json").read_text())

#: (case, command, the file it runs, its content, the same file rewritten, whether the
#: policy's findings change with it)
SWAPS = [
    ("python script", "python3 tidy.py", "tidy.py",
     'import shutil\nshutil.rmtree("build")\n',
     'import shutil\nshutil.rmtree("src")\n', True),
    ("comment only", "python3 tidy.py", "tidy.py",
     'import shutil\nshutil.rmtree("build")\n',
     'import shutil\nshutil.rmtree("build")  # same findings, another file\n', False),
    ("make target", "make clean", "Makefile",
     "clean:\n\trm -rf build\n",
     "clean:\n\trm -rf build src\n", True),
    ("make, another target", "make clean", "Makefile",
     "clean:\n\trm -rf build\n",
     "clean:\n\trm -rf build\nall:\n\tcc -o app main.c\n", False),
    ("npm script", "npm run clean", "package.json",
     '{"scripts": {"clean": "rm -rf build"}}\n',
     '{"scripts": {"clean": "rm -rf build", "postclean": "rm -rf src"}}\n', True),
    ("shell script", "bash tidy.sh", "tidy.sh",
     "rm -rf build\n",
     "rm -rf build\nrm -rf src\n", True),
]


@pytest.mark.parametrize(("command", "name", "before", "after", "findings"),
                         [s[1:] for s in SWAPS], ids=[s[0] for s in SWAPS])
def test_a_grant_covers_the_scripts_it_was_given_for(
        project: Path, judge: JudgeServer,  # noqa: F811 - the fixtures
        command: str, name: str, before: str, after: str, findings: bool) -> None:
    """The judge's grant allows the same command running the same file; once the file is
    rewritten (the findings the same or not) the call goes to the judge again (which
    rejects it), and the journal names the grant that no longer matches and what changed."""
    policy(project, JUDGE_GATE)
    script = project / name
    script.write_text(before)
    judge.verdict("always_allow_in_workspace", "tidies the build output")
    env = judge_env(judge)
    first = decision(pre(project, "s-pin", command, "t1", env))
    again = decision(pre(project, "s-pin", command, "t2", env))
    script.write_text(after)
    judge.verdict("reject", "it now deletes more than the build output")
    swapped = decision(pre(project, "s-pin", command, "t3", env))
    grant = bodies("s-pin", "policy.amendment")[0]
    third = intents("s-pin")[2]
    digest = {str(script): f"sha256:{_sha(before)}"}
    assert (
        ("allow", "allow", "deny"), 2, digest,
        ("allow:llm_judge", f"amendment:{grant['id']}", "deny:llm_judge"),
        {"id": grant["id"], "changed": [
            f"{script} changed since it was reviewed (sha256:{_sha(before)[:12]}… is now "
            f"sha256:{_sha(after)[:12]}…)",
            *(["the policy's findings on it differ from those it was granted for"]
              if findings else [])]},
        True,
    ) == (
        (first, again, swapped), len(judge.bodies), grant["scripts"],
        tuple(i["rule"] if i["policy_decision"] == "allow:policy" else i["policy_decision"]
              for i in intents("s-pin")),
        third["grant_mismatch"],
        f"the workspace amendment {grant['id']} (granted by llm_judge) no longer matches: "
        f"{script} changed" in _requested("s-pin")[1]["reason"],
    )


def _requested(sid: str) -> list[dict[str, Any]]:
    """The approval.review records the gate's chain wrote (what each reviewer was asked)."""
    return bodies(sid, "approval.review")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_other_findings_or_another_script_do_not_match() -> None:
    """The pins compare whole: the same scripts with other findings, a script more, a
    script fewer each name what changed; the same pins match."""
    grant = {"scripts": {"/p/a.py": "sha256:1"}, "findings": ["python3 a.py deletes build"]}
    same = grants.Pins({"/p/a.py": "sha256:1"}, ["python3 a.py deletes build"])
    assert ([], ["the policy's findings on it differ from those it was granted for"],
            ["it now runs /p/b.py, which was not reviewed"], ["it no longer runs /p/a.py"]) == (
        grants.changes(grant, same),
        grants.changes(grant, grants.Pins(same.scripts, ["python3 a.py deletes src"])),
        grants.changes(grant, grants.Pins({**same.scripts, "/p/b.py": "sha256:2"},
                                          same.findings)),
        grants.changes(grant, grants.Pins({}, same.findings)))


def _legacy(workspace: Path) -> None:
    """The grants file as smllm wrote it before grants pinned scripts and findings."""
    text = (FIXTURES / "policy-grants-before-pins.json").read_text()
    target = paths.state_dir() / "policy-grants.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text.replace("{workspace}", str(workspace)))


def test_grants_written_before_the_pins_stay_readable(
        project: Path, judge: JudgeServer) -> None:  # noqa: F811 - the fixtures
    """An old grants file is listed (valid against the schema), its grant of a command that
    runs no script still allows it, and its grant of a command that runs a script is
    reviewed again, saying the grant never pinned that script."""
    policy(project, JUDGE_GATE)
    _legacy(project)
    (project / "tidy.py").write_text('import shutil\nshutil.rmtree("build")\n')
    listed = [json.loads(line) for line in smllm("policy", "grants", "--json").stdout.splitlines()]
    for grant in listed:
        jsonschema.validate(grant, SCHEMA)
    env = judge_env(judge)
    kept = decision(pre(project, "s-old", "rm -rf stale_cache.txt", "t1", env))
    judge.verdict("reject", "not reviewed with its script")
    redone = decision(pre(project, "s-old", "python3 tidy.py", "t2", env))
    mismatch: dict[str, Any] = intents("s-old")[1]["grant_mismatch"]
    assert (["g-oldrm1", "g-oldpy2"], "allow", "deny", 1, {
        "id": "g-oldpy2", "changed": [
            f"it runs {project / 'tidy.py'}, which the grant never pinned (made before smllm "
            "pinned the scripts a command runs)"]}) == (
        [g["id"] for g in listed], kept, redone, len(judge.bodies), mismatch)


def test_new_grants_are_valid_against_the_schema(
        project: Path, judge: JudgeServer) -> None:  # noqa: F811 - the fixtures
    """A grant made now carries its pins, and `policy grants --json` is valid."""
    policy(project, JUDGE_GATE)
    makefile = "clean:\n\trm -rf build\n"
    (project / "Makefile").write_text(makefile)
    judge.verdict("always_allow_in_workspace", "cleans the build output")
    assert "allow" == decision(pre(project, "s-new", "make clean", "t1", judge_env(judge)))
    listed = [json.loads(line) for line in smllm("policy", "grants", "--json").stdout.splitlines()]
    for grant in listed:
        jsonschema.validate(grant, SCHEMA)
    assert [({str(project / "Makefile"): f"sha256:{_sha(makefile)}"},
             ["make clean: deletes recursively build"])] == [
        (g["scripts"], g["findings"]) for g in listed]


def test_policy_explain_names_the_grant_that_no_longer_matches(
        project: Path, judge: JudgeServer) -> None:  # noqa: F811 - the fixtures
    """`smllm policy explain` decides as the hook does: after the swap it escalates, and its
    JSON (valid against its schema) names the stale grant and what changed."""
    policy(project, JUDGE_GATE)
    script = project / "tidy.py"
    first, second = ('import shutil\nshutil.rmtree("build")\n',
                     'import shutil\nshutil.rmtree("build")  # again\n')
    script.write_text(first)
    judge.verdict("always_allow_in_workspace", "tidies the build output")
    assert "allow" == decision(pre(project, "s-explain", "python3 tidy.py", "t1",
                                   judge_env(judge)))
    grant = bodies("s-explain", "policy.amendment")[0]
    before = json.loads(smllm("policy", "explain", "--json", "--cwd", str(project), "--",
                              "python3 tidy.py").stdout)
    script.write_text(second)
    after = json.loads(smllm("policy", "explain", "--json", "--cwd", str(project), "--",
                             "python3 tidy.py").stdout)
    schema = json.loads((Path(__file__).parent / "schemas" / "policy-explain.schema.json")
                        .read_text())
    jsonschema.validate(after, schema)
    assert ((f"amendment:{grant['id']}", None),
            ("review:llm_judge", {"id": grant["id"], "changed": [
                f"{script} changed since it was reviewed (sha256:{_sha(first)[:12]}… is now "
                f"sha256:{_sha(second)[:12]}…)"]})) == (
        (before["rule"], before.get("grant_mismatch")),
        (after["decision"], after["grant_mismatch"]))
