"""Fix-it answers in the grader: the checker stays in the grader, the learner's function runs in a sandbox.

A fix-it exercise's answer is a function. The kernel hands over its source (and
what it uses of the notebook) through the grader cell; the grader rebuilds it in
a fresh sandboxed process (:mod:`labkit.course.function_worker`) and its checker
calls it there through :class:`~labkit.course.function_grading.RemoteFunction`.

The fast tests run the worker at isolation level ``none`` (real processes, the
sandbox's own launcher; the grading test in ``test_grade_fixit_run`` below runs
real notebooks at the strongest level the machine allows). Each attack has its
positive control: it forges a Correct verdict where the checker shares a process
with learner code (the notebook, a grader that checks in the kernel, a grader
that runs the function's source itself), and fails here.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib
import json
import linecache
import re
import secrets
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from labkit.course import answer_codec, function_grading, sandbox
from labkit.course.check import fixit
from labkit.course.labfiles import read_lab
from labkit.course.starter import BROKEN_TAG, make_starter

FIXITS = {
    "03-utf8-pagination:q3": "page_end",
    "04-snapshot-drift:q4": "read_diff",
    "07-diff-review-gate:q5": "parse_numstat",
    "07-diff-review-gate:q6": "review_risks",
    "09-pinned-source:q4": "pin",
}


def _exercise(lab: str, q: str):
    return getattr(importlib.import_module(f"labkit.course.check.lab{lab[:2]}"), q)


def _run_cell(namespace: dict, source: str, name: str) -> None:
    """Run ``source`` as IPython runs a cell: its text in linecache, so inspect.getsource finds a function's def."""
    filename = f"<cell {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - the lab's own cells, or this test's


def _notebook(lab: str, *cells: str) -> dict:
    """A namespace like a learner's kernel: the lab's setup cell, then ``cells``."""
    first = next(c for c in read_lab(lab).cells if c.cell_type == "code").source.replace("%matplotlib inline", "")
    namespace: dict = {"__name__": "__main__"}
    _run_cell(namespace, first, f"{lab} setup")
    for i, cell in enumerate(cells):
        _run_cell(namespace, cell, f"{lab} {i}")
    return namespace


def _lab_cell(lab: str, tag: str, needle: str) -> str:
    cell = next(c for c in read_lab(lab).cells if tag in c.metadata.get("tags", []) and needle in c.source)
    return "\n".join(line for line in cell.source.splitlines() if ".probe(" not in line)


def _hand_over(namespace: dict, name: str, tmp_path: Path):
    """What the grader reads: the real grader cell run in the namespace, its file decoded."""
    path = tmp_path / f"answers-{secrets.token_hex(4)}.json"
    exec(compile(answer_codec.grader_cell([name], str(path)), "grader cell", "exec"), namespace)  # noqa: S102
    return answer_codec.decode(answer_codec.read_payload(str(path)), [name])[name]


def _judge(exercise, answer, tmp_path: Path):
    """Judge a function answer as the grader does, its process at level none; also what of it survived."""
    base = sandbox.SandboxSpec(level="none", workdir=str(tmp_path), runtime=str(tmp_path), env={})
    spec, spec_path = function_grading.sandbox_for_function(base, tmp_path / f"fn-{secrets.token_hex(4)}")
    left: list[str] = []
    status, message = function_grading.judge(exercise, answer, spec, spec_path, left)
    return status, message, left


# -- what travels -------------------------------------------------------------------------------------------


def test_a_function_travels_as_its_source_helpers_and_references(tmp_path):
    ns = _notebook(
        "07-diff-review-gate",
        "import re\nimport threading\nfrom labkit.git.pager import is_continuation\nLIMIT = 3\n"
        "PATTERN = re.compile(r'[a-z]+', re.I)\nLOCK = threading.Lock()\n",
        "def helper(x):\n    return x[:LIMIT]\n",
        "def risks(files, allow):\n    LOCK\n    return [helper(f) for f in files if PATTERN.match(f) and re.escape(f)"
        " and is_continuation(0x80)]\n",
        "answer_q6 = risks\nnested = None\n",
    )
    answer = _hand_over(ns, "answer_q6", tmp_path)
    assert isinstance(answer, answer_codec.FunctionAnswer) and answer.name == "risks"
    payload = answer.payload
    assert payload["source"].startswith("def risks(files, allow):") and payload["helpers"][0][0] == "helper"
    carried = dict(map(tuple, [(n, json.dumps(v)) for n, v in payload["globals"]]))
    assert json.loads(carried["re"]) == {"$module": "re"}
    assert json.loads(carried["is_continuation"]) == {"$import": ["labkit.git.pager", "is_continuation"]}
    assert json.loads(carried["LIMIT"]) == 3 and "$regex" in json.loads(carried["PATTERN"])
    assert answer.uncarried == [("LOCK", "lock")]  # a lock cannot travel: named, so a NameError can be explained
    # what cannot travel as a function says why
    ns = _notebook("03-utf8-pagination", "answer_q3 = lambda data, offset, max_bytes: 0\n")
    assert "lambda" in _hand_over(ns, "answer_q3", tmp_path).type_name
    ns = _notebook(
        "03-utf8-pagination", "def make():\n    k = 1\n    def f(d, o, m):\n        return k\n    return f\n"
    )
    ns["answer_q3"] = ns["make"]()
    assert "nested" in _hand_over(ns, "answer_q3", tmp_path).type_name


