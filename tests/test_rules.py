"""The one sensitive/noise rule set, pattern by pattern from CONTRACT.md."""

from __future__ import annotations

import warnings

import pytest

from labkit.rules import PathRules

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


def test_every_sensitive_rule_says_why():
    from labkit.rules import SENSITIVE_RULES

    assert len({(r.kind, r.pattern) for r in SENSITIVE_RULES}) == len(SENSITIVE_RULES)
    for rule in SENSITIVE_RULES:
        assert rule.kind in ("name", "suffix", "prefix", "glob", "folder", "path") and len(rule.reason) >= 8, rule


def test_a_sensitive_file_named_by_the_new_rules_is_hidden_end_to_end(make_repo):
    from labkit.errors import LabkitError
    from labkit.search import search_workspace
    from labkit.status import git_status
    from labkit.workspace_read import read_file

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
