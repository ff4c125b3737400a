"""Path safety: one function decides whether a user's path stays inside a root."""

from __future__ import annotations

import os
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labkit.boundary.errors import LabkitError
from labkit.boundary.paths import check_relative_syntax, resolve_inside


def code_of(root, user_path) -> str:
    with pytest.raises(LabkitError) as err:
        resolve_inside(root, user_path)
    assert str(root) not in err.value.message  # messages never carry the machine's path
    return err.value.code


@pytest.fixture
def world(tmp_path):
    """root/ with files, an inside symlink, and links that lead out."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    root = tmp_path / "root"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "mod.py").write_text("x = 1\n")
    (root / "inside-link").symlink_to(root / "src")
    (root / "src" / "out-link").symlink_to(outside)
    (root / "file-out").symlink_to(outside / "secret.txt")
    (root / "dangling-out").symlink_to(tmp_path / "nowhere")
    (root / "relative-out").symlink_to(Path("..") / "outside")
    return root


@pytest.mark.parametrize("bad", ["a\0b", "src/\0", "\0"])
def test_nul(world, bad):
    assert code_of(world, bad) == "invalid_path"


@pytest.mark.parametrize("bad", ["/etc/passwd", "/", "//server/share/x", str(Path("/tmp").resolve())])
def test_absolute(world, bad):
    assert code_of(world, bad) == "invalid_path"


@pytest.mark.parametrize("bad", ["C:/Windows", "c:foo", "Z:"])
def test_drive(world, bad):
    assert code_of(world, bad) == "invalid_path"


@pytest.mark.parametrize("bad", ["src\\pkg", "..\\outside", "\\\\server\\share"])
def test_backslash(world, bad):
    assert code_of(world, bad) == "invalid_path"


@pytest.mark.parametrize("bad", ["..", "../outside/secret.txt", "src/../..", "src/pkg/../../../x", "./../x"])
def test_dotdot_escape(world, bad):
    assert code_of(world, bad) == "path_outside_workspace"


@pytest.mark.parametrize(
    "ok, rel", [("src/../src/pkg", "src/pkg"), ("./src//pkg/", "src/pkg"), ("src/..", ""), ("", ""), (".", "")]
)
def test_dotdot_that_stays_inside_is_normalised(world, ok, rel):
    got = resolve_inside(world, ok)
    assert got.relative == rel
    root_real = Path(os.path.realpath(world))
    assert got.absolute == (root_real / rel if rel else root_real)


@pytest.mark.parametrize(
    "bad",
    [
        "src/out-link",  # the link itself
        "src/out-link/secret.txt",  # an existing file through a linked ancestor
        "src/out-link/not-there-yet.txt",  # a file that does not exist yet, under a linked ancestor
        "src/out-link/deeper/still/missing",
        "file-out",  # a link to a file outside
        "dangling-out",  # a dangling link that would point outside
        "dangling-out/x",
        "relative-out/secret.txt",  # a relative link target
    ],
)
def test_symlink_escape_through_any_ancestor(world, bad):
    assert code_of(world, bad) == "path_outside_workspace"


def test_symlink_inside_is_fine(world):
    got = resolve_inside(world, "inside-link/pkg/mod.py")
    assert got.relative == "inside-link/pkg/mod.py"
    assert got.absolute.read_text() == "x = 1\n"


def test_root_that_is_itself_a_symlink(tmp_path, world):
    alias = tmp_path / "alias"
    alias.symlink_to(world)
    assert resolve_inside(alias, "src/pkg/mod.py").relative == "src/pkg/mod.py"
    assert code_of(alias, "src/out-link/secret.txt") == "path_outside_workspace"


def test_non_string_is_invalid(world):
    for bad in (None, b"src", 3, Path("src")):
        with pytest.raises(LabkitError) as err:
            resolve_inside(world, bad)
        assert err.value.code == "invalid_path"


def test_check_relative_syntax_names_the_argument():
    with pytest.raises(LabkitError) as err:
        check_relative_syntax("/abs", what="--path")
    assert err.value.message.startswith("--path")


def test_strict_syntax_refuses_parent_steps_and_escapes():
    """The two strict switches (review allow entries, code-search context) refuse what the default reads."""
    assert check_relative_syntax("a/b/../c") == "a/c"
    assert check_relative_syntax("a\\x62") == "ab"
    for bad, kw, code in (
        ("a/b/../c", {"parent_steps": False}, "invalid_path"),
        ("..", {"parent_steps": False}, "invalid_path"),
        ("a\\x62", {"escapes": False}, "invalid_path"),
        ("b/\\x2e\\x2e/c", {"parent_steps": False}, "invalid_path"),  # '..' once decoded
        ("C:\\Users\\me", {"escapes": False}, "invalid_path"),
    ):
        with pytest.raises(LabkitError) as err:
            check_relative_syntax(bad, what="entry", **kw)
        assert err.value.code == code and err.value.message.startswith("entry")
    with pytest.raises(LabkitError) as err:
        check_relative_syntax("C:\\Users\\me", escapes=False)
    assert "absolute" in err.value.message and "me" not in err.value.message
    assert check_relative_syntax("./src//a.py", escapes=False, parent_steps=False) == "src/a.py"


# -- property: whatever is accepted stays inside ------------------------------------------------

SEGMENTS = st.sampled_from(
    [
        "..",
        ".",
        "",
        "src",
        "pkg",
        "mod.py",
        "out-link",
        "inside-link",
        "file-out",
        "dangling-out",
        "relative-out",
        "new",
        "a b",
        "é",
        "C:",
        "\\",
        "x\0",
    ]
)
PATHS = st.one_of(
    st.lists(SEGMENTS, max_size=7).map("/".join),
    st.text(alphabet=string.printable + "é/\\.\0", max_size=30),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(user_path=PATHS)
def test_any_accepted_path_stays_inside_the_root(world, user_path):
    root_real = Path(os.path.realpath(world))
    try:
        got = resolve_inside(world, user_path)
    except LabkitError as exc:
        assert exc.code in ("invalid_path", "path_outside_workspace")
        return
    # Following every link that exists, the path still lands under the root.
    landed = Path(os.path.realpath(got.absolute))
    assert landed == root_real or root_real in landed.parents
    assert not got.relative.startswith("/") and ".." not in got.relative.split("/")
    # A backslash in a name only arrives escaped (``\\\\``, the name encoder's own form), never bare.
    assert ("\\" not in got.relative or "\\\\" in user_path) and "\0" not in got.relative
    assert got.absolute == (root_real / got.relative if got.relative else root_real)
