"""Generate data/code-search-eval.jsonl: a frozen code-search eval over installed Click.

    python data/generate_code_search_eval.py [OUT]

The corpus is the installed ``click`` package laid out as a git repository
(``labkit.codesearch.eval.layout_package_repo``: fixed identity and dates, so
the commit id pins the exact text). Every gold line is computed here by an
independent scan, ``git grep -n`` on that commit, never by labkit's search.
Each case names the grep that defines its gold and how many hits that grep
must find, so a changed source fails loudly here instead of producing a quietly
wrong eval.

Categories follow the seed eval: definitions, duplicates, irrelevant-result
traps (a name mentioned in many places before it is defined), unscoped queries,
error text, literal punctuation, regex, filters, context boundaries and
no-match cases.
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from labkit.codesearch.eval import layout_package_repo
from labkit.gitrunner import git_bytes, run_git

PACKAGE = "click"
SRC = "src/click/"

# (id, category, query, options, gold grep)
# gold grep: (git grep -E pattern, path, pick, expected hit count); pick is
# "only", "first", "last" or "range" (min..max of all hits).
CASES = [
    ("def-context", "definition", "Context", {}, (r"^class Context\b", "core.py", "only", 1)),
    ("def-badparameter", "definition", "BadParameter", {}, (r"^class BadParameter\b", "exceptions.py", "only", 1)),
    ("def-echo", "definition", "echo", {}, (r"^def echo\(", "utils.py", "only", 1)),
    ("def-paramtype", "definition", "ParamType", {}, (r"^class ParamType\b", "types.py", "only", 1)),
    ("def-secho", "definition", "secho", {}, (r"^def secho\(", "termui.py", "only", 1)),
    ("def-pass-context", "definition", "pass_context", {}, (r"^def pass_context\(", "decorators.py", "only", 1)),
    ("def-method-format-help", "definition", "format_help", {},
     (r"^\s+def format_help\(", "core.py", "only", 1)),
    ("dup-get-current-context", "duplicate_hits", "get_current_context", {},
     (r"^def get_current_context\(", "globals.py", "range", 3)),
    ("dup-invoke-scoped", "duplicate_hits", "invoke", {"path": r"core\.py$"},
     (r"^\s+def invoke\(", "core.py", "range", 5)),
    ("trap-abort", "irrelevant_results", "Abort", {}, (r"^class Abort\b", "exceptions.py", "only", 1)),
    ("trap-usageerror-lower", "irrelevant_results", "usageerror", {},
     (r"^class UsageError\b", "exceptions.py", "only", 1)),
    ("trap-option", "irrelevant_results", "Option", {}, (r"^class Option\b", "core.py", "only", 1)),
    # A usage, not a definition: ranking cannot know which call site is meant.
    ("trap-sys-exit-rv", "irrelevant_results", "sys.exit(", {"literal": True},
     (r"sys\.exit\(rv\)", "core.py", "only", 1)),
    ("unscoped-resolve-command", "unscoped_path", "resolve_command", {},
     (r"^\s+def resolve_command\(", "core.py", "only", 1)),
    ("unscoped-clirunner", "unscoped_path", "CliRunner", {}, (r"^class CliRunner\b", "testing.py", "only", 1)),
    ("scoped-clirunner", "lang_path_filter", "CliRunner", {"lang": "python", "path": r"testing\.py$"},
     (r"^class CliRunner\b", "testing.py", "only", 1)),
    ("repo-scoped-context", "repo_filter", "Context", {"repo": "click"},
     (r"^class Context\b", "core.py", "only", 1)),
    ("error-text", "error_text", "The given command does not have a callback that can be invoked.",
     {"literal": True}, (r"The given command does not have a callback", "core.py", "only", 1)),
    ("literal-options-metavar", "literal_punctuation", "[OPTIONS]", {"literal": True},
     (r"\[OPTIONS\]", "core.py", "first", None)),
    ("regex-make-context", "regex", r"def\s+make_context\(", {}, (r"def\s+make_context\(", "core.py", "only", 1)),
    ("boundary-start", "context_boundary", "from __future__ import annotations",
     {"literal": True, "path": r"globals\.py$", "context": {"before": 20, "after": 20,
                                                            "expect": {"startLine": 1, "truncated": True}}},
     (r"^from __future__ import annotations$", "globals.py", "only", 1)),
    ("boundary-end", "context_boundary", "return ctx.color",
     {"literal": True, "path": r"globals\.py$", "context": {"before": 20, "after": 20,
                                                            "expect": {"truncated": True}}},
     (r"return ctx\.color", "globals.py", "only", 1)),
    ("none-frobnicate", "no_match", "frobnicate_widget", {}, None),
    ("none-go-filter", "no_match", "Context", {"lang": "go"}, None),
    ("none-literal-regex-text", "no_match", "Context(.*)", {"literal": True}, None),
]


def grep(repo_dir: Path, commit: str, pattern: str, path: str, *, fixed: bool = False) -> list[int]:
    args = ["grep", "-n", "-I", "--no-color", "-F" if fixed else "-E", "-e", pattern, commit, "--", SRC + path]
    out = run_git(repo_dir, args, ok_returncodes=(0, 1)).stdout.decode("utf-8")
    return [int(line.split(":", 3)[2]) for line in out.splitlines() if line]


def grep_anywhere(repo_dir: Path, commit: str, text: str, *, fixed: bool) -> int:
    args = ["grep", "-n", "-I", "--no-color", "-F" if fixed else "-E", "-e", text, commit]
    return len(run_git(repo_dir, args, ok_returncodes=(0, 1)).stdout.decode("utf-8").splitlines())


def main(out_path: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="labkit-eval-gen-") as tmp:
        laid = layout_package_repo(PACKAGE, Path(tmp) / PACKAGE)
        repo_dir, commit = Path(laid["path"]), laid["commit"]
        lines = [{"kind": "corpus", "package": PACKAGE, "version": laid["version"], "repo": PACKAGE,
                  "commit": commit, "files": len(git_bytes(repo_dir, ["ls-files", "-z"]).split(b"\0")) - 1,
                  "goldMethod": "git grep -n on the corpus commit (data/generate_code_search_eval.py)"}]
        for case_id, category, query, opts, gold in CASES:
            case = {"kind": "case", "id": case_id, "category": category, "query": query,
                    "literal": bool(opts.get("literal")), "repo": opts.get("repo"), "lang": opts.get("lang"),
                    "path": opts.get("path")}
            if "context" in opts:
                case["context"] = opts["context"]
            if gold is None:
                # No-match: the independent scan must agree there is nothing to find.
                if opts.get("lang") == "go":
                    hits = len(git_bytes(repo_dir, ["ls-files", "-z", "--", "*.go"]).split(b"\0")) - 1
                else:
                    hits = grep_anywhere(repo_dir, commit, query, fixed=bool(opts.get("literal")))
                if hits:
                    raise SystemExit(f"{case_id}: expected no match, git grep found {hits}")
                case["no_match"] = True
                case["goldSource"] = "git grep finds nothing"
            else:
                pattern, path, pick, expected = gold
                hits = grep(repo_dir, commit, pattern, path)
                if expected is not None and len(hits) != expected:
                    raise SystemExit(f"{case_id}: git grep -E {pattern!r} found {len(hits)} lines, expected {expected}")
                if not hits:
                    raise SystemExit(f"{case_id}: git grep -E {pattern!r} found nothing")
                lo, hi = {"only": (hits[0], hits[0]), "first": (hits[0], hits[0]), "last": (hits[-1], hits[-1]),
                          "range": (min(hits), max(hits))}[pick]
                case["gold"] = {"repo": PACKAGE, "path": SRC + path, "line_min": lo, "line_max": hi}
                case["goldSource"] = f"git grep -n -E '{pattern}' -- {SRC + path} ({pick})"
            lines.append(case)
    out_path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in lines), "utf-8")
    print(f"wrote {len(lines) - 1} cases for {PACKAGE} {laid['version']} ({commit[:12]}) to {out_path.name}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("code-search-eval.jsonl"))
