"""The one sensitive/noise rule set, pattern by pattern from docs/reference.md."""

from __future__ import annotations

import os
import subprocess
import warnings

import pytest

from labkit.boundary.rules import PathRules

RULES = PathRules.for_root(None)

# (contract pattern, example names it must hide)
SENSITIVE = [
    (".env", [".env"]),
    (".env.*", [".env.local", ".env.production", ".env.example.bak"]),
    ("*.pem", ["server.pem"]),
    ("*.key", ["private.key"]),
    ("*.p12", ["cert.p12"]),
    ("*.pfx", ["cert.pfx"]),
    ("*.jks", ["store.jks"]),
    ("*.keystore", ["release.keystore"]),
    ("id_rsa*", ["id_rsa", "id_rsa.pub"]),
    ("id_ed25519*", ["id_ed25519", "id_ed25519.pub"]),
    ("id_ecdsa*", ["id_ecdsa"]),
    ("id_dsa*", ["id_dsa"]),
    (".npmrc", [".npmrc"]),
    (".netrc", [".netrc"]),
    ("_netrc", ["_netrc"]),
    (".git-credentials", [".git-credentials"]),
    ("credentials.json", ["credentials.json"]),
    ("service-account*.json", ["service-account.json", "service-account-prod.json"]),
    ("secrets.json", ["secrets.json"]),
    ("*.tfstate", ["terraform.tfstate"]),
    ("*.tfvars", ["prod.tfvars"]),
    ("auth.json", ["auth.json"]),
    (".htpasswd", [".htpasswd"]),
]
SENSITIVE_DIRS = [".ssh", ".aws", ".gnupg", ".docker", ".kube"]
NOISE_DIRS = [
    ".git",
    "node_modules",
    "__pycache__",
    ".venv",
    "venv",
    "dist",
    "build",
    ".pytest_cache",
    ".mypy_cache",
    ".ipynb_checkpoints",
    "target",
    "coverage",
    ".cache",
]
DEPTHS = ["", "app/", "deep/er/still/"]


@pytest.mark.parametrize("pattern, names", SENSITIVE, ids=[p for p, _ in SENSITIVE])
@pytest.mark.parametrize("prefix", DEPTHS)
def test_sensitive_file_patterns_at_any_depth(pattern, names, prefix):
    for name in names:
        assert RULES.is_sensitive(prefix + name), f"{prefix + name} should match {pattern}"
        assert RULES.is_hidden(prefix + name)
        assert not RULES.is_noise(prefix + name)


@pytest.mark.parametrize("folder", SENSITIVE_DIRS)
@pytest.mark.parametrize("prefix", DEPTHS)
def test_sensitive_folders_hide_everything_under_them(folder, prefix):
    assert RULES.is_sensitive(f"{prefix}{folder}", is_dir=True)
    assert RULES.is_sensitive(f"{prefix}{folder}/config")
    assert RULES.is_sensitive(f"{prefix}{folder}/nested/plain.txt")
    # A *file* that happens to carry the folder's name is not the folder (gitignore `name/`).
    assert not RULES.is_sensitive(f"{prefix}{folder}")


def test_env_example_is_the_one_exception():
    for ok in (".env.example", "config/.env.example"):
        assert not RULES.is_sensitive(ok)
    assert RULES.is_sensitive(".env.example.local")


@pytest.mark.parametrize(
    "ordinary",
    [
        "README.md",
        "src/env.py",
        "environment.yml",
        "keys.py",
        "docs/ssh.md",
        "my.env",
        "key.txt",
        "pem/readme.md",
        "credentials.json.md",
        "secrets.jsonl",
        "src/service-account.py",
        "auth.json5",
        "tfstate.md",
        "app/keystore.txt",
    ],
)
def test_ordinary_files_are_not_sensitive(ordinary):
    assert not RULES.is_sensitive(ordinary)
    assert not RULES.is_hidden(ordinary)


@pytest.mark.parametrize("spelled", [".ENV", "Server.PEM", "ID_RSA", ".SSH/config", "Credentials.JSON"])
def test_builtin_sensitive_names_ignore_case(spelled):
    assert RULES.is_sensitive(spelled)


def test_a_sensitive_folder_name_hides_its_content():
    """`*.key` matches a folder too (gitignore semantics), and so all under it."""
    assert RULES.is_sensitive("backup.key/readme.txt")
    assert RULES.is_sensitive("ops/.env/values")


