"""The diff review gate on real repositories (no mocked git).

These are also the behavioural tests that tests/test_review_mutations.py runs
against each named mutant of labkit.review: every mutant must make one fail.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat

import pytest

from labkit import review
from labkit.boundary import names
from labkit.boundary.errors import LabkitError
from labkit.boundary.gitrunner import EMPTY_TREE
from labkit.git.listing import ListingError, parse_raw
from labkit.review import facts, review_diff
from labkit.review.allow import path_allowed

from .conftest import plain_git


def files_by_path(report):
    return {f["path"]: f for f in report["files"]}


def risk_set(report):
    return {(r["code"], r["path"]) for r in report["risks"]}


def codes_for(report, path):
    return sorted(r["code"] for r in report["risks"] if r["path"] == path)


def plain_blob_id(repo, rel):
    return plain_git(repo.path, "hash-object", "--no-filters", "--", rel).stdout.decode().strip()


@pytest.fixture
def based(repo):
    """A repository with a committed base the tests then modify."""
    repo.write_many(
        {
            "a.txt": "A\n",
            "src/app.py": "print('app')\n",
            "src/util.py": "x = 1\n",
            "tests/test_app.py": "def test_app():\n    assert True\n",
            "docs/guide.md": "# Guide\n",
            "pnpm-lock.yaml": "lockfileVersion: 9\n",
            "scripts/run.sh": "echo run\n",
        }
    )
    repo.commit("base")
    return repo


# -- the seed's cases ------------------------------------------------------------------------


def test_numstat_facts_for_a_text_change(based):
    based.write("a.txt", "B\nC\n")
    report = review_diff(based.path, allow=["a.txt"])
    assert report["files"] == [
        {
            "path": "a.txt",
            "origPath": None,
            "status": "M",
            "additions": 2,
            "deletions": 1,
            "binary": False,
            "contentId": plain_blob_id(based, "a.txt"),
            "source": "tracked",
            "oldMode": "100644",
            "newMode": "100644",
        }
    ]
    assert report["risks"] == []
    assert report["gate"] == "pass" and report["complete"] is True
    assert report["totals"] == {"files": 1, "additions": 2, "deletions": 1}
    assert report["base"] == based.head()


SPECIAL_NAMES = [
    "tab\there.txt",
    "new\nline.txt",
    'double"quote.txt',
    "single'quote.txt",
    "-leading-dash.txt",
    "with space.txt",
    "back\\slash.txt",
    "中文/文件 名.txt",
    "$(touch PWNED).txt",
    "semi;colon&amp.txt",
]


@pytest.mark.parametrize("tracked", [True, False], ids=["tracked", "untracked"])
def test_special_file_names_parse_exactly(repo, tracked):
    def put(name, text):  # written directly: the builder refuses backslashes, as user input should
        target = repo.path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, "utf-8")

    repo.write("keep.txt", "k\n")
    for i, name in enumerate(SPECIAL_NAMES):
        put(name, f"v{i}\n")
    if tracked:
        repo.commit("base")
        for i, name in enumerate(SPECIAL_NAMES):
            put(name, f"v{i}\nsecond\n")
    else:
        repo.commit("base", only=("keep.txt",))
    report = review_diff(repo.path, allow=["中文/"])
    f = {names.decode_argument(k): v for k, v in files_by_path(report).items()}  # printed names round-trip
    assert sorted(f) == sorted(SPECIAL_NAMES)
    for name in SPECIAL_NAMES:
        assert f[name]["contentId"] == plain_blob_id(repo, name), name
        assert f[name]["source"] == ("tracked" if tracked else "untracked")
        assert (f[name]["additions"], f[name]["deletions"]) == ((1, 0) if tracked else (1, 0))
    unauthorized = {names.decode_argument(p) for c, p in risk_set(report) if c == "UNAUTHORIZED_PATH"}
    assert unauthorized == set(SPECIAL_NAMES) - {"中文/文件 名.txt"}
    assert not (repo.path / "PWNED").exists(), "a file name was run as a shell command"


def test_files_and_risks_are_sorted_by_code_point_across_sources(based):
    # Tracked and untracked changes interleave by path; git lists each source on its own.
    based.write("src/app.py", "print('changed')\nprint('more')\n")
    based.delete("docs/guide.md")
    based.write("b-new.txt", "1\n2\n3\n")  # untracked, sorts between a.txt and docs/
    based.write("a.txt", "A\nB\n")
    based.write("Z.txt", "upper\n")  # code-point order: 'Z' < 'a'
    based.write("web/yarn.lock", "# lock\n")
    based.write("web/package.json", "{}\n")
    report = review_diff(based.path, allow=["src/"])
    paths = [f["path"] for f in report["files"]]
    assert paths == ["Z.txt", "a.txt", "b-new.txt", "docs/guide.md", "src/app.py", "web/package.json", "web/yarn.lock"]
    assert paths == sorted(paths)
    f = files_by_path(report)
    assert (f["src/app.py"]["additions"], f["src/app.py"]["deletions"]) == (2, 1)
    assert (f["docs/guide.md"]["status"], f["docs/guide.md"]["additions"], f["docs/guide.md"]["deletions"]) == (
        "D",
        0,
        1,
    )
    assert f["docs/guide.md"]["contentId"] is None
    assert (f["b-new.txt"]["status"], f["b-new.txt"]["additions"], f["b-new.txt"]["deletions"]) == ("A", 3, 0)
    assert f["b-new.txt"]["source"] == "untracked"
    keys = [(r["path"], r["code"]) for r in report["risks"]]
    assert keys == sorted(keys)
    # web/package.json carries two codes: their order must come from the sort, not from rule order.
    assert codes_for(report, "web/package.json") == ["DEPENDENCY_MANIFEST_CHANGED", "UNAUTHORIZED_PATH"]
    assert [r["code"] for r in report["risks"] if r["path"] == "web/yarn.lock"] == [
        "LOCKFILE_CHANGED",
        "UNAUTHORIZED_PATH",
    ]
    assert report["totals"] == {"files": 7, "additions": 2 + 1 + 3 + 1 + 1 + 1 + 0, "deletions": 1 + 1}


def test_unauthorized_path_blocks(based):
    based.write("tests/test_app.py", "def test_app():\n    assert 1\n")
    based.write("src/app.py", "print('formatter touched me')\n")
    report = review_diff(based.path, allow=["tests/"])
    assert risk_set(report) == {("UNAUTHORIZED_PATH", "src/app.py")}
    assert report["gate"] == "block"
    assert [r["severity"] for r in report["risks"]] == ["block"]


def test_exact_file_authorization_is_exact(based):
    based.write("src/app.py", "print(1)\n")
    based.write("src/app.py.bak", "old\n")
    based.write("src/app.pyc", "x\n")
    report = review_diff(based.path, allow=["src/app.py"])
    assert risk_set(report) == {("UNAUTHORIZED_PATH", "src/app.py.bak"), ("UNAUTHORIZED_PATH", "src/app.pyc")}
    # A bare folder name without '/' is an exact file name, never a prefix.
    report = review_diff(based.path, allow=["src"])
    assert ("UNAUTHORIZED_PATH", "src/app.py") in risk_set(report)


def test_folder_allow_does_not_admit_near_prefix_siblings(based):
    based.write("src/app.py", "print(2)\n")
    based.write("src-old/app.py", "legacy\n")
    based.write("src2/app.py", "two\n")
    based.write("srcfile.txt", "f\n")
    report = review_diff(based.path, allow=["src/"])
    assert risk_set(report) == {
        ("UNAUTHORIZED_PATH", "src-old/app.py"),
        ("UNAUTHORIZED_PATH", "src2/app.py"),
        ("UNAUTHORIZED_PATH", "srcfile.txt"),
    }
    assert report["gate"] == "block"


@pytest.mark.parametrize(
    "name",
    [
        "pnpm-lock.yaml",
        "package-lock.json",
        "yarn.lock",
        "poetry.lock",
        "uv.lock",
        "Cargo.lock",
        "Pipfile.lock",
        "go.sum",
        "composer.lock",
        "Gemfile.lock",
    ],
)
def test_lockfile_is_a_risk_even_when_authorized(based, name):
    rel = f"services/api/{name}"
    based.write(rel, "dependency graph v2\n")
    report = review_diff(based.path, allow=[rel])
    assert codes_for(report, rel) == ["LOCKFILE_CHANGED"]
    assert report["gate"] == "review"


def test_authorized_lockfile_keeps_its_risk_and_unauthorized_one_has_both(based):
    based.write("pnpm-lock.yaml", "lockfileVersion: 10\n")
    assert codes_for(review_diff(based.path, allow=["pnpm-lock.yaml"]), "pnpm-lock.yaml") == ["LOCKFILE_CHANGED"]
    both = review_diff(based.path, allow=["tests/"])
    assert codes_for(both, "pnpm-lock.yaml") == ["LOCKFILE_CHANGED", "UNAUTHORIZED_PATH"]


@pytest.mark.parametrize(
    "rel,code",
    [
        ("pyproject.toml", "DEPENDENCY_MANIFEST_CHANGED"),
        ("pkg/requirements-dev.txt", "DEPENDENCY_MANIFEST_CHANGED"),
        ("web/package.json", "DEPENDENCY_MANIFEST_CHANGED"),
        ("go.mod", "DEPENDENCY_MANIFEST_CHANGED"),
        (".github/workflows/ci.yml", "CI_CONFIG_CHANGED"),
        ("svc/.gitlab-ci.yml", "CI_CONFIG_CHANGED"),
        (".ci/run", "CI_CONFIG_CHANGED"),
        ("deep/.circleci/config.yml", "CI_CONFIG_CHANGED"),
        ("Jenkinsfile", "CI_CONFIG_CHANGED"),
    ],
)
def test_manifest_and_ci_paths(based, rel, code):
    based.write(rel, "changed\n")
    assert codes_for(review_diff(based.path, allow=[rel]), rel) == [code]


def test_near_names_are_not_manifests_or_ci(based):
    based.write_many(
        {
            "docs/pyproject.toml.md": "x\n",
            "github/workflows/ci.yml": "x\n",
            "my.ci/run": "x\n",
            "requirements.md": "x\n",
        }
    )
    report = review_diff(based.path, allow=["docs/", "github/", "my.ci/", "requirements.md"])
    assert report["risks"] == [] and report["gate"] == "pass"


def test_binary_change_has_null_counts_and_a_risk(based):
    based.write("image.bin", b"\x00\x09\x08")
    based.stage("image.bin")
    based.write("assets/logo.png", b"\x89PNG\r\n\x1a\n\x00\x00")  # untracked binary
    report = review_diff(based.path, allow=["image.bin", "assets/"])
    f = files_by_path(report)
    for rel in ("image.bin", "assets/logo.png"):
        assert (f[rel]["additions"], f[rel]["deletions"], f[rel]["binary"]) == (None, None, True)
        assert codes_for(report, rel) == ["BINARY_CHANGED"]
        assert f[rel]["contentId"] == plain_blob_id(based, rel)
    assert report["gate"] == "review"


def test_a_file_can_carry_several_risks(based):
    based.write("vendor/.github/workflows/x.yml", b"\x00bin")
    based.chmod("vendor/.github/workflows/x.yml")
    report = review_diff(based.path, allow=["tests/"])
    assert codes_for(report, "vendor/.github/workflows/x.yml") == [
        "BINARY_CHANGED",
        "CI_CONFIG_CHANGED",
        "EXECUTABLE_MODE_CHANGED",
        "UNAUTHORIZED_PATH",
    ]


def _escaped_names(repo) -> None:
    """Two names with no faithful printed form: bytes that are not UTF-8, and a backslash."""
    repo.write("keep.txt", "k\n")
    repo.commit("base")
    for raw in (b"/dir/bad\xff.txt", b"/odd/back\\slash.txt"):
        target = os.fsencode(repo.path) + raw
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as fh:
            fh.write(b"x\n")


def test_an_escaped_name_inside_an_allowed_folder_is_authorized(repo):
    """A folder entry compares as a prefix of the raw name: exact, whatever the name's printed form."""
    _escaped_names(repo)
    blocked = review_diff(repo.path, allow=["elsewhere/"])
    assert risk_set(blocked) == {
        ("UNAUTHORIZED_PATH", "dir/bad\\xff.txt"),
        ("UNAUTHORIZED_PATH", "odd/back\\\\slash.txt"),
    }
    report = review_diff(repo.path, allow=["dir/", "odd/"])
    items = {f["path"]: f for f in report["files"]}
    assert items["dir/bad\\xff.txt"]["pathNotUtf8"] is True and items["odd/back\\\\slash.txt"]["pathEscaped"] is True
    assert report["risks"] == [] and report["gate"] == "pass"
    assert review_diff(repo.path, allow=["dir/"])["risks"] == [
        {"code": "UNAUTHORIZED_PATH", "path": "odd/back\\\\slash.txt", "severity": "block"}
    ]
    review.canonical_json(report).decode("utf-8")  # representable as UTF-8


