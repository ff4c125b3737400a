"""``labkit labs grade-merge DIR... --out DIR``: the class's gradebook from the outputs of its shards.

Each ``DIR`` is the ``--out`` of one ``labkit labs grade --shard K/N`` run (an unsharded run is 0/1). The
merge reads only each folder's :data:`labkit.course.shards.MANIFEST` and the executed copies it names,
checks them all, and only then writes anything. It refuses, with a stable code and nothing written:

- ``shard_malformed``: a folder holds no readable manifest, or one whose fields are not what the grader
  writes (or an executed copy it names is missing or not a regular file);
- ``shard_mismatch``: the shards were graded by different lab versions (another commit of the labs or
  of the grader), with different settings (isolation, time and memory limits), as different numbers of
  shards, or found a different class (a submission that arrived between two jobs);
- ``shard_overlap``: two folders hold the same slice (an old run and its re-run, say);
- ``shard_duplicate``: a submission is recorded twice, or by a shard whose slice does not hold it;
- ``shard_missing``: a slice of ``N`` has no folder. ``--allow-missing`` writes the gradebook anyway,
  every submission of a missing slice listed with status ``shard_missing`` and the page marked
  incomplete; the result then says ``complete: false`` and names the missing slices.

The gradebook's rows are in the order of the submissions' names, and its page names the shared settings
but not how many notebooks ran at once, so it is the same, byte for byte, however the class was cut.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from labkit.boundary.errors import LabkitError
from labkit.course import gradebook, shards
from labkit.course.grade import STATUS_TEXT, Outcome

SHARD_MISSING = "shard_missing"
_EXECUTED = re.compile(r"executed/(?!\.\.?\Z)([A-Za-z0-9._-]{1,255})\Z")


@dataclass
class Loaded:
    label: str  # how messages name the folder: its own name, never a path of this machine
    folder: Path
    data: dict
    shard: shards.Shard
    outcomes: list[Outcome]


def merge(folders: list[str | Path], out_dir: str | Path, allow_missing: bool = False) -> dict:
    if not folders:
        raise LabkitError("invalid_argument", "name at least one shard's output folder")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise LabkitError("invalid_argument", f"--out {out.name} is a file, not a folder")
    loaded = [_load(Path(f), i) for i, f in enumerate(folders)]
    if out.exists() and any(os.path.samefile(out, x.folder) for x in loaded):
        raise LabkitError("invalid_argument", f"--out {out.name} is one of the shards' folders: name a new folder")
    first = loaded[0]
    _check_agreement(first, loaded)
    total = first.shard.total
    class_names = first.data["class"]["submissions"]
    by_index: dict[int, Loaded] = {}
    for x in loaded:
        if x.shard.index in by_index:
            raise LabkitError(
                "shard_overlap",
                f"{by_index[x.shard.index].label} and {x.label} both hold shard {x.shard}: give each slice once "
                "(after a re-run, only the re-run's folder)",
            )
        by_index[x.shard.index] = x
    seen: dict[str, Loaded] = {}
    for x in loaded:
        for o in x.outcomes:
            if o.submission in seen:
                raise LabkitError(
                    "shard_duplicate",
                    f"{o.submission} is recorded by {seen[o.submission].label} and by {x.label}",
                )
            seen[o.submission] = x
    for x in loaded:
        expected = shards.in_shard(class_names, x.shard)
        for o in x.outcomes:
            if shards.slice_of(o.submission, total) != x.shard.index:
                raise LabkitError(
                    "shard_duplicate",
                    f"{x.label} (shard {x.shard}) records {o.submission}, which belongs to shard "
                    f"{shards.slice_of(o.submission, total)}/{total}",
                )
        if sorted(o.submission for o in x.outcomes) != sorted(expected):
            raise LabkitError(
                "shard_malformed",
                f"{x.label} (shard {x.shard}) does not record every submission of its slice "
                f"({len(x.outcomes)} of {len(expected)})",
            )
    missing = [k for k in range(total) if k not in by_index]
    if missing and not allow_missing:
        held = sum(1 for n in class_names if shards.slice_of(n, total) in set(missing))
        raise LabkitError(
            "shard_missing",
            f"{len(missing)} of {total} shard(s) missing ({_ranges(missing)}), holding {held} of "
            f"{len(class_names)} submission(s); give every shard's folder, or pass --allow-missing for a "
            "gradebook marked incomplete",
        )
    outcomes = [o for x in loaded for o in x.outcomes]
    missing_set = set(missing)
    for name in class_names:
        k = shards.slice_of(name, total)
        if k in missing_set:
            outcomes.append(Outcome(name, None, SHARD_MISSING, notes=[f"its shard ({k}/{total}) was not merged"]))
    outcomes.sort(key=lambda o: _order(o.submission))
    settings = first.data["settings"]
    meta = {k: settings[k] for k in shards.SHARED_SETTINGS}
    meta["jobs"] = None  # how many ran at once is each shard's affair, not the gradebook's
    if missing:
        meta["incomplete"] = (
            f"{len(missing)} of {total} shard(s) were not merged ({_ranges(missing)}): their "
            f"{sum(o.status == SHARD_MISSING for o in outcomes)} submission(s) are listed as {SHARD_MISSING}."
        )
    csv_text = gradebook.csv_text(outcomes)
    html_text = gradebook.html_text(outcomes, meta)
    _publish(out, loaded, csv_text, html_text)
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    return {
        "out": str(out),
        "files": ["grades.csv", "grades.html", "executed/"],
        "complete": not missing,
        "shards": total,
        "merged": sorted(by_index),
        "missingShards": missing,
        "labsSha256": first.data["labsSha256"],
        "classSize": len(class_names),
        **{k: meta[k] for k in shards.SHARED_SETTINGS},
        "statuses": dict(sorted(counts.items())),
        "submissions": [o.to_json() for o in outcomes],
    }


def _order(name: str) -> list[str]:
    return name.split("/")  # folder by folder, as the grader lists a folder of submissions


def _ranges(ks: list[int]) -> str:
    shown = ", ".join(str(k) for k in ks[:10])
    return "shard " + shown + (f" and {len(ks) - 10} more" if len(ks) > 10 else "")


def _check_agreement(first: Loaded, loaded: list[Loaded]) -> None:
    for x in loaded[1:]:
        a, b = first.data, x.data
        if a["labsSha256"] != b["labsSha256"]:
            differ = sorted(lab for lab in set(a["labs"]) | set(b["labs"]) if a["labs"].get(lab) != b["labs"].get(lab))
            which = f"; labs that differ: {', '.join(differ[:6])}" if differ else " (the grader's code differs)"
            raise LabkitError(
                "shard_mismatch",
                f"{first.label} and {x.label} were graded by different lab versions{which}: "
                "grade every shard from one commit",
            )
        if first.shard.total != x.shard.total:
            raise LabkitError(
                "shard_mismatch",
                f"{first.label} is shard {first.shard} but {x.label} is shard {x.shard}: "
                "every shard of one gradebook is one of the same N",
            )
        for key in shards.SHARED_SETTINGS:
            if a["settings"][key] != b["settings"][key]:
                raise LabkitError(
                    "shard_mismatch",
                    f"{first.label} and {x.label} were graded with different {key} "
                    f"({a['settings'][key]!r} and {b['settings'][key]!r})",
                )
        if a["class"]["digest"] != b["class"]["digest"]:
            only_a = sorted(set(a["class"]["submissions"]) - set(b["class"]["submissions"]))
            only_b = sorted(set(b["class"]["submissions"]) - set(a["class"]["submissions"]))
            said = [f"only {first.label} found {', '.join(only_a[:3])}" if only_a else ""]
            said.append(f"only {x.label} found {', '.join(only_b[:3])}" if only_b else "")
            raise LabkitError(
                "shard_mismatch",
                f"{first.label} and {x.label} found different classes ({a['class']['count']} and "
                f"{b['class']['count']} submissions: {'; '.join(s for s in said if s)}): "
                "give every shard the same submissions",
            )


# -- reading one shard's folder -----------------------------------------------------------------------------


def _load(folder: Path, position: int) -> Loaded:
    label = folder.name or f"argument {position + 1}"
    if not folder.is_dir():
        raise LabkitError("file_not_found", f"no such shard folder: {label}")
    path = folder / shards.MANIFEST
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise _bad(label, f"holds no {shards.MANIFEST} (not the --out of `labkit labs grade`?)") from None
    except OSError as exc:
        raise _bad(label, f"its {shards.MANIFEST} cannot be opened ({type(exc).__name__})") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise _bad(label, f"its {shards.MANIFEST} is not a regular file")
        raw = fh.read(shards.MAX_MANIFEST_BYTES + 1)
    if len(raw) > shards.MAX_MANIFEST_BYTES:
        raise _bad(label, f"its {shards.MANIFEST} is larger than {shards.MAX_MANIFEST_BYTES >> 20} MiB")
    import json

    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise _bad(label, f"its {shards.MANIFEST} is not JSON (cut short?)") from None
    shard, outcomes = _validate(label, data)
    return Loaded(label, folder, data, shard, outcomes)


def _bad(label: str, why: str) -> LabkitError:
    return LabkitError("shard_malformed", f"{label}: {why}")


def _validate(label: str, data) -> tuple[shards.Shard, list[Outcome]]:
    def need(ok: bool, what: str) -> None:
        if not ok:
            raise _bad(label, f"{shards.MANIFEST}: {what}")

    need(isinstance(data, dict), "not an object")
    need(data.get("format") == shards.FORMAT, f"format is not {shards.FORMAT}")
    need(_is_str(data.get("labsSha256")), "labsSha256")
    need(isinstance(data.get("labs"), dict) and all(_is_str(v) for v in data["labs"].values()), "labs")
    sh = data.get("shard")
    need(isinstance(sh, dict) and _is_int(sh.get("index")) and _is_int(sh.get("total")), "shard")
    try:
        shard = shards._checked(sh["index"], sh["total"], "shard")
    except LabkitError as exc:
        raise _bad(label, f"{shards.MANIFEST}: {exc.message}") from None
    cls = data.get("class")
    need(isinstance(cls, dict) and _str_list(cls.get("submissions")), "class")
    names = cls["submissions"]
    need(cls.get("count") == len(names) and len(set(names)) == len(names), "class count")
    need(cls.get("digest") == shards.class_digest(cls["submissions"]), "class digest")
    settings = data.get("settings")
    need(isinstance(settings, dict) and all(k in settings for k in (*shards.SHARED_SETTINGS, "jobs")), "settings")
    need(_str_list(data.get("submissions")), "submissions")
    raw_outcomes = data.get("outcomes")
    need(isinstance(raw_outcomes, list) and len(raw_outcomes) == len(data["submissions"]), "outcomes")
    members = set(cls["submissions"])
    outcomes = []
    for raw, name in zip(raw_outcomes, data["submissions"], strict=True):
        o = _outcome(raw)
        need(o is not None and o.submission == name, f"the outcome of {name} is malformed")
        assert o is not None
        need(name in members, f"{name} is not one of the class's submissions")
        outcomes.append(o)
    return shard, outcomes


def _outcome(raw) -> Outcome | None:
    if not isinstance(raw, dict) or not _is_str(raw.get("submission")):
        return None
    lab, status, executed = raw.get("lab"), raw.get("status"), raw.get("executed")
    if not (lab is None or _is_str(lab)) or status not in STATUS_TEXT:
        return None
    if not (executed is None or (_is_str(executed) and _EXECUTED.match(executed))):
        return None
    exercises, answers = raw.get("exercises"), raw.get("answers")
    if not isinstance(exercises, dict) or not isinstance(answers, dict) or (exercises and lab is None):
        return None
    for q, e in exercises.items():
        if not re.fullmatch(r"q\d{1,4}", q) or not isinstance(e, dict) or set(e) != {"status", "message"}:
            return None
        if e["status"] not in gradebook.EXERCISE_STATUSES or not _is_str(e["message"]):
            return None
    if not all(q in exercises and (v is None or _is_str(v)) for q, v in answers.items()):
        return None
    if not _str_list(raw.get("notes")) or not isinstance(raw.get("seconds"), (int, float)):
        return None
    return Outcome(
        raw["submission"],
        lab,
        status,
        exercises=exercises,
        notes=raw["notes"],
        seconds=float(raw["seconds"]),
        executed=executed,
        answers=answers,
    )


def _is_str(x) -> bool:
    return isinstance(x, str)


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _str_list(x) -> bool:
    return isinstance(x, list) and all(isinstance(v, str) for v in x)


# -- writing ------------------------------------------------------------------------------------------------


def _publish(out: Path, loaded: list[Loaded], csv_text: str, html_text: str) -> None:
    """Copy every executed copy into a private folder first (a missing one refuses the merge), then rename.

    An ``--out`` the merge made is removed again if the merge is refused on the way.
    """
    copies = [(x, o, o.executed.split("/", 1)[1]) for x in loaded for o in x.outcomes if o.executed]
    for x, o, name in copies:  # all there before anything is made
        _open_regular(x, x.folder / "executed" / name, o.submission).close()
    made = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".labkit-merge-", dir=out))
    published = False
    try:
        for x, o, name in copies:
            with _open_regular(x, x.folder / "executed" / name, o.submission) as fh, open(staging / name, "xb") as w:
                shutil.copyfileobj(fh, w, 1 << 20)
        names = [name for _, _, name in copies]
        published = True
        executed = out / "executed"
        executed.mkdir(exist_ok=True)
        for name in names:
            os.replace(staging / name, executed / name)
        gradebook.write_atomically(out / "grades.csv", csv_text)
        gradebook.write_atomically(out / "grades.html", html_text)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if made and not published:
            shutil.rmtree(out, ignore_errors=True)


def _open_regular(x: Loaded, src: Path, submission: str):
    try:
        fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        raise _bad(x.label, f"the executed copy of {submission} is missing") from None
    fh = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
        fh.close()
        raise _bad(x.label, f"the executed copy of {submission} is not a regular file")
    return fh
