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
NOISE_DIRS = [".git", "node_modules", "__pycache__", ".venv", "venv", "dist", "build", ".pytest_cache", ".mypy_cache",
              ".ipynb_checkpoints", "target", "coverage", ".cache"]
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


@pytest.mark.parametrize("ordinary", [
    "README.md", "src/env.py", "environment.yml", "keys.py", "docs/ssh.md", "my.env", "key.txt", "pem/readme.md",
    "credentials.json.md", "secrets.jsonl", "src/service-account.py", "auth.json5",
    "tfstate.md", "app/keystore.txt",
])
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
