"""read_file: the MCP server's bounded line-range read of one workspace file."""

from __future__ import annotations

import hashlib

import pytest

from labkit.boundary.errors import LabkitError
from labkit.files.read import MAX_LINES, line_window, read_file


def _code(fn, *args, **kw) -> str:
    with pytest.raises(LabkitError) as err:
        fn(*args, **kw)
    return err.value.code


def test_pages_a_long_file_in_400_line_windows(repo):
    text = "".join(f"line {i} ✓\n" for i in range(1, 1001))
    repo.write("big.txt", text)
    pages, start = [], 1
    while True:
        page = read_file(repo.path, "big.txt", start_line=start)
        pages.append(page)
        if not page["truncated"]:
            break
        start = page["nextStartLine"]
    assert [(p["startLine"], p["endLine"]) for p in pages] == [(1, 400), (401, 800), (801, 1000)]
    assert [p["nextStartLine"] for p in pages] == [401, 801, None]
    assert "".join(p["content"] for p in pages) == text
    digest = hashlib.sha256(text.encode()).hexdigest()
    assert {p["contentSha256"] for p in pages} == {digest}
    assert all(p["totalLines"] == 1000 for p in pages)
    # An explicit range wider than the cap is cut to MAX_LINES and says so.
    wide = read_file(repo.path, "big.txt", start_line=10, end_line=900)
    assert wide["endLine"] == 10 + MAX_LINES - 1 and wide["truncated"] and wide["nextStartLine"] == 410


def test_line_endings_and_edges():
    assert line_window("a", b"x\r\ny")["content"] == "x\r\ny"
    assert line_window("a", b"x\r\ny")["totalLines"] == 2
    one = line_window("a", b"a\nb\nc\n", start_line=2, end_line=2)
    assert one["content"] == "b\n" and one["truncated"] is True and one["nextStartLine"] == 3
    empty = line_window("a", b"")
    assert (empty["totalLines"], empty["content"], empty["truncated"]) == (0, "", False)
    assert _code(line_window, "a", b"", start_line=2) == "line_out_of_range"
    assert _code(line_window, "a", b"x\n", start_line=2) == "line_out_of_range"
    # Invalid UTF-8 is shown with replacement characters; the hash is of the real bytes.
    odd = line_window("a", b"caf\xe9\n")
    assert odd["content"] == "caf\ufffd\n" and odd["contentSha256"] == hashlib.sha256(b"caf\xe9\n").hexdigest()


def test_refusals_have_stable_codes(repo, tmp_path):
    repo.write_many(
        {
            "ok.txt": "fine\n",
            ".env.production": "SECRET=1\n",
            "keys/id_rsa": "KEY\n",
            "bin.dat": b"\x00\x01\x02",
            ".labignore": "private/\n",
            "private/notes.txt": "hidden\n",
        }
    )
    repo.write("huge.txt", "x" * (2 * 1024 * 1024 + 1))
    (tmp_path / "outside.txt").write_text("outside\n")
    repo.symlink("out", str(tmp_path / "outside.txt"))
    repo.symlink("inner", "ok.txt")
    root = repo.path
    assert _code(read_file, root, ".env.production") == "sensitive_path"
    assert _code(read_file, root, "keys/id_rsa") == "sensitive_path"
    assert _code(read_file, root, "private/notes.txt") == "sensitive_path"  # .labignore
    assert _code(read_file, root, "../outside.txt") == "path_outside_workspace"
    assert _code(read_file, root, "out") == "not_regular_file"  # a symlink is never followed
    assert _code(read_file, root, "inner") == "not_regular_file"
    assert _code(read_file, root, str(root / "ok.txt")) == "invalid_path"
    assert _code(read_file, root, "ok.txt\0") == "invalid_path"
    assert _code(read_file, root, "") == "invalid_argument"  # shorter than the declared minimum, as over MCP
    assert _code(read_file, root, ".git/HEAD") == "invalid_path"
    assert _code(read_file, root, "missing.txt") == "file_not_found"
    assert _code(read_file, root, "keys") == "not_regular_file"
    assert _code(read_file, root, "bin.dat") == "binary_file"
    assert _code(read_file, root, "huge.txt") == "file_too_large"
    assert _code(read_file, root, "ok.txt", start_line=0) == "invalid_argument"
    assert _code(read_file, root, "ok.txt", start_line=3, end_line=2) == "invalid_argument"
    assert _code(read_file, root, "ok.txt", start_line=True) == "invalid_argument"
    assert _code(read_file, root / "ok.txt", "ok.txt") == "invalid_argument"
    for fn_args in [(".env.production",), ("../outside.txt",), ("missing.txt",)]:
        with pytest.raises(LabkitError) as err:
            read_file(root, *fn_args)
        assert str(tmp_path) not in err.value.message
    assert read_file(root, "./ok.txt")["path"] == "ok.txt"
