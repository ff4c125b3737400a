"""``labkit labs grade`` on real executed notebooks: right, wrong, empty, and each hostile kind.

One grading run (the real CLI, real kernels, the strongest sandbox the machine
allows) covers the whole matrix; the tests below read its JSON result, its
files and the executed copies. Lab 02 is the graded lab. Two submissions are
the full starter (untouched, and with every solution pasted in); the others
are short notebooks that assign the answers as literal values, taken from
one stock-nbclient run of the right notebook, plus one hostile cell each, so
the matrix stays fast.
"""

from __future__ import annotations

import csv
import json
import os
import socket
import subprocess
import sys
import threading

import nbformat
import pytest

from labkit.course import answer_codec, gradebook
from labkit.course.grade import Outcome, exercises_of, find_submissions, grading_notebook, read_submission, verdicts
from labkit.course.labfiles import read_lab
from labkit.course.starter import make_starter

LAB = "02-git-status-and-diff"
SECRET = "labkit-test-secret-4b1d"


def _starter():
    return make_starter(read_lab(LAB), LAB)


def _with_solutions(nb):
    exercises = exercises_of(LAB)
    for cell in nb.cells:
        if "exercise" in cell.metadata.get("tags", []):
            q = cell.source.split(" =")[0].removeprefix("answer_")
            cell.source = exercises[q].solution().code
    return nb


def _short(answers: dict, *hostile: str, checks: bool = True):
    """A short submission: labkit metadata, one hostile cell or more, the answer cells, the check cells."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["labkit"] = {"lab": LAB, "kind": "starter"}
    nb.cells.append(nbformat.v4.new_code_cell("from labkit.course.check import lab02"))
    nb.cells.extend(nbformat.v4.new_code_cell(src) for src in hostile)
    for q in exercises_of(LAB):
        nb.cells.append(nbformat.v4.new_code_cell(f"answer_{q} = {answers[q]}"))
        if checks:
            nb.cells.append(nbformat.v4.new_code_cell(f"lab02.{q}.check(answer_{q})"))
    return nb


class _Listener:
    """A TCP server on the host's loopback: a sandboxed kernel must not reach it."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(5)
        self.port = self.sock.getsockname()[1]
        self.hits = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.hits += 1
            conn.close()


SPY = """
import glob, os, socket
found = {}
for label, p in [("other", OTHER), ("out", OUT), ("parent_environ", "/proc/%d/environ" % os.getppid()),
                 ("init_environ", "/proc/1/environ")]:
    try:
        found[label] = "read:" + (",".join(sorted(os.listdir(p))) if os.path.isdir(p) else str(len(open(p, "rb").read())))
    except Exception as e:
        found[label] = "blocked:" + type(e).__name__
try:
    open(os.path.join(OUT, "grades.csv"), "w").write("forged")
    found["write_out"] = "wrote"
except Exception as e:
    found["write_out"] = "blocked:" + type(e).__name__
found["siblings"] = sorted(p.rsplit("/", 1)[-1] for p in glob.glob(os.path.dirname(os.getcwd().rstrip("/")) + "/../*"))
found["secret_in_env"] = any(SECRET in v for v in os.environ.values())
try:
    socket.create_connection(("127.0.0.1", PORT), timeout=3).close()
    found["net"] = "connected"
except Exception as e:
    found["net"] = "blocked:" + type(e).__name__
found["uid"] = os.getuid()
print("SPY", found)
"""