def test_a_function_payload_of_the_wrong_shape_is_unreadable():
    good = {"name": "f", "source": "def f(): pass", "helpers": [], "globals": [], "uncarried": []}
    bad = [
        {**good, "name": "os.system"},
        {**good, "helpers": [["x y", "def f(): pass"]]},
        {**good, "globals": [["m", {"$module": "os; import sys"}]]},
        {**good, "globals": [["m", {"$import": ["os", "system()"]}]]},
        {**good, "globals": [["v", {"$verdict": "correct"}]]},
        {**good, "extra": 1},
    ]
    got = answer_codec.decode({"answers": {f"a{i}": {"$function": b} for i, b in enumerate([good, *bad])}},
                              [f"a{i}" for i in range(len(bad) + 1)])  # fmt: skip
    assert isinstance(got["a0"], answer_codec.FunctionAnswer)
    assert all(isinstance(got[f"a{i}"], answer_codec.Unreadable) for i in range(1, len(bad) + 1))


# -- every fix-it exercise, through the sandbox: the same verdicts as in the notebook ---------------------


@pytest.mark.parametrize("key", sorted(FIXITS))
def test_the_lab_solution_and_the_broken_version_get_the_notebook_verdicts(key, tmp_path):
    lab, q = key.split(":")
    exercise, function = _exercise(lab, q), FIXITS[key]
    for tag, needle, name, want in (
        ("solution", f"answer_{q}", f"answer_{q}", "correct"),
        (BROKEN_TAG, f"def {function}(", function, "incorrect"),
    ):
        ns = _notebook(lab, _lab_cell(lab, tag, needle))
        in_notebook = exercise.check(ns[name])
        status, message, left = _judge(exercise, _hand_over(ns, name, tmp_path), tmp_path)
        assert (status, message) == (in_notebook.status, in_notebook.message) and status == want, (tag, message)
        assert left == []


# -- attacks ---------------------------------------------------------------------------------------------------

# A pager cut at the byte limit (promise 2 breaks: a page splits a character), defined with a default argument whose
# value is computed when the def runs: it replaces the checker's verdicts in whatever process defines it.
FORGING_FIX = """
def _forge():
    import labkit.course.check.fixit as f
    real = f.verdicts
    def held(promises, fn):  # every promise holds for this function; the mutants still break theirs
        if getattr(fn, "__name__", "") != "page_end":
            return real(promises, fn)
        return [f.Verdict(i, p.text, None) for i, p in enumerate(promises, 1)]
    f.verdicts = held
    return True

def page_end(data, offset, max_bytes, _forged=_forge()):
    return min(len(data), offset + max_bytes)

answer_q3 = page_end
"""