def test_an_exact_file_entry_never_authorizes_an_escaped_name(repo):
    from labkit.review.allow import path_allowed

    _escaped_names(repo)
    # Neither the printed (escaped) form nor the raw form (undecodable bytes as a POSIX command line
    # delivers them, or a lone surrogate from JSON) is an allow entry: the report could not even carry it.
    raw = os.fsdecode(b"dir/bad\xff.txt")
    for entry in ("dir/bad\\xff.txt", "odd/back\\\\slash.txt", raw, "dir/\ud800.txt"):
        with pytest.raises(LabkitError) as err:
            review_diff(repo.path, allow=[entry])
        assert err.value.code == "invalid_argument", entry
    # And the matcher itself: an exact entry equal to an escaped name is not trusted; a folder entry is.
    assert not path_allowed(raw, (raw,), escaped=True) and path_allowed(raw, (raw,))
    assert path_allowed(raw, ("dir/",), escaped=True)
    report = review_diff(repo.path, allow=["odd/"])
    assert risk_set(report) == {("UNAUTHORIZED_PATH", "dir/bad\\xff.txt")} and report["gate"] == "block"


def test_rename_needs_both_paths_authorized(based):
    based.rename("src/util.py", "lib/util.py")
    report = review_diff(based.path, allow=["lib/"])
    (item,) = report["files"]
    assert (item["status"], item["path"], item["origPath"]) == ("R", "lib/util.py", "src/util.py")
    assert (item["additions"], item["deletions"]) == (0, 0)
    assert risk_set(report) == {("UNAUTHORIZED_PATH", "src/util.py")}
    assert review_diff(based.path, allow=["lib/", "src/util.py"])["gate"] == "pass"


