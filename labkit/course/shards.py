"""A class graded in shards: which slice a submission belongs to, what a shard records, and how it is read.

``labkit labs grade SUBMISSIONS --shard K/N`` grades slice ``K`` of ``N`` (``K`` counts from 0, as
Kubernetes' ``JOB_COMPLETION_INDEX`` and GitHub Actions' ``strategy.job-index`` do). A submission's slice
is a stable hash of its name (SHA-256 of its relative name, the first 8 bytes, modulo ``N``): every job
that is given the same submissions computes the same slices, the slices never overlap, and together they
hold every submission. ``--shard env`` takes ``K`` from ``LABKIT_SHARD_INDEX`` or ``JOB_COMPLETION_INDEX``
and ``N`` from ``LABKIT_SHARD_TOTAL``.

Every grading run (an unsharded one is shard 0/1) writes :data:`MANIFEST` beside ``grades.csv``: the
labs' version (a hash of the course's labs and of the code that grades them), the slice, the whole
class's submission names as this job found them, the grading settings, and each graded submission's
outcome. :mod:`labkit.course.grade_merge` builds the class's gradebook from these alone.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from labkit.boundary.errors import LabkitError

MANIFEST = "shard.json"
FORMAT = "labkit-grade-shard/1"
MAX_SHARDS = 4096  # GitHub Actions allows 256 jobs per matrix; an indexed job, many more
MAX_MANIFEST_BYTES = 64 << 20
INDEX_VARIABLES = ("LABKIT_SHARD_INDEX", "JOB_COMPLETION_INDEX")  # in this order
TOTAL_VARIABLE = "LABKIT_SHARD_TOTAL"
_SHARD = re.compile(r"(\d{1,9})/(\d{1,9})\Z")
#: The grading settings every shard of one gradebook must share (``jobs`` may differ: it is how fast, not how).
SHARED_SETTINGS = ("isolation", "processes", "timeout", "cellTimeout", "memoryMb", "diskMb")


@dataclass(frozen=True)
class Shard:
    index: int  # 0-based
    total: int

    def __str__(self) -> str:
        return f"{self.index}/{self.total}"

    def to_json(self) -> dict:
        return {"index": self.index, "total": self.total}


UNSHARDED = Shard(0, 1)


def parse_shard(text: str | None, environ: dict | None = None) -> Shard:
    """``--shard``: ``None`` (the whole class, 0/1), ``"K/N"``, or ``"env"`` (read from the environment)."""
    if text is None:
        return UNSHARDED
    if text == "env":
        return _from_environment(os.environ if environ is None else environ)
    m = _SHARD.match(text.strip())
    if not m:
        raise LabkitError("invalid_argument", f"--shard takes K/N (such as 0/4) or env, not {text[:40]!r}")
    return _checked(int(m.group(1)), int(m.group(2)), "--shard")


def _from_environment(environ) -> Shard:
    given = {name: environ[name].strip() for name in INDEX_VARIABLES if environ.get(name, "").strip()}
    if not given:
        raise LabkitError(
            "invalid_argument",
            "--shard env: set LABKIT_SHARD_INDEX (or run as a Kubernetes indexed job, which sets "
            "JOB_COMPLETION_INDEX) and LABKIT_SHARD_TOTAL",
        )
    if len(set(given.values())) > 1:
        raise LabkitError(
            "invalid_argument",
            "--shard env: LABKIT_SHARD_INDEX and JOB_COMPLETION_INDEX disagree "
            f"({given['LABKIT_SHARD_INDEX'][:12]!r} and {given['JOB_COMPLETION_INDEX'][:12]!r})",
        )
    name, index = next(iter(given.items()))
    total = environ.get(TOTAL_VARIABLE, "").strip()
    if not total:
        raise LabkitError(
            "invalid_argument",
            f"--shard env: {name} is set but {TOTAL_VARIABLE} is not (the number of shards, "
            "the indexed job's completions)",
        )
    for var, value in ((name, index), (TOTAL_VARIABLE, total)):
        if not value.isascii() or not value.isdigit() or len(value) > 9:
            raise LabkitError("invalid_argument", f"--shard env: {var} must be a whole number, not {value[:12]!r}")
    return _checked(int(index), int(total), f"--shard env ({name}, {TOTAL_VARIABLE})")


def _checked(index: int, total: int, where: str) -> Shard:
    if not 1 <= total <= MAX_SHARDS:
        raise LabkitError("invalid_argument", f"{where}: the number of shards must be 1 to {MAX_SHARDS}, not {total}")
    if index >= total:
        raise LabkitError(
            "invalid_argument",
            f"{where}: shard {index}/{total} does not exist: K counts from 0, so {total} shard(s) are "
            f"0/{total} to {total - 1}/{total}",
        )
    return Shard(index, total)


def slice_of(name: str, total: int) -> int:
    """The slice (0 to ``total - 1``) of the submission named ``name``: a stable hash, the same on every machine."""
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest[:8], "big") % total


def in_shard(names, shard: Shard) -> list[str]:
    return [n for n in names if slice_of(n, shard.total) == shard.index]


# -- the labs' version -------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def versions() -> tuple[str, dict[str, str]]:
    """``(labsSha256, {lab: its version})``: the lab version, and each lab's.

    The lab version hashes everything that decides a grade and the gradebook's bytes: every labkit
    module (the checkers, the answer codec, the grader, the gradebook, the tools the checkers call) and
    every lab file. Each lab's own version hashes its notebook and its checker module, so a refusal can
    say which lab differs. Shards built from one commit agree; shards from two commits do not.
    """
    from labkit.course.labfiles import labs_dir

    package = Path(__file__).resolve().parent.parent
    labs = labs_dir()
    whole = hashlib.sha256()
    files = sorted(
        p
        for p in package.rglob("*.py")
        if "__pycache__" not in p.parts and p.relative_to(package).parts[:2] != ("course", "labs")
    )
    for p in files:
        _feed(whole, "labkit/" + p.relative_to(package).as_posix(), p.read_bytes())
    per_lab: dict[str, str] = {}
    for p in sorted(labs.iterdir()):
        if p.suffix in (".ipynb", ".py") and re.match(r"\d\d-", p.name):
            _feed(whole, "labs/" + p.name, p.read_bytes())
    for p in sorted(labs.glob("*.ipynb")):
        if not re.match(r"\d\d-", p.name):
            continue
        one = hashlib.sha256()
        _feed(one, p.name, p.read_bytes())
        checker = package / "course" / "check" / f"lab{p.name[:2]}.py"
        if checker.is_file():
            _feed(one, checker.name, checker.read_bytes())
        per_lab[p.stem] = "sha256:" + one.hexdigest()[:16]
    return "sha256:" + whole.hexdigest()[:16], per_lab


def _feed(h, name: str, data: bytes) -> None:
    h.update(name.encode() + b"\0" + str(len(data)).encode() + b"\0")
    h.update(data)


def class_digest(names) -> str:
    """A short digest of the class as one job found it (every submission's name, sorted)."""
    h = hashlib.sha256()
    for n in sorted(names):
        h.update(n.encode("utf-8", "surrogateescape") + b"\0")
    return "sha256:" + h.hexdigest()[:16]


def manifest(shard: Shard, class_names: list[str], settings: dict, outcomes) -> dict:
    lab_version, labs = versions()
    return {
        "format": FORMAT,
        "labsSha256": lab_version,
        "labs": labs,
        "shard": shard.to_json(),
        "class": {"count": len(class_names), "digest": class_digest(class_names), "submissions": sorted(class_names)},
        "submissions": [o.submission for o in outcomes],
        "settings": settings,
        "outcomes": [{**o.to_json(), "answers": o.answers} for o in outcomes],
    }


def manifest_text(data: dict) -> str:
    return json.dumps(data, ensure_ascii=True, indent=1, sort_keys=True) + "\n"