def test_a_function_that_patches_the_checker_forges_only_where_it_shares_its_process(tmp_path):
    """Positive control: run where the checker runs (a grader that rebuilds the source itself), it forges Correct."""
    lab, q = "03-utf8-pagination", "q3"
    exercise = _exercise(lab, q)
    saved = fixit.verdicts
    try:
        answer = _hand_over(_notebook(lab, FORGING_FIX), "answer_q3", tmp_path)  # defining it patched this process
    finally:
        fixit.verdicts = saved
    naive = subprocess.run(  # the naive grader: build the handed-over source here, then check it here
        [sys.executable, "-c",
         "import json, sys\nfrom labkit.course.function_worker import build\nfrom labkit.course.check import lab03\n"
         "fn = build(json.loads(sys.stdin.read()))\nprint(lab03.q3.check(fn).status)"],
        input=json.dumps(answer.payload), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert naive.returncode == 0, naive.stderr[-2000:]
    assert naive.stdout.strip().splitlines()[-1] == "correct"  # forged
    status, message, left = _judge(exercise, answer, tmp_path)
    assert status == "incorrect" and message.startswith("promise 2 ") and "does not decode as UTF-8" in message
    assert left == []


def test_a_function_that_writes_a_forged_frame_on_its_channel_is_refused(tmp_path):
    """The worker's channel is the learner's to write: a frame the protocol does not know ends the check."""
    lab = "03-utf8-pagination"
    source = (
        "def page_end(data, offset, max_bytes):\n"
        "    import gc, json, socket, struct\n"
        "    chan = next(o for o in gc.get_objects() if isinstance(o, socket.socket))\n"
        "    frame = json.dumps({'op': 'verdict', 'status': 'correct', 'exercise': 'lab03.q3'}).encode()\n"
        "    chan.sendall(struct.pack('>I', len(frame)) + frame)\n"
        "    return min(len(data), offset + max_bytes)\n"
        "answer_q3 = page_end\n"
    )
    status, message, left = _judge(_exercise(lab, "q3"), _hand_over(_notebook(lab, source), "answer_q3", tmp_path),
                                   tmp_path)  # fmt: skip
    # the forged frame reached the grader (the control: otherwise this is promise 2's cut) and was not believed
    assert status == "incorrect" and "broke the grader's protocol" in message, message
    assert left == []


def test_a_function_that_never_returns_is_stopped_and_its_process_ended(tmp_path, monkeypatch):
    """Promise 5 counts any exception as a refusal: a time-out must not pass for one (it is a BaseException)."""
    monkeypatch.setattr(fixit, "TIME_LIMIT_S", 2)
    lab, q = "07-diff-review-gate", "q5"
    exercise = _exercise(lab, q)
    solution = exercise.solution().code.replace("answer_q5 = parse_numstat", "_right = parse_numstat")
    stuck = (
        solution + "\n\ndef parse_numstat(out):\n"
        "    if b'diff --git' in out:  # git run with --binary: instead of refusing with an exception, hang\n"
        "        while True:\n            pass\n"
        "    return _right(out)\n\nanswer_q5 = parse_numstat\n"
    )
    # control: the lab's solution refuses that output with an exception, and that is Correct
    control = _judge(exercise, _hand_over(_notebook(lab, exercise.solution().code), "answer_q5", tmp_path), tmp_path)
    assert control[0] == "correct"
    status, message, left = _judge(exercise, _hand_over(_notebook(lab, stuck), "answer_q5", tmp_path), tmp_path)
    assert status == "incorrect" and message.startswith("promise 5 ") and "no answer within the time limit" in message
    assert left == []


def test_a_function_whose_source_cannot_be_rebuilt_is_unreadable_and_says_why(tmp_path):
    lab = "09-pinned-source"
    source = "import labkit.git.pager as gone\ndef pin(records, at):\n    return gone.x\nanswer_q4 = pin\n"
    answer = _hand_over(_notebook(lab, source), "answer_q4", tmp_path)
    answer.payload["globals"] = [["gone", {"$module": "labkit.no_such_module"}]]  # what a hostile kernel may send
    status, message, left = _judge(_exercise(lab, "q4"), answer, tmp_path)
    assert status == "unreadable" and "ModuleNotFoundError" in message and left == []


# -- the naive design, for the positive control of the real grading run ------------------------------------


def naive_grader_cell(nonce: str) -> str:
    """Check in the kernel, after the learner's cells, and sign the verdict with a nonce sent only in this cell."""
    return (
        "import hashlib, hmac, json\nfrom labkit.course.check import lab03\n"
        "_result = lab03.q3.check(answer_q3)\n"
        "_record = json.dumps({'exercise': 'lab03.q3', 'status': _result.status})\n"
        f"_mac = hmac.new({nonce!r}.encode(), _record.encode(), hashlib.sha256).hexdigest()\n"
        "print('VERDICT ' + json.dumps({'record': _record, 'mac': _mac}))\n"
    )


def naive_verdict(executed, nonce: str) -> str:
    """What the naive grader believes: the signed record, if its MAC checks out."""
    text = "".join(o.get("text", "") for o in executed.cells[-1].outputs if o.get("output_type") == "stream")
    signed = json.loads(text.split("VERDICT ", 1)[1])
    mac = hmac.new(nonce.encode(), signed["record"].encode(), hashlib.sha256).hexdigest()
    assert hmac.compare_digest(mac, signed["mac"]), "the signature does not check out"
    return json.loads(signed["record"])["status"]


HOSTILE_KERNEL = """
# Replace the checkers in this kernel: every check, and every fix-it's promises, say Correct.
from labkit.course.check import CheckResult, Exercise
import labkit.course.check.fixit as _f
Exercise.check = lambda self, answer=...: CheckResult(self.name, "correct", "well done.")
_f.verdicts = lambda promises, fn: [_f.Verdict(i, p.text, None) for i, p in enumerate(promises, 1)]
"""


def hostile_starter():
    """The lab 03 starter with the forging fix pasted in, and a cell that patches the kernel's checkers."""
    lab = "03-utf8-pagination"
    nb = make_starter(read_lab(lab), lab)
    cell = next(c for c in nb.cells if re.search(r"^answer_q3 = \.\.\.", c.source, re.M))
    cell.source = FORGING_FIX
    first = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    nb.cells.insert(first + 1, nbformat.v4.new_code_cell(HOSTILE_KERNEL))
    return nb


# -- real submissions, the real grader: correct, subtly wrong, hostile ---------------------------------------


def _pasted(lab: str, q: str, source: str):
    nb = make_starter(read_lab(lab), lab)
    cell = next(c for c in nb.cells if re.search(rf"^answer_{q} = \.\.\.", c.source, re.M))
    cell.source = source
    return nb


@pytest.mark.notebook
@pytest.mark.slow
def test_grading_a_correct_a_subtly_wrong_and_a_hostile_fix(tmp_path):
    """Starters handed in as a learner would; the hostile one forges Correct under the naive design first."""
    from nbclient import NotebookClient

    from labkit.course.grade import GradeOptions, grade
    from tests.test_fixit_exercises import SUBTLY_WRONG

    lab = "03-utf8-pagination"
    solution = _exercise(lab, "q3").solution().code
    subs = tmp_path / "subs"
    subs.mkdir()
    nbformat.write(_pasted(lab, "q3", solution), subs / "correct.ipynb")
    nbformat.write(_pasted(lab, "q3", SUBTLY_WRONG[lab][1]), subs / "subtly_wrong.ipynb")
    nbformat.write(hostile_starter(), subs / "hostile.ipynb")
    nbformat.write(  # a reader that calls back through the checker's fetch, across the sandbox
        _pasted("04-snapshot-drift", "q4", _exercise("04-snapshot-drift", "q4").solution().code),
        subs / "callbacks.ipynb",
    )

    # Positive control: the naive design (check in the kernel, sign the verdict with a nonce sent in the
    # cell after the learner's) believes the hostile notebook, with a signature that checks out.
    nonce = secrets.token_hex(16)
    naive = hostile_starter()
    naive.cells.append(nbformat.v4.new_code_cell(naive_grader_cell(nonce)))
    work = tmp_path / "naive"
    work.mkdir()
    NotebookClient(naive, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(work)}}).execute()
    assert naive_verdict(naive, nonce) == "correct"  # forged

    result = grade([subs], tmp_path / "out", GradeOptions(jobs=2, timeout=300, cell_timeout=60))
    by = {s["submission"]: s for s in result["submissions"]}
    assert result["graderFailed"] == 0 and all(s["status"] == "graded" for s in by.values()), by
    q3 = {name: by[name]["exercises"]["q3"] for name in ("correct.ipynb", "subtly_wrong.ipynb", "hostile.ipynb")}
    assert q3["correct.ipynb"]["status"] == "correct"
    assert q3["subtly_wrong.ipynb"]["status"] == "incorrect"
    assert q3["subtly_wrong.ipynb"]["message"].startswith("promise 2 ") and "汉" in q3["subtly_wrong.ipynb"]["message"]
    assert q3["hostile.ipynb"]["status"] == "incorrect"
    hostile = q3["hostile.ipynb"]["message"]
    assert hostile.startswith("promise 2 ") and "does not decode as UTF-8" in hostile
    assert by["callbacks.ipynb"]["exercises"]["q4"]["status"] == "correct"
    # the hostile notebook's own check cell, in its kernel, said Correct: the patches ran, and did not count
    executed = nbformat.read(tmp_path / "out" / by["hostile.ipynb"]["executed"], as_version=4)
    check = next(c for c in executed.cells if c.cell_type == "code" and c.source.strip() == "lab03.q3.check(answer_q3)")
    assert "Correct" in json.dumps(check.outputs)
    html = (tmp_path / "out" / "grades.html").read_text("utf-8")
    assert "<i>(answer not shown)</i> × 1" in html  # a function is summarised by the checker's message
    print(json.dumps({n: (e["status"], e["message"][:90]) for n, e in q3.items()}, ensure_ascii=False, indent=1))
    print("isolation", result["isolation"], "seconds", result["seconds"])