def test_unstaged_rename_with_edit_is_delete_plus_untracked(based):
    # Without staging, git cannot pair the two sides: the gate still sees both paths.
    based.rename("src/util.py", "lib/util.py", stage=False)
    report = review_diff(based.path, allow=["lib/"])
    f = files_by_path(report)
    assert (f["src/util.py"]["status"], f["lib/util.py"]["status"]) == ("D", "A")
    assert risk_set(report) == {("UNAUTHORIZED_PATH", "src/util.py")}


def test_submodule_bump(make_repo):
    lib = make_repo("lib")
    lib.write("lib.txt", "v1\n")
    lib.commit("v1")
    main = make_repo("main")
    main.write("app.txt", "app\n")
    main.commit("base")
    main.add_submodule("vendor/lib", lib)
    sub = type(main)(main.path / "vendor/lib", init=False)
    sub.write("lib.txt", "v2\n")
    new_head = sub.commit("v2")
    report = review_diff(main.path, allow=["vendor/lib"])
    assert review_diff(main.path, allow=["vendor/lib/"])["risks"] == report["risks"]
    (item,) = report["files"]
    assert (item["path"], item["oldMode"], item["newMode"]) == ("vendor/lib", "160000", "160000")
    assert item["contentId"] == new_head
    assert codes_for(report, "vendor/lib") == ["SUBMODULE_CHANGED"]
    assert report["gate"] == "review"