@pytest.mark.parametrize("folder", NOISE_DIRS)
@pytest.mark.parametrize("prefix", DEPTHS)
def test_noise_folders(folder, prefix):
    assert RULES.is_noise(f"{prefix}{folder}", is_dir=True)
    assert RULES.is_noise(f"{prefix}{folder}/some/file.js")
    assert RULES.is_hidden(f"{prefix}{folder}/some/file.js")
    assert not RULES.is_sensitive(f"{prefix}{folder}/some/file.js")
    # A file named like a noise folder is an ordinary file.
    assert not RULES.is_noise(f"{prefix}{folder}")


def test_noise_is_exact_about_names():
    for ordinary in ("src/builder/x.py", "distance/a", "targets/a", "mybuild/a", "Build.md"):
        assert not RULES.is_noise(ordinary)


# -- .labignore --------------------------------------------------------------------------------


def rules_with(tmp_path, text: str) -> PathRules:
    (tmp_path / ".labignore").write_text(text)
    return PathRules.for_root(tmp_path)


def test_labignore_adds_sensitive_patterns(tmp_path):
    rules = rules_with(tmp_path, "# customer data\ncustomers/\n*.sqlite\n/top-only.txt\ninternal/**/notes.md\n")
    assert rules.is_sensitive("customers/list.csv")
    assert rules.is_sensitive("app/customers/list.csv")  # no leading slash: any depth
    assert rules.is_sensitive("customers", is_dir=True)
    assert rules.is_sensitive("db/local.sqlite")
    assert rules.is_sensitive("top-only.txt")
    assert not rules.is_sensitive("sub/top-only.txt")  # anchored to the root
    assert rules.is_sensitive("internal/a/b/notes.md")
    assert not rules.is_sensitive("customers.md")
    assert not rules.is_sensitive("# customer data")  # comments are not patterns
    # The built-in rules still apply alongside.
    assert rules.is_sensitive(".env")


def test_labignore_negation_follows_gitignore(tmp_path):
    rules = rules_with(tmp_path, "*.log\n!keep.log\nvault/\n!vault/public.txt\n")
    assert rules.is_sensitive("debug.log")
    assert not rules.is_sensitive("keep.log")
    # As in git: a file cannot be re-included when its folder is excluded.
    assert rules.is_sensitive("vault/public.txt")


def test_labignore_cannot_unhide_builtin_secrets(tmp_path):
    rules = rules_with(tmp_path, "!.env\n!*.pem\n")
    assert rules.is_sensitive(".env") and rules.is_sensitive("certs/a.pem")


def test_labignore_only_from_the_root_and_never_through_a_symlink(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".labignore").write_text("*.txt\n")
    assert not PathRules.for_root(tmp_path).is_sensitive("sub/a.txt")
    outside = tmp_path / "outside.labignore"
    outside.write_text("*.md\n")
    root = tmp_path / "root"
    root.mkdir()
    (root / ".labignore").symlink_to(outside)
    assert not PathRules.for_root(root).is_sensitive("README.md")


def test_missing_labignore_and_crlf_lines(tmp_path):
    assert PathRules.for_root(tmp_path / "does-not-exist").labignore_lines == ()
    rules = rules_with(tmp_path, "private/\r\n*.bak\r\n")
    assert rules.is_sensitive("private/x") and rules.is_sensitive("a.bak")


