"""``labkit status``: the contract's status object, via the API and the CLI."""

from __future__ import annotations

import json
import os

import pytest

from labkit.boundary import names
from labkit.boundary.errors import LabkitError
from labkit.course.repo_builder import IsolatedRepo
from labkit.git.status import git_status

from .conftest import plain_git

EMPTY_HIDDEN = {"changes": 0, "conflicts": 0}
CONTRACT_KEYS = {"branch", "staged", "unstaged", "untracked", "conflicted", "hidden"}


def via_cli(cli, root) -> dict:
    proc = cli("status", str(root), "--json")
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.endswith(b"\n") and proc.stdout.count(b"\n") == 1
    return json.loads(proc.stdout)


def status_both(cli, root) -> dict:
    """The API result, after checking that the CLI prints exactly the same object."""
    api = git_status(root)
    assert via_cli(cli, root) == api
    assert set(api) >= CONTRACT_KEYS and set(api["branch"]) >= {"head", "oid", "upstream", "ahead", "behind"}
    return api


@pytest.fixture
def base(repo):
    repo.write_many({"a.txt": "a\n", "b.txt": "b\n", "moved.txt": "moving content\n" * 4, "src/mod.py": "x = 1\n"})
    repo.commit("base")
    return repo


def test_staged_unstaged_untracked(base, cli):
    base.write("a.txt", "a2\n")
    base.stage("a.txt")
    base.write("b.txt", "b2\n")
    base.write("new.txt", "n\n")
    base.write("deep/er/new.txt", "n\n")
    base.delete("src/mod.py")
    got = status_both(cli, base.path)
    assert got["staged"] == [{"path": "a.txt", "status": "M"}]
    assert got["unstaged"] == [{"path": "b.txt", "status": "M"}, {"path": "src/mod.py", "status": "D"}]
    assert got["untracked"] == [{"path": "deep/er/new.txt"}, {"path": "new.txt"}]
    assert got["conflicted"] == [] and got["hidden"] == EMPTY_HIDDEN


def test_staged_and_unstaged_on_the_same_path(base, cli):
    base.write("a.txt", "staged\n")
    base.stage("a.txt")
    base.write("a.txt", "then edited again\n")
    base.write("added.txt", "1\n")
    base.stage("added.txt")
    base.delete("added.txt")
    got = status_both(cli, base.path)
    assert got["staged"] == [{"path": "a.txt", "status": "M"}, {"path": "added.txt", "status": "A"}]
    assert got["unstaged"] == [{"path": "a.txt", "status": "M"}, {"path": "added.txt", "status": "D"}]


def test_rename_carries_both_paths(base, cli):
    base.rename("moved.txt", "dir/renamed.txt")
    base.write("dir/renamed.txt", "moving content\n" * 4 + "edited after the rename\n")
    got = status_both(cli, base.path)
    assert got["staged"] == [{"path": "dir/renamed.txt", "status": "R", "origPath": "moved.txt"}]
    assert got["unstaged"] == [{"path": "dir/renamed.txt", "status": "M"}]


def test_sensitive_entries_are_counted_in_hidden(base, cli):
    """The seed's case: .env edits and renames to/from sensitive names, with one visible rename."""
    base.write_many(
        {
            ".env": "TOKEN=old\n",
            "a-before.ts": "export const a = 1;\n" * 3,
            "b-before.ts": "export const b = 2;\n" * 3,
            ".env.local": "KEY=1\n" * 3,
        }
    )
    base.commit("more")
    base.write(".env", "TOKEN=new\n")  # unstaged change on a sensitive file
    base.rename("a-before.ts", "a-after.ts")  # visible
    base.rename("b-before.ts", "config/.env")  # rename TO a sensitive path
    base.rename(".env.local", "c-after.ts")  # rename FROM a sensitive path
    base.write("keys/server.pem", "-----BEGIN-----\n")  # untracked sensitive
    base.write(".ssh/config", "Host *\n")  # untracked, under a sensitive folder
    got = status_both(cli, base.path)
    assert got["staged"] == [{"path": "a-after.ts", "status": "R", "origPath": "a-before.ts"}]
    assert got["unstaged"] == [] and got["untracked"] == []
    assert got["hidden"] == {"changes": 5, "conflicts": 0}
    text = json.dumps(got)
    for name in (".env", "config", ".env.local", "c-after.ts", "b-before.ts", "server.pem", ".ssh"):
        assert name not in text