def test_gitmodules_and_nested_repository_are_submodule_risks(make_repo):
    main = make_repo("main")
    main.write("app.txt", "app\n")
    main.write(".gitmodules", "")
    main.commit("base")
    main.write(".gitmodules", '[submodule "x"]\n\tpath = x\n\turl = https://example.invalid/x\n')
    nested = type(main)(main.path / "nested")
    nested.write("n.txt", "n\n")
    nested.commit("n")
    report = review_diff(main.path, allow=[".gitmodules", "nested/"])
    assert risk_set(report) == {("SUBMODULE_CHANGED", ".gitmodules"), ("SUBMODULE_CHANGED", "nested")}


def test_chmod_is_an_executable_mode_risk(based):
    based.chmod("scripts/run.sh")
    report = review_diff(based.path, allow=["scripts/"])
    (item,) = report["files"]
    assert (item["oldMode"], item["newMode"], item["additions"], item["deletions"]) == ("100644", "100755", 0, 0)
    assert codes_for(report, "scripts/run.sh") == ["EXECUTABLE_MODE_CHANGED"]
    based.write("scripts/new.sh", "#!/bin/sh\n", mode=0o755)  # a new executable, untracked
    assert "EXECUTABLE_MODE_CHANGED" in codes_for(review_diff(based.path, allow=["scripts/"]), "scripts/new.sh")


def test_empty_repository_compares_against_the_empty_tree(repo):
    repo.write("staged.txt", "one\ntwo\n")
    repo.stage("staged.txt")
    repo.write("loose.txt", "x")
    report = review_diff(repo.path, allow=["staged.txt", "loose.txt"])
    assert report["base"] == EMPTY_TREE
    f = files_by_path(report)
    assert (f["staged.txt"]["source"], f["staged.txt"]["status"], f["staged.txt"]["additions"]) == ("tracked", "A", 2)
    assert (f["loose.txt"]["source"], f["loose.txt"]["additions"]) == ("untracked", 1)
    assert report["gate"] == "pass"
    assert review_diff(repo.path, base=EMPTY_TREE)["base"] == EMPTY_TREE


