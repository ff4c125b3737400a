"""A class graded in shards (``labs grade --shard``) and merged (``labs grade-merge``).

Every grading run here is the real CLI (or the real ``grade`` function), with the strongest sandbox the
machine allows. The fast tests grade classes of hand-ins that take the grader's fast paths (a notebook
without labkit's metadata, a file that is not JSON: real verdicts, no kernel); the slow one grades
notebooks in kernels. The CI shapes are run as far as this machine allows: the GitHub Actions matrix of
docs/grading.md as local processes, one per shard, at once; the Kubernetes indexed job's pod command with
``JOB_COMPLETION_INDEX`` and ``LABKIT_SHARD_TOTAL`` set as Kubernetes sets them (there is no cluster here).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

from labkit.boundary.errors import LabkitError
from labkit.course import shards
from labkit.course.grade import GradeOptions, exercises_of, grade
from labkit.course.shards import Shard, parse_shard, slice_of

DOCS = Path(__file__).resolve().parents[1] / "docs" / "grading.md"
LAB = "02-git-status-and-diff"
BIN = str(Path(sys.executable).parent)


def _cli(*args, env=None, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "labkit", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=900
    )


def _error(proc) -> dict:
    assert proc.returncode == 1, proc.stdout + proc.stderr[-2000:]
    return json.loads(proc.stdout)["error"]


def _fast_class(folder: Path, n: int = 24) -> Path:
    """``n`` learners' hand-ins that the grader judges without a kernel, one folder per learner."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        learner = folder / f"learner-{i:02d}"
        learner.mkdir()
        if i % 3:
            nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]), learner / "lab.ipynb")
        else:
            (learner / "lab.ipynb").write_text('{"cells": [', "utf-8")
    return folder


def _book(folder: Path) -> tuple[bytes, bytes]:
    return (folder / "grades.csv").read_bytes(), (folder / "grades.html").read_bytes()