def _cli(*args, env=None, timeout=900):
    return subprocess.run(
        [sys.executable, "-m", "labkit", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


@pytest.fixture(scope="module")
def reference() -> dict:
    """The right answers as plain values: the full right notebook run once under stock nbclient, printing them."""
    import ast
    import tempfile

    from nbclient import NotebookClient

    nb = _with_solutions(_starter())
    qs = list(exercises_of(LAB))
    nb.cells.append(nbformat.v4.new_code_cell("print(repr({" + ", ".join(f"'{q}': answer_{q}" for q in qs) + "}))"))
    with tempfile.TemporaryDirectory() as tmp:
        NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": tmp}}).execute()
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("output_type") == "stream")
    values = ast.literal_eval(text.strip())
    assert set(values) == set(qs)
    return values


@pytest.fixture(scope="module")
def matrix(tmp_path_factory, reference):
    """One CLI run over every kind of submission."""
    subs = tmp_path_factory.mktemp("submissions")
    out = tmp_path_factory.mktemp("grades")
    listener = _Listener()
    right = {q: repr(v) for q, v in reference.items()}
    wrong = {
        q: ("1" if q == "q2" else "{'paths': ['nothing.txt'], 'hidden': 9, 'visible': [], 'x.ts': 'staged'}")
        for q in reference
    }
    wrong_types = dict(right)
    wrong_types.update(
        q1="(lambda: 1)",
        q2=repr([reference["q2"]]),  # lab 02 Q2 is a prediction (a str): give a list instead
        q3="type('Yes', (dict,), {'__eq__': lambda s, o: True})(hidden=0)",
        q4="type('Yes', (), {'__eq__': lambda s, o: True})()",
    )
    nbformat.write(_with_solutions(_starter()), subs / "right.ipynb")
    nbformat.write(_starter(), subs / "empty.ipynb")
    nbformat.write(_short(wrong), subs / "wrong.ipynb")
    nbformat.write(_short(wrong_types), subs / "wrong_types.ipynb")
    nbformat.write(_short(right, "def broken(:\n    pass"), subs / "syntax_error.ipynb")
    nbformat.write(_short(right, "while True:\n    pass"), subs / "infinite_loop.ipynb")
    nbformat.write(
        _short(
            right,
            "import time\nwhile True:\n    try:\n        time.sleep(0.5)\n    except KeyboardInterrupt:\n        pass",
        ),
        subs / "stubborn_loop.ipynb",
    )
    nbformat.write(_short(right, "import sys\nsys.exit(3)"), subs / "sys_exit.ipynb")
    nbformat.write(_short(right, "import os\nos._exit(0)"), subs / "os_exit.ipynb")
    nbformat.write(
        _short(
            wrong,
            "from labkit.course.check import CheckResult\n"
            "for q in (lab02.q1, lab02.q2, lab02.q3, lab02.q4):\n"
            "    q.check = lambda a, q=q: CheckResult(q.name, 'correct', 'well done.')",
        ),
        subs / "edited_checks.ipynb",
    )
    nbformat.write(_short(right, checks=False), subs / "deleted_checks.ipynb")
    spy = (
        SPY.replace("OTHER", repr(str(subs / "right.ipynb")))
        .replace("OUT", repr(str(out)))
        .replace("SECRET", repr(SECRET))
        .replace("PORT", str(listener.port))
    )
    nbformat.write(_short(right, spy), subs / "spy.ipynb")
    nbformat.write(
        _short(right, "for i in range(100_000):\n    print('spam ' * 40)", "print('x' * (80 << 20))"),
        subs / "huge_output.ipynb",
    )
    nbformat.write(_short(right, "hog = bytearray(8 << 30)"), subs / "memory_hog.ipynb")
    no_meta = _short(right)
    no_meta.metadata.pop("labkit")
    nbformat.write(no_meta, subs / "no_metadata.ipynb")
    (subs / "not_a_notebook.ipynb").write_text("{this is not json", "utf-8")
    (subs / "nested").mkdir()
    nbformat.write(_short(right), subs / "nested" / "right.ipynb")
    env = {**os.environ, "LABKIT_SECRET_TOKEN": SECRET}
    proc = _cli(
        "labs",
        "grade",
        str(subs),
        "--out",
        str(out),
        "--jobs",
        "2",
        "--timeout",
        "45",
        "--cell-timeout",
        "8",
        "--json",
        env=env,
    )
    listener.sock.close()
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(proc.stdout)
    return {
        "result": data,
        "out": out,
        "subs": subs,
        "listener": listener,
        "by_name": {s["submission"]: s for s in data["submissions"]},
    }


def _statuses(sub) -> dict:
    return {q: e["status"] for q, e in sub["exercises"].items()}


def _all(sub, status) -> bool:
    return len(sub["exercises"]) == len(exercises_of(LAB)) and set(_statuses(sub).values()) == {status}


def test_reference_values_pass_the_checkers_in_process(reference):
    answers = {f"answer_{q}": v for q, v in reference.items()}
    assert set(_statuses({"exercises": verdicts(LAB, answers)}).values()) == {"correct"}


@pytest.mark.notebook
@pytest.mark.slow
def test_every_submission_gets_a_status_and_the_run_exits_0(matrix):
    result = matrix["result"]
    assert len(result["submissions"]) == 17 and result["graderFailed"] == 0
    assert (
        result["processes"]
        == {"namespaces": "pid_namespace", "user": "user_id", "none": "process_group"}[result["isolation"]]
    )
    assert set(matrix["by_name"]) >= {"right.ipynb", "nested/right.ipynb", "not_a_notebook.ipynb"}
    assert not any(os.path.isabs(s["submission"]) for s in result["submissions"])
    assert str(matrix["subs"]) not in json.dumps(result["submissions"])


@pytest.mark.notebook
@pytest.mark.slow
def test_right_wrong_and_empty(matrix):
    by = matrix["by_name"]
    assert by["right.ipynb"]["status"] == "graded" and _all(by["right.ipynb"], "correct")
    assert by["nested/right.ipynb"]["score"] == len(exercises_of(LAB))
    assert by["empty.ipynb"]["status"] == "graded" and _all(by["empty.ipynb"], "not_attempted")
    assert by["wrong.ipynb"]["status"] == "graded" and _all(by["wrong.ipynb"], "incorrect")
    assert by["wrong.ipynb"]["score"] == 0


@pytest.mark.notebook
@pytest.mark.slow
def test_verdicts_ignore_what_the_notebook_printed(matrix):
    edited = matrix["by_name"]["edited_checks.ipynb"]
    assert _all(edited, "incorrect") and not any("check cell" in n for n in edited["notes"])
    executed = nbformat.read(matrix["out"] / edited["executed"], as_version=4)
    printed = json.dumps([c.get("outputs", []) for c in executed.cells])
    assert "well done." in printed  # the kernel's patched checks said "correct"; the grade did not listen
    deleted = matrix["by_name"]["deleted_checks.ipynb"]
    assert _all(deleted, "correct") and any("check cell removed or edited" in n for n in deleted["notes"])


@pytest.mark.notebook
@pytest.mark.slow
def test_wrong_answer_types_never_reach_the_checker_as_learner_objects(matrix):
    sub = matrix["by_name"]["wrong_types.ipynb"]
    st = _statuses(sub)
    assert st["q1"] == "unsupported" and "function" in sub["exercises"]["q1"]["message"]
    assert st["q2"] == "incorrect"  # a list where a str is expected: the checker says so
    assert st["q3"] == "incorrect"  # a dict subclass that equals everything arrives as a plain dict
    assert st["q4"] == "unsupported" and "Yes" in sub["exercises"]["q4"]["message"]


@pytest.mark.notebook
@pytest.mark.slow
def test_failing_cells_do_not_stop_the_grading(matrix):
    by = matrix["by_name"]
    syntax = by["syntax_error.ipynb"]
    assert _all(syntax, "correct") and any("SyntaxError" in n for n in syntax["notes"])
    loop = by["infinite_loop.ipynb"]
    assert _all(loop, "correct") and any("timed out after 8 s" in n for n in loop["notes"])
    sys_exit = by["sys_exit.ipynb"]
    assert _all(sys_exit, "correct") and any("SystemExit" in n for n in sys_exit["notes"])
    memory = by["memory_hog.ipynb"]
    assert _all(memory, "correct") and any("MemoryError" in n for n in memory["notes"])


@pytest.mark.notebook
@pytest.mark.slow
def test_submissions_that_cannot_be_graded_get_a_clear_status(matrix):
    by = matrix["by_name"]
    assert by["stubborn_loop.ipynb"]["status"] == "timeout" and _all(by["stubborn_loop.ipynb"], "not_graded")
    assert by["os_exit.ipynb"]["status"] == "kernel_died"
    assert by["no_metadata.ipynb"]["status"] == "unknown_lab" and by["no_metadata.ipynb"]["exercises"] == {}
    assert by["not_a_notebook.ipynb"]["status"] == "unreadable"


@pytest.mark.notebook
@pytest.mark.slow
def test_huge_output_is_capped_and_the_answers_still_arrive(matrix):
    sub = matrix["by_name"]["huge_output.ipynb"]
    assert sub["status"] == "graded" and _all(sub, "correct")
    assert any("output truncated" in n for n in sub["notes"]) and any("stopped arriving" in n for n in sub["notes"])
    assert (matrix["out"] / sub["executed"]).stat().st_size < 5_000_000


@pytest.mark.notebook
@pytest.mark.slow
def test_a_kernel_reaches_neither_other_submissions_nor_the_grader(matrix):
    if matrix["result"]["isolation"] != "namespaces":
        pytest.skip(
            f"isolation here is {matrix['result']['isolation']!r}: docs/grading.md says what a kernel "
            "can reach without namespaces"
        )
    sub = matrix["by_name"]["spy.ipynb"]
    assert _all(sub, "correct")
    executed = nbformat.read(matrix["out"] / sub["executed"], as_version=4)
    line = next(
        o["text"]
        for c in executed.cells
        for o in c.get("outputs", [])
        if o.get("output_type") == "stream" and "SPY" in o.get("text", "")
    )
    import ast

    found = ast.literal_eval(line.split("SPY", 1)[1].strip())
    for key in ("other", "out", "parent_environ", "init_environ", "write_out", "net"):
        assert found[key].startswith("blocked:"), (key, found[key])
    assert found["secret_in_env"] is False
    assert found["uid"] not in (0, os.getuid())
    assert matrix["listener"].hits == 0
    with open(matrix["out"] / "grades.csv", encoding="utf-8") as fh:
        assert "forged" not in fh.read()


@pytest.mark.notebook
@pytest.mark.slow
def test_grades_csv_and_html(matrix):
    out = matrix["out"]
    with open(out / "grades.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    qcols = [f"lab02.{q}" for q in exercises_of(LAB)]
    assert list(rows[0])[:5] == ["submission", "lab", "status", "score", "total"] and list(rows[0])[5:-1] == qcols
    assert len(rows) == len(matrix["result"]["submissions"])
    right = next(r for r in rows if r["submission"] == "right.ipynb")
    assert [right[c] for c in qcols] == ["correct"] * len(qcols) and right["score"] == str(len(qcols))
    html = (out / "grades.html").read_text("utf-8")
    assert "Class distribution per exercise" in html and "02-git-status-and-diff" in html
    assert str(matrix["subs"]) not in html and "<script" not in html
    # the legend names every status with its meaning; the class summary counts the real run's answers
    import html as html_module

    assert all(f"<b>{s}</b>: {html_module.escape(gradebook.MEANINGS[s])}" in html for s in gradebook.EXERCISE_STATUSES)
    by = matrix["by_name"]
    q2 = [sub["exercises"].get("q2", {}).get("status") for sub in by.values() if sub["lab"] == LAB]
    attempted = sum(st in gradebook.ATTEMPTED for st in q2)
    row = html.split("Class summary for")[1].split("<tr><td>q2</td>")[1].split("</tr>")[0]
    assert row.startswith(f"<td>{len(q2)}</td><td>{attempted}</td><td>{q2.count('correct')}</td>"), row
    # wrong.ipynb and edited_checks.ipynb both predicted 1: the most common wrong answer, counted twice
    assert row.index("<code>1</code> × 2") < row.index("<code>[") and "× 1" in row


# -- units: no kernel ---------------------------------------------------------------------------------------


def test_decode_builds_only_plain_values():
    answers = {
        "a": {"$dict": [[{"$tuple": [1, "x"]}, {"$set": [1, 2]}], ["k", {"$frozenset": []}]]},
        "b": [None, True, 1.5, {"$float": "nan"}, {"$bytes": "6869"}, {"$ellipsis": True}],
        "c": {"$missing": True},
        "d": {"$unsupported": "function"},
        "e": {"looks": "like a dict"},
        "f": {"$set": [[1, 2]]},
        "g": {"$unreadable": "nested too deeply"},
    }
    got = answer_codec.decode({"answers": answers}, list("abcdefgh"))
    assert got["a"] == {(1, "x"): {1, 2}, "k": frozenset()}
    assert got["b"][:3] == [None, True, 1.5] and got["b"][4:] == [b"hi", Ellipsis]
    assert isinstance(got["c"], answer_codec.Missing) and isinstance(got["h"], answer_codec.Missing)
    assert isinstance(got["d"], answer_codec.Unsupported) and got["d"].type_name == "function"
    for name in "efg":
        assert isinstance(got[name], answer_codec.Unreadable), name
    deep = {"$tuple": [1]}
    for _ in range(100):
        deep = [deep]
    assert isinstance(answer_codec.decode({"answers": {"x": deep}}, ["x"])["x"], answer_codec.Unreadable)


def test_the_grader_cell_encodes_what_the_kernel_holds(tmp_path):
    """The encoder source, run in a namespace (as the kernel runs it), round-trips through decode."""
    ns = {
        "answer_q1": {"a.py": ("x", 1)},
        "answer_q2": {1, 2},
        "answer_q3": print,
        "answer_q4": type("S", (str,), {"__eq__": lambda s, o: True})("text"),
    }
    path = tmp_path / "answers.json"
    source = answer_codec.grader_cell([f"answer_q{i}" for i in range(1, 6)], str(path))
    exec(compile(source, "grader-cell", "exec"), ns)  # noqa: S102 - our own code
    got = answer_codec.decode(answer_codec.read_payload(str(path)), [f"answer_q{i}" for i in range(1, 6)])
    assert got["answer_q1"] == {"a.py": ("x", 1)} and got["answer_q2"] == {1, 2}
    assert isinstance(got["answer_q3"], answer_codec.Unsupported)
    assert type(got["answer_q4"]) is str and got["answer_q4"] == "text"
    assert isinstance(got["answer_q5"], answer_codec.Missing)
    with pytest.raises(FileExistsError):  # the cell never writes through a file that is already there
        exec(compile(source, "grader-cell", "exec"), dict(ns))  # noqa: S102


def test_read_payload_refuses_links_and_oversize(tmp_path):
    target = tmp_path / "real.json"
    target.write_text('{"answers": {}}')
    (tmp_path / "link.json").symlink_to(target)
    with pytest.raises(answer_codec.Unreadable):
        answer_codec.read_payload(str(tmp_path / "link.json"))
    (tmp_path / "big.json").write_text(" " * (answer_codec.MAX_PAYLOAD_CHARS + 1))
    with pytest.raises(answer_codec.Unreadable):
        answer_codec.read_payload(str(tmp_path / "big.json"))


def test_submissions_are_named_relative_and_read_safely(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / ".ipynb_checkpoints").mkdir()
    nbformat.write(_starter(), tmp_path / "a" / "x.ipynb")
    nbformat.write(_starter(), tmp_path / ".ipynb_checkpoints" / "x-checkpoint.ipynb")
    (tmp_path / "link.ipynb").symlink_to(tmp_path / "a" / "x.ipynb")
    subs = find_submissions([tmp_path])
    assert [s.name for s in subs] == ["a/x.ipynb", "link.ipynb"]
    nb, lab, _ = read_submission(subs[0])
    assert lab == LAB
    assert read_submission(subs[1]).status == "unreadable"
    run = grading_notebook(nb, lab, "/answers.json")
    assert "__labkit_grader_answers" in run.cells[-1].source and run.metadata["kernelspec"]["name"] == "python3"
    with pytest.raises(Exception) as err:
        find_submissions([tmp_path / "missing.ipynb"])
    assert getattr(err.value, "code", None) == "file_not_found"


def test_gradebook_escapes_what_came_from_submissions(tmp_path):
    o = Outcome(
        '=HYPERLINK("http://x")<b>.ipynb',
        LAB,
        "graded",
        exercises={"q1": {"status": "incorrect", "message": "<script>alert(1)</script>"}},
        notes=["-cell 1: SyntaxError"],
    )
    gradebook.write_csv([o], tmp_path / "g.csv")
    rows = list(csv.reader(open(tmp_path / "g.csv", newline="", encoding="utf-8")))
    assert rows[1][0].startswith("'=") and rows[1][-1].startswith("'-")
    gradebook.write_html(
        [o], tmp_path / "g.html", {"isolation": "none", "timeout": 1, "cellTimeout": 1, "memoryMb": 1, "jobs": 1}
    )
    html = (tmp_path / "g.html").read_text("utf-8")
    assert "<script>" not in html and "&lt;script&gt;" in html and "<b>.ipynb" not in html


def test_the_class_summary_counts_attempts_and_ranks_wrong_answers(tmp_path):
    """grades.html's summary: attempted, correct and the wrong answers given most often, with a legend."""

    def sub(name, q1, q2, a1=None, a2=None, m2="not that"):
        o = Outcome(
            name,
            LAB,
            "graded",
            exercises={"q1": {"status": q1, "message": "m1"}, "q2": {"status": q2, "message": m2}},
        )
        o.answers = {"q1": gradebook.answer_text(a1), "q2": gradebook.answer_text(a2)}
        return o

    long_answer = ["x" * 50, "y" * 50]  # too long to show: counted under the checker's message
    outcomes = [
        sub("a", "correct", "incorrect", 1, {"b", "a"}),
        sub("b", "incorrect", "incorrect", 2, {"a", "b"}),  # the same set in another order: one answer
        sub("c", "not_attempted", "incorrect", ..., "<b>x</b>"),
        sub("d", "unsupported", "incorrect", None, long_answer, m2="cut list"),
        sub("e", "missing", "incorrect", None, long_answer, m2="cut list"),
        sub("f", "incorrect", "correct", 2, "right"),
        sub("g", "incorrect", "incorrect", 3, 7),
        sub("h", "correct", "incorrect", 1, 8),
    ]
    outcomes.append(Outcome("broken.ipynb", None, "unreadable"))
    table = gradebook.summary(outcomes)[LAB]
    assert {k: table["q1"][k] for k in ("submissions", "attempted", "correct", "incorrect")} == {
        "submissions": 8,
        "attempted": 6,  # correct, incorrect and unsupported; not_attempted and missing are not attempts
        "correct": 2,
        "incorrect": 3,
    }
    assert [(g["answer"], g["count"]) for g in table["q1"]["wrong"]] == [("2", 2), ("3", 1)]
    wrong = table["q2"]["wrong"]
    assert [(g["answer"], g["count"]) for g in wrong] == [("{'a', 'b'}", 2), (None, 2), ("'<b>x</b>'", 1)]
    assert wrong[1]["message"] == "cut list" and table["q2"]["otherWrong"] == 2  # 7 and 8, past the top three
    page = gradebook.html_text(
        outcomes, {"isolation": "none", "timeout": 1, "cellTimeout": 1, "memoryMb": 1, "jobs": 1}
    )
    assert "<h2>Legend</h2>" in page and all(f"<b>{s}</b>" in page for s in gradebook.EXERCISE_STATUSES)
    assert "repeating-linear-gradient" in page  # a wrong answer is hatched, not told by colour alone
    assert "<code>&#x27;&lt;b&gt;x&lt;/b&gt;&#x27;</code> × 1" in page and "<b>x</b>" not in page
    assert "<i>(answer not shown)</i> × 2" in page and "2 other wrong answer(s)" in page
    assert "aria-label='correct 2, incorrect 3, not_attempted 1, missing 1, unsupported 1'" in page


def test_grader_failure_exits_non_zero(tmp_path):
    nbformat.write(_starter(), tmp_path / "x.ipynb")
    (tmp_path / "out").write_text("a file, not a folder")
    proc = _cli("labs", "grade", str(tmp_path / "x.ipynb"), "--out", str(tmp_path / "out"), "--json")
    assert proc.returncode == 1 and json.loads(proc.stdout)["error"]["code"] == "invalid_argument"
    proc = _cli("labs", "grade", str(tmp_path / "nothing"), "--out", str(tmp_path / "o2"), "--json")
    assert proc.returncode == 1 and json.loads(proc.stdout)["error"]["code"] == "file_not_found"


@pytest.mark.notebook
def test_isolation_none_still_grades(tmp_path, reference):
    """The weakest level (the grader's own user) still runs, limits and grades; it says so in the result."""
    from labkit.course.grade import GradeOptions, grade

    subs = tmp_path / "subs"
    subs.mkdir()
    nbformat.write(_short({q: repr(v) for q, v in reference.items()}, "import sys\nsys.exit(1)"), subs / "r.ipynb")
    result = grade([subs], tmp_path / "out", GradeOptions(jobs=1, timeout=60, cell_timeout=10, isolation="none"))
    sub = result["submissions"][0]
    assert result["isolation"] == "none" and sub["status"] == "graded" and _all(sub, "correct")
    # Honest about the fallback: only the kernel's process group is killed (docs/grading.md, "Processes").
    assert result["processes"] == "process_group"