def test_staged_unstaged_and_untracked_merge_without_duplicates(based):
    based.write("src/app.py", "staged\n")
    based.stage("src/app.py")
    based.write("src/app.py", "staged\nthen edited\n")
    based.write("src/intent.py", "x\n")
    based.git("add", "-N", "src/intent.py")
    based.write("src/loose.py", "y\n")
    based.write("ignored.log", "noise\n")
    based.write(".gitignore", "*.log\n")
    report = review_diff(based.path, allow=["src/", ".gitignore"])
    assert [f["path"] for f in report["files"]] == [".gitignore", "src/app.py", "src/intent.py", "src/loose.py"]
    f = files_by_path(report)
    assert f["src/app.py"]["contentId"] == plain_blob_id(based, "src/app.py")  # the worktree, not the index
    assert (f["src/app.py"]["additions"], f["src/app.py"]["deletions"]) == (2, 1)


def test_symlink_is_not_followed(based, tmp_path):
    secret = tmp_path / "outside.txt"
    secret.write_text("outside\n" * 50)
    based.symlink("link", str(secret))
    report = review_diff(based.path, allow=["link"])
    (item,) = report["files"]
    assert item["newMode"] == "120000"
    assert item["additions"] == 1  # the link's target text, as git stores it
    assert (
        item["contentId"]
        == plain_git(based.path, "hash-object", "--no-filters", "--stdin", input=str(secret).encode())
        .stdout.decode()
        .strip()
    )


def test_sensitive_path_is_named_but_its_content_never_appears(based):
    based.write(".env", "API_TOKEN=old-token\n")
    based.commit("env")
    based.write(".env", "API_TOKEN=sk-live-SECRET-123\n")
    based.write("keys/deploy.pem", "-----BEGIN KEY-----\nSECRET-PEM\n")
    report = review_diff(based.path, allow=[".env", "keys/"])
    assert risk_set(report) == {("SENSITIVE_PATH", ".env"), ("SENSITIVE_PATH", "keys/deploy.pem")}
    for item in report["files"]:
        assert item["contentId"] is None and item["contentWithheld"] is True
    text = json.dumps(report)
    assert "SECRET" not in text
    assert plain_blob_id(based, ".env") not in text


# -- canonical hash and approvals ---------------------------------------------------------------


def test_report_hash_is_canonical_and_reproducible(based):
    based.write("src/café 中.py", "print('é ü 中')\n")
    based.write("new.txt", "n\n")
    one = review_diff(based.path, allow=["src/", "new.txt"])
    two = review_diff(based.path, allow=["new.txt", "./src//"])
    assert one == two
    body = {k: v for k, v in one.items() if k != "reportSha256"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    assert "中".encode() in canonical
    assert one["reportSha256"] == hashlib.sha256(canonical).hexdigest()
    assert review.verify_report_hash(one)
    tampered = dict(one, gate="block")
    assert not review.verify_report_hash(tampered)


def test_same_size_edit_changes_the_hash_and_voids_an_approval(based):
    based.write("src/app.py", "print('v1')\n")
    approved = review_diff(based.path, allow=["src/"])
    based.write("src/app.py", "print('v2')\n")  # same size, same line counts
    later = review_diff(based.path, allow=["src/"])
    assert later["totals"] == approved["totals"]
    assert later["reportSha256"] != approved["reportSha256"]
    assert review.approval_holds(approved["reportSha256"], based.path, allow=["src/"])["valid"] is False
    based.write("src/app.py", "print('v1')\n")
    assert review.approval_holds(approved["reportSha256"], based.path, allow=["src/"])["valid"] is True


# -- budgets fail closed ----------------------------------------------------------------------------


def test_file_budget_makes_the_report_incomplete_and_blocks(based):
    for i in range(5):
        based.write(f"tests/t{i}.py", f"{i}\n")
    report = review_diff(based.path, allow=["tests/"], max_files=3)
    assert report["complete"] is False and report["gate"] == "block"
    assert len(report["files"]) == 3 and report["incompleteReasons"]
    assert review_diff(based.path, allow=["tests/"])["gate"] == "pass"


def test_listing_byte_budget_fails_closed(based):
    for i in range(20):
        based.write(f"tests/test_{i:03d}_with_a_long_name.py", "x\n")
        based.write(f"src/m{i}.py", "y\n")
    based.stage()
    based.write("src/app.py", "edited\n")
    report = review_diff(based.path, allow=["tests/", "src/"], max_listing_bytes=200)
    assert report["complete"] is False and report["gate"] == "block"
    assert len(report["incompleteReasons"]) >= 1


def test_untracked_byte_budget_fails_closed(based):
    based.write("tests/big.py", "x" * 5000 + "\n")
    report = review_diff(based.path, allow=["tests/"], max_untracked_bytes=1000)
    assert report["complete"] is False and report["gate"] == "block"


def test_worktree_changing_during_review_is_incomplete(based, monkeypatch):
    """A formatter still writing while the gate hashes: the facts mix two moments."""
    real_fill = facts._fill_content_ids

    def fill_then_tool_writes(*args, **kwargs):
        real_fill(*args, **kwargs)
        based.write("src/late.py", "written by a tool after the listing\n")

    based.write("tests/test_app.py", "changed\n")
    monkeypatch.setattr(facts, "_fill_content_ids", fill_then_tool_writes)
    report = review_diff(based.path, allow=["tests/"])
    assert report["complete"] is False and report["gate"] == "block"
    assert any("changed while" in r for r in report["incompleteReasons"])


@pytest.mark.parametrize("bad", [0, -1, True, "5"])
def test_bad_budget_is_invalid_argument(based, bad):
    with pytest.raises(LabkitError) as exc:
        review_diff(based.path, max_files=bad)
    assert exc.value.code == "invalid_argument"


# -- allow entries ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad", ["", "   ", "/etc/passwd", "C:/x", ".", "./", "..", "src/../x", "a/..", "src\\a.py", "a\0b"]
)
def test_bad_allow_entries_are_refused(based, bad):
    with pytest.raises(LabkitError) as exc:
        review_diff(based.path, allow=[bad])
    assert exc.value.code == "invalid_argument"
    assert str(based.path) not in exc.value.message