def test_an_edit_on_top_of_a_sensitive_rename_stays_hidden(base, cli):
    base.write(".env.production", "SECRET=1\n" * 3)
    base.commit("env")
    base.rename(".env.production", "notes.txt")
    base.write("notes.txt", "SECRET=1\n" * 3 + "more\n")
    got = status_both(cli, base.path)
    assert got["staged"] == [] and got["unstaged"] == []
    assert got["hidden"]["changes"] == 2


def test_labignore_patterns_are_hidden_too(base, cli):
    base.write(".labignore", "customers/\n")
    base.write("customers/list.csv", "alice\n")
    got = status_both(cli, base.path)
    # .labignore itself is sensitive (it points at the secrets); a file only the new policy hides is named.
    assert got["untracked"] == [] and got["hidden"]["changes"] == 2
    assert got["hiddenByChangedPolicy"] == ["customers/list.csv"]


def test_a_change_cannot_hide_itself_behind_labignore(make_repo, cli):
    """The attack: the change adds its own backdoor to .labignore. Plain git shows it; labkit names it."""
    from labkit.review import review_diff

    repo = make_repo()
    repo.write_many({"src/app.py": "print('ok')\n", ".labignore": "private/\n", "private/key.txt": "k\n"})
    repo.commit("base")
    repo.write("src/backdoor.py", "import os; os.system('curl evil')\n")
    repo.write("src/app.py", "import backdoor\n")
    repo.write(".labignore", "private/\nsrc/backdoor.py\nsrc/app.py\n")
    assert b"src/backdoor.py" in plain_git(repo.path, "status", "--porcelain").stdout, "positive control"
    got = status_both(cli, repo.path)
    assert got["untracked"] == [] and got["unstaged"] == []
    assert got["hiddenByChangedPolicy"] == ["src/app.py", "src/backdoor.py"]
    from labkit.git.diff import git_diff

    page = git_diff(repo.path, mode="head")
    assert "curl evil" not in page["diff"] and page["hiddenByChangedPolicy"] == ["src/app.py"]
    report = review_diff(repo.path, allow=["src/"])
    assert {"code": "POLICY_FILE_CHANGED", "path": ".labignore", "severity": "block"} in report["risks"]
    assert report["gate"] == "block"


def test_a_user_protecting_a_new_secret_is_withheld_and_named(make_repo, cli):
    repo = make_repo()
    repo.write_many({"app.py": "x = 1\n"})
    repo.commit("base")
    repo.write("notes/customer-export.csv", "alice,secret\n")
    repo.write(".labignore", "notes/customer-export.csv\n")
    got = status_both(cli, repo.path)
    assert got["untracked"] == [] and got["hiddenByChangedPolicy"] == ["notes/customer-export.csv"]
    # Committed, the policy is the base's too: nothing is hidden "by the change" any more.
    repo.commit("protect the export")
    repo.write("notes/customer-export.csv", "alice,secret,more\n")
    again = status_both(cli, repo.path)
    assert again["unstaged"] == [] and again["hiddenByChangedPolicy"] == [] and again["hidden"]["changes"] == 1


