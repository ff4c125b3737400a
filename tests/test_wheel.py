"""labkit installs anywhere: a built wheel, installed non-editable in a fresh venv, works from an empty folder.

The venv gets labkit from the wheel with ``--no-deps``; its dependencies come
from this test environment's site-packages through one ``.pth`` line, so
nothing is downloaded. The test asserts that ``labkit`` is imported from the
wheel, not from the checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def _source_copy(dest: Path) -> Path:
    """The tracked files of the checkout (as they are now), symlinks kept: setuptools builds in the
    source tree, and a stale ``build/`` there could ship modules that no longer exist."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for raw in listed.split(b"\0"):
        if not raw:
            continue
        rel = os.fsdecode(raw)
        src, dst = ROOT / rel, dest / rel
        if not src.is_symlink() and not src.exists():
            continue  # deleted in the work tree
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst, follow_symlinks=False)
    return dest


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    dist = tmp / "dist"
    source = _source_copy(tmp / "source")
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = dist.glob("labkit-*.whl")
    import zipfile

    shipped = {n for n in zipfile.ZipFile(wheel).namelist() if n.startswith("labkit/") and n.endswith(".py")}
    stale = sorted(n for n in shipped if not (source / n).exists())
    assert stale == [], f"the wheel ships modules the source does not have: {stale[:5]}"
    names = set(zipfile.ZipFile(wheel).namelist())
    for edition in ("labkit/course/labs/", "labkit/course/labs/i18n/zh-CN/"):  # each edition's glossary and its map
        assert {edition + "GLOSSARY.md", edition + "concept-map.png"} <= names, edition
    env_dir = tmp / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    # Dependencies from this environment, after the venv's own site-packages (labkit comes from the wheel).
    (site / "deps-from-tests.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stderr[-2000:]
    return env_dir, tmp


def _run(env_dir: Path, cwd: Path, *argv: str, timeout: int = 300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{env_dir / 'bin'}:{env['PATH']}"
    return subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_labkit_is_imported_from_the_wheel(installed):
    env_dir, tmp = installed
    empty = tmp / "elsewhere"
    empty.mkdir()
    out = _run(env_dir, empty, str(env_dir / "bin" / "python"), "-c", "import labkit; print(labkit.__file__)")
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()).is_relative_to(env_dir) and not Path(out.stdout.strip()).is_relative_to(ROOT)


def test_starter_a_lab_and_an_experiment_work_from_an_empty_folder(installed):
    env_dir, tmp = installed
    work = tmp / "learner"
    work.mkdir()
    labkit = str(env_dir / "bin" / "labkit")
    made = _run(env_dir, work, labkit, "labs", "starter", "--out", "my-labs", "--json")
    assert made.returncode == 0, made.stdout + made.stderr
    notebooks = sorted((work / "my-labs").glob("*.ipynb"))
    assert len(notebooks) == 13
    again = _run(env_dir, work, labkit, "labs", "starter", "--out", "my-labs", "--json")
    assert again.returncode == 1 and json.loads(again.stdout)["error"]["code"] == "file_exists"
    code = (
        "import sys, nbformat\n"
        "from nbclient import NotebookClient\n"
        "nb = nbformat.read(sys.argv[1], as_version=4)\n"
        "NotebookClient(nb, timeout=120, kernel_name='python3', resources={'metadata': {'path': sys.argv[2]}}).execute()\n"
        "print('ran', len(nb.cells))\n"
    )
    ran = _run(
        env_dir,
        work,
        str(env_dir / "bin" / "python"),
        "-c",
        code,
        str(work / "my-labs" / "03-utf8-pagination.ipynb"),
        str(work / "my-labs"),
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    experiment = _run(env_dir, work, labkit, "experiment", "utf8-pagination", "--json")
    assert experiment.returncode == 0, experiment.stderr
    result = json.loads(experiment.stdout)
    assert result["naive"]["fullBytes"] == 6467 and result["safe"]["exactMatch"] is True


def test_the_report_finds_every_lab_and_the_eval_its_cases(installed):
    """The issue's other two reproductions: ``labkit report`` said "0/0 labs" and the eval "eval file not found"."""
    env_dir, tmp = installed
    code = (
        "from labkit.course.labfiles import labs_dir\n"
        "from labkit.course.notebooks import lab_paths\n"
        "from labkit.course.codesearch_eval import load_eval\n"
        "corpora, cases = load_eval()\n"
        "print(len(lab_paths(labs_dir())), len(corpora), len(cases))\n"
    )
    out = _run(env_dir, tmp, str(env_dir / "bin" / "python"), "-c", code)
    assert out.returncode == 0, out.stderr[-2000:]
    labs, corpora, cases = map(int, out.stdout.split())
    assert labs == 13 and corpora >= 3 and cases >= 80


def test_a_missing_resource_is_named(installed):
    env_dir, tmp = installed
    code = (
        "from labkit.boundary.resources import read_text\n"
        "from labkit.boundary.errors import LabkitError\n"
        "try:\n    read_text('data', 'no-such-file.json')\n"
        "except LabkitError as e:\n    print(e.code, e.message)\n"
    )
    out = _run(env_dir, tmp, str(env_dir / "bin" / "python"), "-c", code)
    assert out.stdout.startswith("resource_not_found") and "data/no-such-file.json" in out.stdout


def test_the_chinese_edition_works_from_the_wheel(installed):
    """``labkit labs starter --lang zh-CN`` and ``labkit report --lang zh-CN`` outside the checkout: the
    catalogs come with the wheel, and the JSON is the English run's."""
    env_dir, tmp = installed
    labkit = str(env_dir / "bin" / "labkit")
    runs = {}
    for lang in ("en", "zh-CN"):
        work = tmp / f"edition-{lang}"
        work.mkdir()
        made = _run(env_dir, work, labkit, "labs", "starter", "--lang", lang, "--out", "labs", "--json")
        assert made.returncode == 0, made.stdout + made.stderr
        runs[lang] = made.stdout
    assert runs["en"] == runs["zh-CN"]
    zh = json.loads((tmp / "edition-zh-CN" / "labs" / "03-utf8-pagination.ipynb").read_text("utf-8"))
    assert zh["metadata"]["labkit"]["lang"] == "zh-CN" and 'LABKIT_LANG"] = "zh-CN"' in "".join(
        zh["cells"][0]["source"]
    )
    code = "from labkit.course.check import lab01\nprint(lab01.q1.check('Z'))\n"
    said = _run(env_dir, tmp, str(env_dir / "bin" / "python"), "-c", code)
    assert said.returncode == 0 and "[lab01.q1] Incorrect: answer with one letter" in said.stdout, said.stderr
    env_zh = _run(env_dir, tmp, "env", "LABKIT_LANG=zh-CN", str(env_dir / "bin" / "python"), "-c", code)
    assert "[lab01.q1] 不正确: 请用一个字母作答" in env_zh.stdout, env_zh.stderr
    reports = {}
    for lang in ("en", "zh-CN"):
        work = tmp / f"edition-{lang}"
        out = _run(
            env_dir,
            work,
            labkit,
            "report",
            "--quick",
            "--only",
            "utf8-pagination",
            "--lang",
            lang,
            "--out",
            "r",
            "--json",
        )
        assert out.returncode == 0, out.stderr[-2000:]
        reports[lang] = json.loads(out.stdout)
    for r in reports.values():  # what differs between two runs of one report: the timings
        for step in r["experiments"] + r["labs"]:
            step.pop("seconds")
    assert reports["en"] == reports["zh-CN"]
    page = (tmp / "edition-zh-CN" / "r" / "index.html").read_text("utf-8")
    assert "<html lang='zh-CN'>" in page and "<h2 id=headline>要点</h2>" in page
    assert "<html lang='en'>" in (tmp / "edition-en" / "r" / "index.html").read_text("utf-8")