def test_allow_errors_never_echo_an_absolute_path(based):
    for bad in ("/home/me/project/src/", "C:\\Users\\me\\src\\"):
        with pytest.raises(LabkitError) as exc:
            review_diff(based.path, allow=[bad])
        assert "me" not in exc.value.message and "absolute" in exc.value.message


def test_allow_must_be_a_list_and_entries_normalise():
    with pytest.raises(LabkitError) as exc:
        review.normalize_allow("src/")
    assert exc.value.code == "invalid_argument"
    assert review.normalize_allow(["./src//", "src/", "tests/a.py", "./tests/a.py"]) == ("src/", "tests/a.py")


# -- bad repositories, bases and git failures -------------------------------------------------


def test_not_a_repository(tmp_path):
    (tmp_path / "plain").mkdir()
    for root in (tmp_path / "plain", tmp_path / "missing"):
        with pytest.raises(LabkitError) as exc:
            review_diff(root)
        assert exc.value.code == "not_a_repository"
        assert str(tmp_path) not in exc.value.message


@pytest.mark.parametrize("bad", ["no-such-branch", "--output=/tmp/x", "HEAD~5", "deadbeef" * 5])
def test_unknown_base_is_invalid_argument(based, bad):
    with pytest.raises(LabkitError) as exc:
        review_diff(based.path, base=bad)
    assert exc.value.code == "invalid_argument"


def test_base_can_be_an_older_commit(based):
    first = based.head()
    based.write("tests/test_app.py", "changed\n")
    based.commit("second")
    based.tag("v1", first)
    report = review_diff(based.path, base="v1", allow=["tests/"])
    assert report["base"] == first
    assert [f["path"] for f in report["files"]] == ["tests/test_app.py"]
    assert review_diff(based.path, allow=["tests/"])["files"] == []


def test_git_failure_fails_closed_without_leaking(based):
    based.write("src/app.py", "print('x')\n")
    blob = plain_git(based.path, "rev-parse", "HEAD:src/app.py").stdout.decode().strip()
    obj = based.path / ".git" / "objects" / blob[:2] / blob[2:]
    obj.chmod(stat.S_IWUSR | stat.S_IRUSR)
    obj.unlink()  # the base blob is gone: git cannot count the lines
    with pytest.raises(LabkitError) as exc:
        review_diff(based.path, allow=["src/"])
    assert exc.value.code == "git_failed"
    assert str(based.path) not in exc.value.message and blob not in exc.value.message


def test_git_timeout_fails_closed(based, monkeypatch, tmp_path):
    # A real git cannot be made to hang on demand, so a wrapper named git
    # hangs on `diff` and hands every other call to the real one.
    real = shutil.which("git")
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nfor a in "$@"; do [ "$a" = diff ] && exec sleep 30; done\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}")
    based.write("src/app.py", "print('x')\n")
    monkeypatch.setattr(facts, "GIT_TIMEOUT_S", 1.0)
    with pytest.raises(LabkitError) as exc:
        review_diff(based.path, allow=["src/"])
    assert exc.value.code == "git_timeout"