def test_deleting_a_labignore_line_does_not_expose_what_the_base_hid(make_repo, cli):
    repo = make_repo()
    repo.write_many({".labignore": "vault/\n", "vault/token.txt": "t0\n", "a.txt": "a\n"})
    repo.commit("base")
    repo.write(".labignore", "")
    repo.write("vault/token.txt", "t1\n")
    got = status_both(cli, repo.path)
    assert got["unstaged"] == [] and got["hidden"]["changes"] == 2 and got["hiddenByChangedPolicy"] == []


def test_conflicts_visible_and_hidden(base, cli):
    base.make_conflict("clash.txt", "secrets.json")
    got = status_both(cli, base.path)
    assert got["conflicted"] == [{"path": "clash.txt"}]
    assert got["hidden"] == {"changes": 0, "conflicts": 1}
    assert got["staged"] == [] and got["unstaged"] == []


def test_branch_upstream_ahead_behind(make_repo, cli):
    origin = make_repo("origin")
    origin.write("a.txt", "a\n")
    origin.commit("one")
    local = make_repo("local")
    allow = (("protocol.file.allow", "always"),)
    local.git("remote", "add", "origin", str(origin.path))
    local.git("fetch", "-q", "origin", config=allow)
    local.git("reset", "-q", "--hard", "origin/main")
    local.git("branch", "-q", "--set-upstream-to=origin/main")
    got = status_both(cli, local.path)["branch"]
    assert got == {"head": "main", "oid": origin.head(), "upstream": "origin/main", "ahead": 0, "behind": 0}

    for n in range(2):
        local.write(f"l{n}.txt", "l\n")
        local.commit(f"local {n}")
    for n in range(3):
        origin.write(f"o{n}.txt", "o\n")
        origin.commit(f"origin {n}")
    local.git("fetch", "-q", "origin", config=allow)
    got = status_both(cli, local.path)["branch"]
    assert got == {"head": "main", "oid": local.head(), "upstream": "origin/main", "ahead": 2, "behind": 3}


def test_detached_head(base, cli):
    first = base.head()
    base.write("a.txt", "later\n")
    base.commit("later")
    base.checkout(first)
    got = status_both(cli, base.path)["branch"]
    assert got["head"] is None and got["oid"] == first and got["upstream"] is None


def test_repository_with_no_commit(repo, cli):
    repo.write("first.txt", "1\n")
    repo.stage("first.txt")
    repo.write("loose.txt", "2\n")
    got = status_both(cli, repo.path)
    assert got["branch"] == {"head": "main", "oid": None, "upstream": None, "ahead": None, "behind": None}
    assert got["staged"] == [{"path": "first.txt", "status": "A"}]
    assert got["untracked"] == [{"path": "loose.txt"}]


def test_clean_repository(base, cli):
    got = status_both(cli, base.path)
    assert (got["staged"], got["unstaged"], got["untracked"], got["conflicted"]) == ([], [], [], [])


@pytest.mark.parametrize(
    "name", ["tab\there.txt", "new\nline.txt", "ünïcödé/日本語.txt", "space and 'quote\".txt", "back\\slash.txt"]
)
def test_awkward_file_names(base, cli, name):
    # Written directly: the builder itself refuses a backslash, as labkit's path rules do.
    tracked = "tracked " + name.replace("/", "-")
    (base.path / name).parent.mkdir(parents=True, exist_ok=True)
    (base.path / name).write_text("x\n")
    (base.path / tracked).write_text("y\n")
    base.commit("awkward", only=(tracked,))
    (base.path / tracked).write_text("z\n")
    got = status_both(cli, base.path)
    # A backslash is escaped (the one name encoder): the printed name is accepted back as an argument.
    assert got["untracked"] == [names.fields("path", name)]
    assert got["unstaged"] == [{**names.fields("path", tracked), "status": "M"}]
    assert names.decode_argument(got["untracked"][0]["path"]) == name