def test_labignore_raises_no_deprecation_warning(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rules_with(tmp_path, "*.tmp\n").is_sensitive("a.tmp")


# -- the names the first version missed (issue 14), and the normalisations ----------------------

MISSED_ON_MAIN = [
    ".envrc",
    ".env-prod",
    ".env_local",
    ".env ",
    "credentials",
    ".config/gcloud/credentials.db",
    ".config/gcloud/application_default_credentials.json",
    ".azure/msal_token_cache.json",
    ".boto",
    ".s3cfg",
    "kubeconfig",
    ".pgpass",
    ".pypirc",
    "putty.ppk",
    "server.key.bak",
    ".env~",
    ".labignore",
]


@pytest.mark.parametrize("name", MISSED_ON_MAIN)
@pytest.mark.parametrize("prefix", DEPTHS)
def test_names_main_missed_are_sensitive(name, prefix):
    assert RULES.is_sensitive(prefix + name), prefix + name


@pytest.mark.parametrize(
    "name",
    [
        ".ENV",
        ".Env.Production",
        "ID_RSA",
        "Server.KEY",
        ".env.",
        ".env. ",
        ".env  ",
        "secrets.json.",
        ".pgpass.orig",
        "id_ed25519.old",
        "prod.tfvars.backup",
        "kubeconfig.save",
        "credentials.swp",
        ".npmrc~",
        "a.pem.bak.tmp",
        ".config/GCLOUD/x",
        ".SSH/config",
    ],
)
def test_case_trailing_dots_spaces_and_backups_do_not_hide_a_secret(name):
    assert RULES.is_sensitive(name), name


@pytest.mark.parametrize(
    "name",
    [
        ".env.example",
        ".env.sample",
        ".env.template",
        ".env.dist",
        "README.md",
        "src/env.py",
        "environment.yml",
        "keys.py",
        "credentials_test.py",
        "docs/secrets-management.md",
        "key.txt",
        ".config/other/x",
        "backup.old",
    ],
)
def test_templates_and_lookalikes_stay_readable(name):
    assert not RULES.is_sensitive(name), name


def test_every_sensitive_rule_says_why_and_where_from():
    from labkit.boundary.rules import SENSITIVE_RULES, SOURCES

    assert len({(r.kind, r.pattern) for r in SENSITIVE_RULES}) == len(SENSITIVE_RULES)
    for rule in SENSITIVE_RULES:
        assert rule.kind in ("name", "suffix", "prefix", "glob", "folder", "path", "tail"), rule
        assert len(rule.reason) >= 8 and rule.sources and set(rule.sources) <= set(SOURCES), rule
        assert rule.pattern == rule.pattern.lower(), rule  # names are compared lower-cased
    # The maintained catalogues, not only labkit's own reading of vendors' documentation.
    cited = {s for r in SENSITIVE_RULES for s in r.sources}
    assert {"gitrob", "shhgit", "earlybird", "gitleaks"} <= cited


# -- issue 22: credential files from the maintained catalogues, and their backup forms ----------

#: Credential files as their tools write them. On main none of these was a sensitive path.
CREDENTIAL_FILES = [
    "serviceAccountKey.json",
    "my-app-firebase-adminsdk-fbsvc-1a2b3c4d5e.json",
    "my-project-0123456789ab.json",
    "client_secret_1234-abcd.apps.googleusercontent.com.json",
    "etc/ssh/ssh_host_ed25519_key",
    "etc/ssh/ssh_host_rsa_key",
    "AuthKey_ABCDE12345.p8",
    "keys/private.asc",
    "vpn/client.ovpn",
    "#.env#",
    ".#.env",
    ".id_rsa.swp",
    "server.key.~1~",
    "credentials.json___jb_tmp___",
    "deploy_rsa",
    "github_ed25519",
    "config/secrets.yml",
    ".streamlit/secrets.toml",
    "wp-config.php",
    ".bash_history",
    ".psql_history",
    ".mylogin.cnf",
    "etc/shadow",
    "jenkins/credentials.xml",
    "sftp-config.json",
    ".vscode/sftp.json",
    "home/.m2/settings.xml",
    ".gitcookies",
    "rclone.conf",
    "android/key.properties",
    "bundle.pkcs12",
    "login.keychain-db",
    "vault.kdb",
    "home/.config/hub",
    "home/.oci/oci_api_key",
]


@pytest.mark.parametrize("name", CREDENTIAL_FILES)
@pytest.mark.parametrize("prefix", ["", "deep/er/"])
def test_credential_files_of_the_catalogues_are_sensitive(name, prefix):
    assert RULES.is_sensitive(prefix + name), prefix + name


def test_the_catalogue_examples_were_not_sensitive_on_main():
    """Positive control for the list above: main's rules (its entries, its backup endings) let each one through."""
    from fnmatch import fnmatchcase

    names_ = {".env", ".envrc", "credentials", "credentials.json", "secrets.json", "auth.json", ".npmrc", ".netrc"}
    suffixes = (".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".ppk", ".kdbx", ".tfstate", ".tfvars")
    prefixes = (".env.", ".env-", ".env_", "id_rsa", "id_ed25519", "id_ecdsa", "id_dsa")
    folders = {".ssh", ".aws", ".azure", ".gnupg", ".docker", ".kube", ".password-store"}
    endings = ("~", ".bak", ".backup", ".old", ".orig", ".save", ".swp", ".tmp")

    def main_hid(rel: str) -> bool:
        parts = rel.lower().split("/")
        for i, part in enumerate(parts):
            forms = [part] + [part[: -len(e)] for e in endings if part.endswith(e)]
            if any(f in names_ or f.endswith(suffixes) or f.startswith(prefixes) for f in forms):
                return True
            if fnmatchcase(part, "service-account*.json") or (i < len(parts) - 1 and part in folders):
                return True
        return False

    assert [n for n in CREDENTIAL_FILES if main_hid(n)] == []


def test_a_credential_file_hands_its_key_to_a_naive_search_but_not_to_labkit(make_repo):
    """End to end: plain ripgrep finds the planted key in every file (positive control); labkit never does."""
    from labkit.boundary.errors import LabkitError
    from labkit.files.read import read_file
    from labkit.search import search_workspace
    from labkit.search.ripgrep_engine import find_rg

    repo = make_repo()
    files = {name: f"KEYMATERIAL-{i}\n" for i, name in enumerate(CREDENTIAL_FILES)}
    repo.write_many({**files, "app.py": "print('KEYMATERIAL is read from the vault')\n"})
    rg = find_rg()
    if rg is not None:
        naive = subprocess.run([rg, "--no-config", "-uuu", "-l", "KEYMATERIAL-"], cwd=repo.path, capture_output=True)
        assert len(naive.stdout.splitlines()) == len(CREDENTIAL_FILES), "positive control: rg reads every key"
    for engine in ("python", "ripgrep") if rg is not None else ("python",):
        result = search_workspace(repo.path, "KEYMATERIAL", engine=engine)
        assert [m["path"] for m in result["matches"]] == ["app.py"], engine
        assert result["stats"]["hiddenSensitive"] == len(CREDENTIAL_FILES)  # each hidden on its own
    for name in CREDENTIAL_FILES:
        with pytest.raises(LabkitError) as err:
            read_file(repo.path, name)
        assert err.value.code == "sensitive_path", name


@pytest.mark.parametrize(
    "name",
    [
        "settings.py",
        "config/database.yml",
        "app.log",
        "schema.sql",
        "data.sqlite",
        ".bashrc",
        ".profile",
        "src/ssh_host.py",
        "ssh_host_keys.py",
        "rsa.py",
        "crypto/test_rsa.py",
        "history.md",
        "docs/history.txt",
        "secrets_test.py",
        "hub.py",
        "src/hub",
        "shadow.py",
        "etc/passwd",
        "AuthKey.md",
        "package.json",
        "tsconfig.json",
        "project-abc.json",
        "build-0123456789ab.js",
        ".vscode/settings.json",
        "settings.xml",
        "docs/key-properties.md",
        "#readme#",
        ".#notes.txt",
        ".main.py.swp",
        "README.md~",
    ],
)
def test_what_the_catalogues_flag_but_is_ordinary_source_stays_readable(name):
    assert not RULES.is_sensitive(name), name


def test_the_standard_library_gains_no_sensitive_file():
    """False positives on a real tree: every sensitive path of the standard library is a key or certificate fixture."""
    from labkit.course.search_corpora import stdlib_dir

    root = stdlib_dir()
    seen, hidden = 0, []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in ("site-packages", "__pycache__")]
        for name in files:
            rel = os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")
            seen += 1
            if RULES.is_sensitive(rel):
                hidden.append(rel)
    assert seen > 1000
    assert all(p.endswith((".pem", ".key")) for p in hidden), [p for p in hidden if not p.endswith((".pem", ".key"))]


def test_a_sensitive_file_named_by_the_new_rules_is_hidden_end_to_end(make_repo):
    from labkit.boundary.errors import LabkitError
    from labkit.files.read import read_file
    from labkit.git.status import git_status
    from labkit.search import search_workspace

    repo = make_repo()
    repo.write_many({"app.py": "token = 1\n", ".envrc": "export token=abc\n", ".pgpass": "db:token\n"})
    repo.commit("base")
    repo.write_many({".envrc": "export token=def\n", "server.key.bak": "token\n"})
    assert [m["path"] for m in search_workspace(repo.path, "token")["matches"]] == ["app.py"]
    status = git_status(repo.path)
    assert status["unstaged"] == [] and status["untracked"] == [] and status["hidden"]["changes"] == 2
    with pytest.raises(LabkitError) as err:
        read_file(repo.path, ".envrc")
    assert err.value.code == "sensitive_path"