def test_repository_config_never_runs_code(based):
    marker = based.path.parent / "ran"
    hook = based.path.parent / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch '{marker}'\n")
    hook.chmod(0o755)
    based.git("config", "core.fsmonitor", str(hook))
    based.git("config", "diff.external", str(hook))
    based.git("config", "diff.evil.textconv", str(hook))
    based.git("config", "diff.ignoreSubmodules", "all")
    based.write(".gitattributes", "*.py diff=evil\n")
    based.write("src/app.py", "print('x')\n")
    report = review_diff(based.path, allow=["src/", ".gitattributes"])
    assert {f["path"] for f in report["files"]} == {".gitattributes", "src/app.py"}
    assert not marker.exists(), "repository config ran a program"


def test_listing_parser_refuses_patch_text(based):
    """Output polluted by --binary patches must be refused, never half-parsed."""
    based.write("image.bin", b"\x00\x01\x02" * 50)
    based.stage("image.bin")
    based.write("a.txt", "B\n")
    clean = plain_git(based.path, "diff", "--raw", "--numstat", "-z", "--no-abbrev", "HEAD", "--").stdout
    assert len(parse_raw(clean, numstat=True)) == 2
    polluted = plain_git(based.path, "diff", "--raw", "--numstat", "-z", "--no-abbrev", "--binary", "HEAD", "--").stdout
    assert b"GIT binary patch" in polluted
    with pytest.raises(ListingError) as exc:
        parse_raw(polluted, numstat=True)
    assert exc.value.code == "git_failed"


def test_review_matches_plain_git_numstat(based):
    based.write("image.bin", b"\x00\x01\x02" * 50)
    based.write("src/app.py", "a\nb\nc\n")
    based.delete("docs/guide.md")
    based.stage()
    expected = {}
    tokens = plain_git(based.path, "diff", "--numstat", "-z", "HEAD", "--").stdout.split(b"\0")
    for tok in tokens:
        if tok:
            a, d, p = tok.decode().split("\t")
            expected[p] = (None if a == "-" else int(a), None if d == "-" else int(d))
    report = review_diff(based.path, allow=["image.bin", "src/", "docs/"])
    assert {f["path"]: (f["additions"], f["deletions"]) for f in report["files"]} == expected


# -- baseline: preexisting versus introduced ---------------------------------------------------


@pytest.fixture
def dirty_before_agent(based):
    """The user's own dirty work before the agent starts."""
    based.write("docs/guide.md", "# Guide\nuser's draft\n")
    based.write("notes.txt", "user notes\n")
    based.write("pnpm-lock.yaml", "lockfileVersion: 9\n# user upgrade\n")
    return based


def test_baseline_never_blames_the_agent_for_user_changes(dirty_before_agent):
    repo = dirty_before_agent
    baseline = review.take_baseline(repo.path)
    repo.write("tests/test_app.py", "def test_app():\n    assert 2\n")
    report = review_diff(repo.path, allow=["tests/"], baseline=baseline)
    assert report["baseline"]["preexisting"] == ["docs/guide.md", "notes.txt", "pnpm-lock.yaml"]
    assert report["baseline"]["introduced"] == ["tests/test_app.py"]
    # Never hidden: the user's files are still in the report, with their inherent risks.
    assert {f["path"]: f["origin"] for f in report["files"]}["notes.txt"] == "preexisting"
    assert risk_set(report) == {("LOCKFILE_CHANGED", "pnpm-lock.yaml")}
    assert report["gate"] == "review"
    # Without the baseline the same worktree blocks.
    assert review_diff(repo.path, allow=["tests/"])["gate"] == "block"


def test_baseline_blames_further_edits_and_reverts(dirty_before_agent):
    repo = dirty_before_agent
    baseline = review.take_baseline(repo.path)
    repo.write("notes.txt", "user notes\nagent appended\n")
    repo.write("docs/guide.md", "# Guide\n")  # the agent wiped the user's draft
    report = review_diff(repo.path, allow=["tests/"], baseline=baseline)
    assert report["baseline"]["introduced"] == ["notes.txt"]
    assert report["baseline"]["reverted"] == ["docs/guide.md"]
    assert {("UNAUTHORIZED_PATH", "notes.txt"), ("UNAUTHORIZED_PATH", "docs/guide.md")} <= risk_set(report)
    assert report["gate"] == "block"


def test_baseline_notices_a_changed_sensitive_file_without_showing_it(based):
    based.write(".env", "A=1\n")
    baseline = review.take_baseline(based.path)
    assert review_diff(based.path, baseline=baseline)["baseline"]["preexisting"] == [".env"]
    based.write(".env", "A=2\n")
    report = review_diff(based.path, baseline=baseline)
    assert report["baseline"]["introduced"] == [".env"]
    assert report["files"][0]["contentId"] is None