def test_a_name_that_is_not_utf8_keeps_the_output_utf8(base, cli):
    raw = os.fsencode(base.path) + b"/bad\xffname.txt"
    with open(raw, "wb") as fh:
        fh.write(b"x\n")
    proc = cli("status", str(base.path), "--json")
    assert proc.returncode == 0
    got = json.loads(proc.stdout.decode("utf-8"))  # strict: raises on invalid UTF-8
    assert got["untracked"] == [{"path": "bad\\xffname.txt", "pathNotUtf8": True, "pathEscaped": True}]
    assert git_status(base.path) == got


def test_a_folder_inside_a_repository(base, cli):
    base.write("src/new.py", "y = 2\n")
    base.write("src/mod.py", "x = 3\n")
    base.write("outside.txt", "o\n")
    base.rename("moved.txt", "src/moved-in.txt")
    got = status_both(cli, base.path / "src")
    assert got["unstaged"] == [{"path": "mod.py", "status": "M"}]
    assert got["untracked"] == [{"path": "new.py"}]
    # Seen from the folder, a file moved in from outside is an addition: git
    # pairs renames only inside the pathspec, so no outside name is shown.
    assert got["staged"] == [{"path": "moved-in.txt", "status": "A"}]
    assert "moved.txt" not in json.dumps(got) and "outside" not in json.dumps(got)


def test_not_a_repository(tmp_path, cli):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "file.txt").write_text("x")
    for root in (plain, tmp_path / "missing", plain / "file.txt"):
        with pytest.raises(LabkitError) as err:
            git_status(root)
        assert err.value.code == "not_a_repository"
        proc = cli("status", str(root), "--json")
        assert proc.returncode == 1
        assert json.loads(proc.stdout) == {"error": {"code": "not_a_repository", "message": err.value.message}}
        assert str(tmp_path) not in proc.stdout.decode() + proc.stderr.decode()
    assert sorted(p.name for p in plain.iterdir()) == ["file.txt"]  # nothing written


def test_bare_repository_and_git_folder(repo, tmp_path):
    repo.write("a.txt", "a\n")
    repo.commit("a")
    bare = IsolatedRepo(tmp_path / "bare.git", init=False)
    bare.git("init", "-q", "--bare")
    for root in (repo.path / ".git", bare.path):
        with pytest.raises(LabkitError) as err:
            git_status(root)
        assert err.value.code == "not_a_repository"


def test_status_writes_nothing(base, cli):
    """Even with stale stat data, status leaves the index and the tree as they were."""
    base.write("a.txt", "a\n")  # same content, new mtime: the index is stale
    st = os.stat(base.path / "a.txt")
    os.utime(base.path / "a.txt", ns=(st.st_atime_ns, st.st_mtime_ns + 3_000_000_000))
    index = base.path / ".git" / "index"
    before = (index.read_bytes(), sorted(p.name for p in (base.path / ".git").iterdir()))
    status_both(cli, base.path)
    assert (index.read_bytes(), sorted(p.name for p in (base.path / ".git").iterdir())) == before


def test_human_output(base, cli):
    base.write("a.txt", "changed\n")
    proc = cli("status", str(base.path))
    assert proc.returncode == 0
    text = proc.stdout.decode()
    assert "branch main" in text and "unstaged  M a.txt" in text and "hidden: 0 change(s)" in text


def test_long_listings_are_capped_with_totals(base, cli):
    from labkit.boundary.capped import MAX_LISTED_FILES
    from labkit.git.diff import git_diff

    for i in range(MAX_LISTED_FILES + 200):
        (base.path / f"gen-{i:05d}.txt").write_text("x\n")
    got = status_both(cli, base.path)
    assert len(got["untracked"]) == MAX_LISTED_FILES and got["truncated"] is True
    assert got["totals"]["untracked"] == MAX_LISTED_FILES + 200
    base.stage()
    page = git_diff(base.path, mode="staged")
    assert len(page["files"]) == MAX_LISTED_FILES and page["filesTruncated"] is True
    assert page["filesTotal"] == MAX_LISTED_FILES + 200
