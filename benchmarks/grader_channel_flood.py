"""Benchmark: the grader's peak memory while a notebook floods channels the grader never reads.

    python benchmarks/grader_channel_flood.py [--count 50] [--size-mb 40] [--channel stdin|control]

A lab 02 submission sends ``count`` messages of ``size-mb`` MiB (each under the
64 MiB message cap) on its kernel's stdin (or control) channel, which no
client reads, then finishes normally. Measured side by side in one run, each
in a fresh process, as that process's own peak RSS (``ru_maxrss``):

- ``stock``: stock nbclient with jupyter_client's default sockets (zmq queues
  up to 1,000 messages per channel): what the grader did before its channels
  were bounded;
- ``grader``: ``labkit.course.grade.grade`` (the stdin channel is not
  connected; control holds at most 4 messages of 1 MiB).

Root runs the grader at isolation ``namespaces``; otherwise at ``none``. Not a
test: nothing here asserts a number.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

FLOOD = r"""
from ipykernel.kernelapp import IPKernelApp
__k = get_ipython().kernel
__socket = __k.stdin_socket if CHANNEL == "stdin" else IPKernelApp.instance().control_socket
__big = "x" * (SIZE_MB << 20)
for __i in range(COUNT):
    __k.session.send(__socket, "input_request", {"prompt": __big, "password": False},
                     parent=__k.get_parent("shell"), ident=__k._parent_ident["shell"])
del __big
import time
time.sleep(3)
print("sent", COUNT)
"""

PEAK = r"""
import json, resource, sys
mode, nb_path, out, isolation = sys.argv[1:5]
if mode == "stock":
    import nbformat
    from nbclient import NotebookClient
    nb = nbformat.read(nb_path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": out}}).execute()
    ok = any("sent" in o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
else:
    from labkit.course.grade import GradeOptions, grade
    r = grade([nb_path], out, GradeOptions(jobs=1, timeout=600, cell_timeout=300, isolation=isolation))
    ok = r["submissions"][0]["status"] == "graded"
print(json.dumps({"peakMiB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024), "ran": ok}))
"""


def notebook(path: Path, count: int, size_mb: int, channel: str) -> None:
    import nbformat

    from labkit.course.grade import exercises_of

    lab = "02-git-status-and-diff"
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["labkit"] = {"lab": lab, "kind": "starter"}
    cell = FLOOD.replace("CHANNEL", repr(channel)).replace("SIZE_MB", str(size_mb)).replace("COUNT", str(count))
    nb.cells.append(nbformat.v4.new_code_cell(cell))
    nb.cells.extend(nbformat.v4.new_code_cell(f"answer_{q} = None") for q in exercises_of(lab))
    nbformat.write(nb, path)


def peak(mode: str, nb_path: Path, out: Path, isolation: str) -> dict:
    out.mkdir()
    proc = subprocess.run(
        [sys.executable, "-c", PEAK, mode, str(nb_path), str(out), isolation],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=50)
    ap.add_argument("--size-mb", type=int, default=40)
    ap.add_argument("--channel", choices=["stdin", "control"], default="stdin")
    args = ap.parse_args()
    isolation = "namespaces" if os.getuid() == 0 else "none"
    with tempfile.TemporaryDirectory(prefix="labkit-flood-") as tmp:
        nb_path = Path(tmp) / "flood.ipynb"
        notebook(nb_path, args.count, args.size_mb, args.channel)
        rows = {mode: peak(mode, nb_path, Path(tmp) / mode, isolation) for mode in ("stock", "grader")}
    print(
        json.dumps(
            {
                "attack": f"{args.count} x {args.size_mb} MiB on {args.channel}, never read",
                "isolation": isolation,
                "peakRssMiB": {mode: r["peakMiB"] for mode, r in rows.items()},
                "ran": {mode: r["ran"] for mode, r in rows.items()},
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