def test_baseline_file_round_trip_and_refusals(based, tmp_path):
    based.write("notes.txt", "n\n")
    path = tmp_path / "baseline.json"
    review.save_baseline(review.take_baseline(based.path), path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert review_diff(based.path, baseline=path)["baseline"]["preexisting"] == ["notes.txt"]
    other = review.take_baseline(based.path)
    other["base"] = EMPTY_TREE
    with pytest.raises(LabkitError) as exc:
        review_diff(based.path, baseline=other)
    assert exc.value.code == "invalid_argument"
    with pytest.raises(LabkitError) as exc:
        review.save_baseline(review.take_baseline(based.path), tmp_path / "no-such-dir" / "b.json")
    assert exc.value.code == "invalid_argument" and str(tmp_path) not in exc.value.message
    (tmp_path / "junk.json").write_text("[1, 2]")
    for bad in (tmp_path / "junk.json", tmp_path / "missing.json"):
        with pytest.raises(LabkitError) as exc:
            review_diff(based.path, baseline=bad)
        assert exc.value.code == "invalid_argument"


# -- the CLI ---------------------------------------------------------------------------------------


def test_cli_json_report(based, cli):
    based.write("src/app.py", "print('cli')\n")
    based.write("tests/test_new.py", "x\n")
    proc = cli("review", str(based.path), "--allow", "tests/", "--json")
    assert proc.returncode == 3, proc.stderr  # the gate blocks: exit 3, like a linter
    report = json.loads(proc.stdout)
    assert report == review_diff(based.path, allow=["tests/"])
    assert report["gate"] == "block"
    assert str(based.path).encode() not in proc.stdout


def test_cli_errors_and_usage(based, cli, tmp_path):
    proc = cli("review", str(based.path), "--allow", "../etc/", "--json")
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["error"]["code"] == "invalid_argument"
    proc = cli("review", str(tmp_path / "nope"), "--json")
    assert proc.returncode == 1 and json.loads(proc.stdout)["error"]["code"] == "not_a_repository"
    assert str(tmp_path).encode() not in proc.stdout
    proc = cli("review", str(based.path), "--base", "nope", "--json")
    assert json.loads(proc.stdout)["error"]["code"] == "invalid_argument"
    proc = cli("review", str(based.path), "--max-files", "0", "--json")
    assert proc.returncode == 1 and json.loads(proc.stdout)["error"]["code"] == "invalid_argument"
    assert cli("review", str(based.path), "--max-files", "many").returncode == 2
    assert cli("review", "--bogus").returncode == 2  # (ROOT itself defaults to the current folder)


def test_cli_baseline_flags_and_human_output(based, cli, tmp_path):
    based.write("notes.txt", "mine\n")
    saved = tmp_path / "b.json"
    proc = cli("review", str(based.path), "--save-baseline", str(saved), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["entries"] == 1 and saved.exists()
    based.write("tests/test_app.py", "agent\n")
    proc = cli("review", str(based.path), "--allow", "tests/", "--baseline", str(saved), "--json")
    report = json.loads(proc.stdout)
    assert report["gate"] == "pass" and report["baseline"]["preexisting"] == ["notes.txt"]
    human = cli("review", str(based.path), "--allow", "tests/", "--max-files", "1")
    text = human.stdout.decode()
    assert human.returncode == 3 and "gate: BLOCK" in text and "INCOMPLETE" in text


# -- properties of the authorization rule (pure, no git) ------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_segment = st.text(
    alphabet=st.characters(blacklist_characters="/\\\0", blacklist_categories=("Cs",)), min_size=1, max_size=8
).filter(
    lambda s: s not in (".", "..") and s.strip() != "" and not (len(s) >= 2 and s[1] == ":" and s[0].isalpha())
)  # "C:" reads as a drive: refused by design


@settings(max_examples=200, deadline=None)
@given(
    folder=st.lists(_segment, min_size=1, max_size=3), rest=st.lists(_segment, min_size=1, max_size=3), tail=_segment
)
def test_folder_entries_admit_exactly_their_subtree(folder, rest, tail):
    entry = "/".join(folder) + "/"
    (allow,) = [review.normalize_allow([entry])]
    assert allow == (entry,)
    assert path_allowed(entry + "/".join(rest), allow)
    sibling = "/".join(folder) + tail  # same prefix, no '/' boundary: src -> src-old
    assert not path_allowed(sibling, allow)
    assert not path_allowed(sibling + "/" + "/".join(rest), allow)


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(_segment, min_size=1, max_size=4), folder=st.booleans(), dots=st.booleans())
def test_allow_normalisation_is_idempotent(parts, folder, dots):
    raw = ("./" if dots else "") + "//".join(parts) + ("/" if folder else "")
    once = review.normalize_allow([raw])
    assert review.normalize_allow(list(once)) == once
    assert once[0].endswith("/") == folder