def _matrix(subs: Path, work: Path, total: int, tag: str, extra=()) -> list[Path]:
    """N local processes at once, one per shard, as a matrix runs them."""
    dirs = [work / f"{tag}-{k}" for k in range(total)]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "labkit",
                "labs",
                "grade",
                str(subs),
                "--out",
                str(d),
                "--shard",
                f"{k}/{total}",
                *extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for k, d in enumerate(dirs)
    ]
    for p in procs:
        _, err = p.communicate(timeout=900)
        assert p.returncode == 0, err[-2000:]
    return dirs


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """One fast class graded whole, as a 4-shard matrix of processes, and as 16 shards."""
    work = tmp_path_factory.mktemp("shards")
    subs = _fast_class(work / "submissions")
    whole = work / "whole"
    proc = _cli("labs", "grade", str(subs), "--out", str(whole), "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    four = _matrix(subs, work, 4, "four")
    sixteen = [work / f"sixteen-{k}" for k in range(16)]
    for k, d in enumerate(sixteen):  # the real grading run, in this process (16 processes cost a minute here)
        grade([subs], d, GradeOptions(jobs=1), Shard(k, 16))
    return {
        "work": work,
        "subs": subs,
        "whole": whole,
        "result": json.loads(proc.stdout),
        "four": four,
        "sixteen": sixteen,
    }


# -- which slice ---------------------------------------------------------------------------------------------


def test_the_shard_argument_and_the_environment():
    assert parse_shard(None) == Shard(0, 1) and parse_shard("3/4") == Shard(3, 4)
    env = {"JOB_COMPLETION_INDEX": "7", "LABKIT_SHARD_TOTAL": "16"}
    assert parse_shard("env", env) == Shard(7, 16)
    assert parse_shard("env", {"LABKIT_SHARD_INDEX": "2", "LABKIT_SHARD_TOTAL": "4"}) == Shard(2, 4)
    assert parse_shard("env", {**env, "LABKIT_SHARD_INDEX": "7"}) == Shard(7, 16)  # both, agreeing
    refused = {
        "4/4": "K counts from 0",
        "0/0": "1 to 4096",
        "1-4": "K/N",
        "-1/4": "K/N",
    }
    for text, said in refused.items():
        with pytest.raises(LabkitError) as err:
            parse_shard(text)
        assert err.value.code == "invalid_argument" and said in err.value.message, text
    for environ, said in [
        ({}, "JOB_COMPLETION_INDEX"),
        ({"JOB_COMPLETION_INDEX": "1"}, "LABKIT_SHARD_TOTAL is not"),
        ({**env, "LABKIT_SHARD_INDEX": "6"}, "disagree"),
        ({"JOB_COMPLETION_INDEX": "x", "LABKIT_SHARD_TOTAL": "4"}, "whole number"),
        ({"JOB_COMPLETION_INDEX": "16", "LABKIT_SHARD_TOTAL": "16"}, "does not exist"),
    ]:
        with pytest.raises(LabkitError) as err:
            parse_shard("env", environ)
        assert err.value.code == "invalid_argument" and said in err.value.message, environ


def test_slices_never_overlap_nor_miss_a_submission_and_never_move():
    names = [f"learner-{i:04d}/lab.ipynb" for i in range(2000)] + ["ü/\udcff.ipynb"]
    for total in (1, 2, 4, 16, 256):
        held = [shards.in_shard(names, Shard(k, total)) for k in range(total)]
        assert sorted(n for part in held for n in part) == sorted(names)
        if total == 4:
            assert all(430 <= len(part) <= 570 for part in held), [len(p) for p in held]  # about a quarter each
    # the hash is part of the format: a shard graded by another labkit must land the same submissions
    assert [slice_of(f"learner-{i:04d}/lab.ipynb", 16) for i in range(6)] == [
        slice_of(f"learner-{i:04d}/lab.ipynb", 16) for i in range(6)
    ]
    assert slice_of("alice.ipynb", 4) == int.from_bytes(__import__("hashlib").sha256(b"alice.ipynb").digest()[:8]) % 4


# -- the gradebook, however the class is cut ------------------------------------------------------------------


def test_every_run_is_a_shard_and_records_what_graded_it(graded):
    result = graded["result"]
    assert result["shard"] == {"index": 0, "total": 1} and result["classSize"] == 24
    assert "shard.json" in result["files"]
    manifest = json.loads((graded["whole"] / "shard.json").read_text("utf-8"))
    assert manifest["labsSha256"] == result["labsSha256"] == shards.versions()[0]
    assert set(manifest["labs"]) >= {LAB} and manifest["class"]["count"] == 24
    part = json.loads((graded["four"][2] / "shard.json").read_text("utf-8"))
    assert part["shard"] == {"index": 2, "total": 4}
    assert part["submissions"] == [n for n in manifest["class"]["submissions"] if slice_of(n, 4) == 2]
    assert not any(os.path.isabs(n) for n in part["class"]["submissions"])
    assert str(graded["work"]) not in (graded["four"][2] / "shard.json").read_text("utf-8")


def test_the_merged_gradebook_is_byte_identical_for_1_4_and_16_shards_and_a_rerun(graded, tmp_path):
    books = {}
    for label, dirs in [("1", [graded["whole"]]), ("4", graded["four"]), ("16", graded["sixteen"])]:
        proc = _cli("labs", "grade-merge", *map(str, dirs), "--out", str(tmp_path / label), "--json")
        assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
        merged = json.loads(proc.stdout)
        assert merged["complete"] is True and merged["merged"] == list(range(int(label)))
        assert merged["classSize"] == 24 and len(merged["submissions"]) == 24
        books[label] = _book(tmp_path / label)
    again = tmp_path / "again-1"
    proc = _cli("labs", "grade", str(graded["subs"]), "--out", str(again), "--shard", "1/4")
    assert proc.returncode == 0, proc.stderr[-2000:]
    four = graded["four"]
    assert (
        _cli(
            "labs", "grade-merge", str(four[0]), str(again), str(four[2]), str(four[3]), "--out", str(tmp_path / "r")
        ).returncode
        == 0
    )
    books["re-run"] = _book(tmp_path / "r")
    assert len(set(books.values())) == 1
    csv_text = books["1"][0].decode()
    assert csv_text.count("\n") == 25 and "unknown_lab" in csv_text and "unreadable" in csv_text


def test_the_indexed_job_reads_its_index_from_the_environment(graded, tmp_path):
    """Each pod of an indexed job: JOB_COMPLETION_INDEX from Kubernetes, LABKIT_SHARD_TOTAL from the spec."""
    dirs = []
    procs = []
    for k in range(2):
        env = {**os.environ, "JOB_COMPLETION_INDEX": str(k), "LABKIT_SHARD_TOTAL": "2"}
        env.pop("LABKIT_SHARD_INDEX", None)
        dirs.append(tmp_path / f"pod-{k}")
        cmd = [
            sys.executable,
            "-m",
            "labkit",
            "labs",
            "grade",
            str(graded["subs"]),
            "--out",
            str(dirs[-1]),
            "--shard",
            "env",
        ]
        procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
    for p in procs:
        assert p.wait(timeout=900) == 0, p.stderr.read()[-2000:]
    assert [json.loads((d / "shard.json").read_text())["shard"] for d in dirs] == [
        {"index": 0, "total": 2},
        {"index": 1, "total": 2},
    ]
    assert _cli("labs", "grade-merge", *map(str, dirs), "--out", str(tmp_path / "m")).returncode == 0
    assert _book(tmp_path / "m") == _merged_whole(graded, tmp_path)
    env = {**os.environ, "JOB_COMPLETION_INDEX": "1"}
    env.pop("LABKIT_SHARD_TOTAL", None)
    err = _error(
        _cli("labs", "grade", str(graded["subs"]), "--out", str(tmp_path / "x"), "--shard", "env", "--json", env=env)
    )
    assert err["code"] == "invalid_argument" and "LABKIT_SHARD_TOTAL" in err["message"]
    assert not (tmp_path / "x").exists()


def _merged_whole(graded, tmp_path) -> tuple[bytes, bytes]:
    out = tmp_path / "whole-merged"
    if not out.exists():
        assert _cli("labs", "grade-merge", str(graded["whole"]), "--out", str(out)).returncode == 0
    return _book(out)


# -- the examples in docs/grading.md, run as far as this machine allows ----------------------------------------


def _yaml_blocks() -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", DOCS.read_text("utf-8"), flags=re.S)


ROOT_PREFIX = 'sudo -E env "PATH=$PATH" '  # the runner's user is not root; this machine's tests run as root


def test_the_github_actions_matrix_runs_as_local_processes(graded, tmp_path):
    (workflow,) = [yaml.safe_load(b) for b in _yaml_blocks() if "strategy" in b]
    grade_job, merge_job = workflow["jobs"]["grade"], workflow["jobs"]["merge"]
    values = grade_job["strategy"]["matrix"]["shard"]
    assert values == list(range(len(values))) and merge_job["needs"] == "grade"
    (grade_run,) = [s["run"] for s in grade_job["steps"] if "labs grade " in s.get("run", "")]
    upload = next(s for s in grade_job["steps"] if s.get("uses", "").startswith("actions/upload-artifact"))
    download = next(s for s in merge_job["steps"] if s.get("uses", "").startswith("actions/download-artifact"))
    (merge_run,) = [s["run"] for s in merge_job["steps"] if "grade-merge" in s.get("run", "")]
    assert grade_run.startswith(ROOT_PREFIX)
    cwd = tmp_path / "runner"
    shutil.copytree(graded["subs"], cwd / "submissions")
    env = {**os.environ, "PATH": BIN + os.pathsep + os.environ["PATH"]}

    def expand(text: str, shard: int) -> str:
        return text.replace("${{ matrix.shard }}", str(shard)).replace("${{ strategy.job-total }}", str(len(values)))

    procs = [  # the matrix: one process per shard, at once
        subprocess.Popen(
            ["bash", "-c", expand(grade_run, k).removeprefix(ROOT_PREFIX)], cwd=cwd, env=env, stderr=subprocess.PIPE
        )
        for k in values
    ]
    for p in procs:
        assert p.wait(timeout=900) == 0, p.stderr.read()[-2000:]
    for k in values:  # upload-artifact, then download-artifact with a pattern: shards/<artifact name>/
        name, path = expand(upload["with"]["name"], k), expand(upload["with"]["path"], k)
        shutil.copytree(cwd / path, cwd / download["with"]["path"] / name)
    assert re.fullmatch(download["with"]["pattern"].replace("*", r"\d+"), expand(upload["with"]["name"], 0))
    proc = subprocess.run(["bash", "-c", merge_run], cwd=cwd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = merge_run.split("--out ")[1].split()[0]
    assert _book(cwd / out) == _merged_whole(graded, tmp_path)


def test_the_kubernetes_indexed_job_runs_its_pods_command(graded, tmp_path):
    job, merge_job = [d for b in _yaml_blocks() if "completionMode" in b for d in yaml.safe_load_all(b)]
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed"
    (container,) = spec["template"]["spec"]["containers"]
    env_spec = {e["name"]: e["value"] for e in container["env"]}
    assert int(env_spec["LABKIT_SHARD_TOTAL"]) == spec["completions"]
    assert "JOB_COMPLETION_INDEX" not in env_spec  # Kubernetes sets it in each pod
    assert container["command"][:2] == ["sh", "-c"] and "--shard env" in container["command"][2]
    (merger,) = merge_job["spec"]["template"]["spec"]["containers"]

    def local(command: str) -> str:  # the pods' paths, under this test's folder
        return command.replace("/class/", f"{tmp_path}/class/").replace("/grades/", f"{tmp_path}/grades/")

    shutil.copytree(graded["subs"], tmp_path / "class" / "submissions")
    (tmp_path / "grades").mkdir()
    base = {k: v for k, v in os.environ.items() if not k.startswith(("LABKIT_SHARD", "JOB_COMPLETION"))}
    base["PATH"] = BIN + os.pathsep + base["PATH"]
    for k in range(spec["completions"]):  # 16 pods, at most 4 at once here
        if k % 4 == 0:
            batch = []
        pod_env = {**base, **env_spec, "JOB_COMPLETION_INDEX": str(k)}
        batch.append(
            subprocess.Popen(
                container["command"][:2] + [local(container["command"][2])], env=pod_env, stderr=subprocess.PIPE
            )
        )
        if len(batch) == 4 or k == spec["completions"] - 1:
            for p in batch:
                assert p.wait(timeout=900) == 0, p.stderr.read()[-2000:]
    proc = subprocess.run(
        merger["command"][:2] + [local(merger["command"][2])], env=base, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _book(tmp_path / "grades" / "gradebook") == _merged_whole(graded, tmp_path)


# -- refusals: a stable code, a clear message, nothing written --------------------------------------------------


def _refused(dirs, out: Path, code: str, said: str, *extra) -> None:
    before = sorted(p.name for p in out.parent.iterdir())
    err = _error(_cli("labs", "grade-merge", *map(str, dirs), "--out", str(out), "--json", *extra))
    assert err["code"] == code and said in err["message"], err
    assert str(out.parent) not in err["message"]
    assert sorted(p.name for p in out.parent.iterdir()) == before  # no --out made, nothing left behind


def _copy(src: Path, dst: Path, edit=None) -> Path:
    shutil.copytree(src, dst)
    if edit:
        data = json.loads((dst / "shard.json").read_text("utf-8"))
        edit(data)
        (dst / "shard.json").write_text(json.dumps(data), "utf-8")
    return dst


def test_missing_shards_are_refused_unless_allowed(graded, tmp_path):
    four = graded["four"]
    _refused([four[0], four[1], four[3]], tmp_path / "m", "shard_missing", "1 of 4 shard(s) missing (shard 2)")
    proc = _cli(
        "labs",
        "grade-merge",
        str(four[0]),
        str(four[1]),
        str(four[3]),
        "--out",
        str(tmp_path / "m"),
        "--allow-missing",
        "--json",
    )
    assert proc.returncode == 0, proc.stdout
    result = json.loads(proc.stdout)
    assert result["complete"] is False and result["missingShards"] == [2] and result["merged"] == [0, 1, 3]
    lost = [s for s in result["submissions"] if s["status"] == "shard_missing"]
    held = json.loads((four[2] / "shard.json").read_text("utf-8"))["submissions"]
    assert [s["submission"] for s in lost] == held and all("2/4" in s["notes"][0] for s in lost)
    assert "Incomplete gradebook" in (tmp_path / "m" / "grades.html").read_text("utf-8")
    assert len(result["submissions"]) == 24


def test_overlapping_mismatched_and_duplicated_shards_are_refused(graded, tmp_path):
    four, work = graded["four"], tmp_path
    _refused([*four, four[1]], work / "m", "shard_overlap", "both hold shard 1/4")
    two = work / "two-0"
    grade([graded["subs"]], two, GradeOptions(jobs=1), Shard(0, 2))
    _refused([two, *four], work / "m", "shard_mismatch", "is shard 0/2")
    slow = work / "slow-1"
    assert (
        _cli("labs", "grade", str(graded["subs"]), "--out", str(slow), "--shard", "1/4", "--timeout", "300").returncode
        == 0
    )
    _refused([four[0], slow, four[2], four[3]], work / "m", "shard_mismatch", "different timeout (600 and 300)")

    # another commit of the labs: the manifest as such a grader writes it (its lab 02 checker changed)
    def other_commit(data):
        data["labsSha256"] = "sha256:0000000000000000"
        data["labs"][LAB] = "sha256:1111111111111111"

    other = _copy(four[3], work / "other-3", other_commit)
    _refused([four[0], four[1], four[2], other], work / "m", "shard_mismatch", f"labs that differ: {LAB}")

    # a hand-in that arrived between two jobs: the shards found different classes
    late = work / "late"
    shutil.copytree(graded["subs"], late)
    (late / "learner-99").mkdir()
    (late / "learner-99" / "lab.ipynb").write_text("{", "utf-8")
    late_dirs = []
    for k in range(4):
        late_dirs.append(work / f"late-{k}")
        grade([late], late_dirs[-1], GradeOptions(jobs=1), Shard(k, 4))
    _refused([four[0], four[1], *late_dirs[2:]], work / "m", "shard_mismatch", "only late-2 found learner-99/lab.ipynb")

    # a submission recorded by a shard whose slice does not hold it, and one recorded twice
    def steal(data):
        theirs = json.loads((four[1] / "shard.json").read_text("utf-8"))
        data["submissions"].append(theirs["submissions"][0])
        data["outcomes"].append(theirs["outcomes"][0])

    thief = _copy(four[0], work / "thief-0", steal)
    _refused([thief, *four[1:]], work / "m", "shard_duplicate", "is recorded by thief-0 and by four-1")
    _refused([thief, *four[2:]], work / "m", "shard_duplicate", "which belongs to shard 1/4")


def test_malformed_shards_are_refused_and_an_old_gradebook_stays(graded, tmp_path):
    four = graded["four"]
    out = tmp_path / "gradebook"
    assert _cli("labs", "grade-merge", *map(str, four), "--out", str(out)).returncode == 0
    old = _book(out)
    cut = _copy(four[1], tmp_path / "cut-1")
    text = (cut / "shard.json").read_text("utf-8")
    (cut / "shard.json").write_text(text[: len(text) // 2], "utf-8")
    err = _error(_cli("labs", "grade-merge", str(four[0]), str(cut), *map(str, four[2:]), "--out", str(out), "--json"))
    assert err["code"] == "shard_malformed" and "cut short" in err["message"]
    assert _book(out) == old
    _refused([tmp_path / "nothing-here"], tmp_path / "m", "file_not_found", "no such shard folder")
    empty = tmp_path / "empty"
    empty.mkdir()
    _refused([empty], tmp_path / "m", "shard_malformed", "holds no shard.json")
    link = _copy(four[1], tmp_path / "link-1")
    (link / "shard.json").unlink()
    (link / "shard.json").symlink_to(four[1] / "shard.json")
    _refused([four[0], link, *four[2:]], tmp_path / "m", "shard_malformed", "cannot be opened")

    def escape(data):  # an executed copy named outside the folder
        data["outcomes"][0]["executed"] = "executed/../../../etc/passwd"

    _refused(
        [four[0], _copy(four[1], tmp_path / "esc-1", escape), *four[2:]], tmp_path / "m", "shard_malformed", "malformed"
    )

    def absent(data):
        data["outcomes"][0]["executed"] = "executed/not-there.ipynb"

    _refused(
        [four[0], _copy(four[1], tmp_path / "abs-1", absent), *four[2:]],
        tmp_path / "m",
        "shard_malformed",
        "is missing",
    )
    err = _error(_cli("labs", "grade-merge", *map(str, four), "--out", str(four[0]), "--json"))
    assert err["code"] == "invalid_argument" and "one of the shards' folders" in err["message"]


def test_a_submission_folder_named_merge_is_graded_not_merged(tmp_path):
    subs = _fast_class(tmp_path / "merge", 2)
    proc = _cli("labs", "grade", str(subs), "--out", str(tmp_path / "out"), "--json", cwd=tmp_path)
    assert proc.returncode == 0 and len(json.loads(proc.stdout)["submissions"]) == 2
    err = _error(_cli("labs", "grade", "merge", "--out", str(tmp_path / "o2"), "--json", cwd=tmp_path / "out"))
    assert err["code"] == "file_not_found" and "labkit labs grade-merge" in err["message"]


# -- with kernels ---------------------------------------------------------------------------------------------


def test_kernel_graded_shards_merge_byte_identical_with_executed_copies(tmp_path):
    """Real kernels: wrong, partial and untouched answers; 1 and 4 shards (processes) and a re-run agree."""
    subs = _fast_class(tmp_path / "subs", 6)
    qs = list(exercises_of(LAB))
    values = ["1", "'staged'", "...", "{'hidden': 3}"]
    for i in range(5):
        nb = nbformat.v4.new_notebook()
        nb.metadata["labkit"] = {"lab": LAB, "kind": "starter"}
        nb.cells.append(nbformat.v4.new_code_cell("from labkit.course.check import lab02"))
        nb.cells += [nbformat.v4.new_code_cell(f"answer_{q} = {values[(i + n) % 4]}") for n, q in enumerate(qs)]
        (subs / f"kernel-{i}").mkdir()
        nbformat.write(nb, subs / f"kernel-{i}" / "lab.ipynb")
    whole = tmp_path / "whole"
    assert _cli("labs", "grade", str(subs), "--out", str(whole), "--jobs", "2").returncode == 0
    four = _matrix(subs, tmp_path, 4, "four", ("--jobs", "1"))
    again = tmp_path / "again-2"
    assert _cli("labs", "grade", str(subs), "--out", str(again), "--shard", "2/4", "--jobs", "1").returncode == 0
    books = []
    for i, dirs in enumerate([[whole], four, [four[0], four[1], again, four[3]]]):
        out = tmp_path / f"m{i}"
        proc = _cli("labs", "grade-merge", *map(str, dirs), "--out", str(out), "--json")
        assert proc.returncode == 0, proc.stdout
        result = json.loads(proc.stdout)
        graded = [s for s in result["submissions"] if s["status"] == "graded"]
        assert len(graded) == 5 and all((out / s["executed"]).is_file() for s in graded)
        books.append(_book(out))
    assert books[0] == books[1] == books[2]
    assert b"incorrect" in books[0][0] and b"not_attempted" in books[0][0]


def test_the_readme_shows_the_same_two_ci_examples():
    readme = (DOCS.parents[1] / "README.md").read_text("utf-8")
    scale = readme.split("## Scale", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```yaml\n(.*?)```", scale, flags=re.S)
    assert blocks == [b for b in _yaml_blocks() if "strategy" in b or "completionMode" in b] and len(blocks) == 2
