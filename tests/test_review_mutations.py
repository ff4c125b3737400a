"""Mutation tests: each named mutant of the labkit.review package must be killed by tests/test_review.py.

A mutant is a small variant of one function of the real implementation,
the mistakes the seed lesson warns about, set in the module that looks the
function up (``labkit.review.facts``, ``.risks`` or ``.report``). It is installed by a
``sitecustomize`` module on PYTHONPATH, so it is active in the pytest
subprocess *and* in every ``python -m labkit`` process the CLI tests start.
The behavioural suite then runs with ``-x``; a mutant is killed when a test
fails for a reason other than the harness itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from .conftest import ROOT

MUTANTS = {
    # git's listing gains patch bodies: the parser must refuse it, never half-parse it.
    "adds-binary-flag": """
        orig = facts._listing_args
        def mutant(base):
            args = orig(base)
            return args[:-2] + ["--binary"] + args[-2:]
        facts._listing_args = mutant
    """,
    # The seed's execSync: one command string through a shell, no hardened runner.
    "allows-a-shell": """
        import subprocess
        from labkit.boundary.errors import LabkitError
        def mutant(root, args, **kw):
            proc = subprocess.run("git " + " ".join(args), shell=True, cwd=str(root),
                                  input=kw.get("input_bytes"), capture_output=True)
            if proc.returncode != 0:
                raise LabkitError("git_failed", "git failed")
            return proc.stdout
        facts._git = mutant
    """,
    # Folder authorization without the '/' boundary: src admits src-old.
    "bare-startswith": """
        mutant = lambda path, allow: any(path.startswith(e.rstrip("/")) for e in allow)
        risks.path_allowed = report.path_allowed = mutant
    """,
    # Risk rules as exclusive branches: the first hit hides the others.
    "stops-at-first-risk": """
        orig = report.file_risks
        report.file_risks = lambda *a, **kw: orig(*a, **kw)[:1]
    """,
    # git's traversal order leaks into the report (and its hash).
    "drops-the-sort": """
        report._sort_files = list
        report._sort_risks = list
    """,
}

SITECUSTOMIZE = """
import os
_name = os.environ.get("LABKIT_REVIEW_MUTANT")
if _name:
    from labkit.review import facts, report, risks
{bodies}
    with open(os.environ["LABKIT_REVIEW_MUTANT_MARKER"], "a") as _fh:
        _fh.write(_name + "\\n")
"""


def _sitecustomize() -> str:
    bodies = []
    for i, (name, body) in enumerate(MUTANTS.items()):
        keyword = "if" if i == 0 else "elif"
        bodies.append(f"    {keyword} _name == {name!r}:\n" + textwrap.indent(textwrap.dedent(body).strip(), " " * 8))
    bodies.append("    else:\n        raise SystemExit('unknown mutant ' + _name)")
    return SITECUSTOMIZE.format(bodies="\n".join(bodies))


@pytest.fixture(scope="module")
def mutant_runs(tmp_path_factory):
    """Run the behavioural suite once per mutant, all at the same time."""
    base = tmp_path_factory.mktemp("mutants")
    (base / "sitecustomize.py").write_text(_sitecustomize())
    procs = {}
    for name in MUTANTS:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(base), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        env["LABKIT_REVIEW_MUTANT"] = name
        env["LABKIT_REVIEW_MUTANT_MARKER"] = str(base / f"{name}.marker")
        procs[name] = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pytest",
                "tests/test_review.py",
                "-x",
                "-q",
                "-p",
                "no:cacheprovider",
                "-o",
                "addopts=",
                "--basetemp",
                str(base / f"tmp-{name}"),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
    results = {}
    for name, proc in procs.items():
        out, _ = proc.communicate(timeout=300)
        marker = base / f"{name}.marker"
        results[name] = {
            "returncode": proc.returncode,
            "output": out.decode("utf-8", "replace"),
            "applied": marker.exists() and name in marker.read_text(),
        }
    return results


@pytest.mark.parametrize("name", list(MUTANTS))
def test_mutant_is_killed(mutant_runs, name):
    run = mutant_runs[name]
    assert run["applied"], f"mutant {name} was never installed:\n{run['output'][-2000:]}"
    # Exit 1 means tests ran and one failed; 2-5 would be a harness or collection problem.
    assert run["returncode"] == 1, f"mutant {name} survived (exit {run['returncode']}):\n{run['output'][-2000:]}"
    assert "1 failed" in run["output"] and "FAILED tests/test_review.py::" in run["output"], run["output"][-2000:]
    assert " error" not in run["output"].splitlines()[-1], f"collection errors:\n{run['output'][-2000:]}"


def test_every_named_mutation_from_the_issue_is_covered():
    assert set(MUTANTS) == {
        "adds-binary-flag",
        "allows-a-shell",
        "bare-startswith",
        "stops-at-first-risk",
        "drops-the-sort",
    }
