"""Generate data/code-search-eval.jsonl: a frozen code-search eval over three pinned releases.

    python data/generate_code_search_eval.py [OUT]

Corpora: exact releases of click, Jinja2 and attrs (an application framework,
a template engine and a data-class library), fetched with ``pip download
--no-deps PKG==VERSION`` into the corpus cache and laid out as git repositories
(``labkit.course.codesearch_corpus``: fixed identity and dates, so the commit id pins
the exact text). Every gold line is computed here by an independent scan,
``git grep -n`` on that commit, never by labkit's search. Each case names the
grep that defines its gold and how many lines that grep must find; literal
texts must occur exactly as often as stated in the whole corpus, and a common
identifier on at least 50 lines. A changed source fails loudly here instead of
producing a quietly wrong eval.

Splits: the 25 cases the definition-first ranking was developed on are *dev*;
every other case's split comes from ``hashed_split`` (a seeded hash of its id),
fixed before the ranking was looked at again.

Categories: definitions of a function, class, method and constant; a common
identifier (50+ lines) whose gold is where it is implemented; a parameter
name; an error message; regex metacharacters searched literally; a docstring
phrase; queries that must return nothing. The first 25 cases keep the
categories they were written with (duplicates, traps, filters, context
boundaries ...).
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from labkit.boundary.gitrunner import git_bytes, run_git
from labkit.course.codesearch_corpus import fetch_release, layout_release
from labkit.course.codesearch_eval import hashed_split

CORPORA = [("click", "8.5.1", "click"), ("jinja2", "3.1.6", "jinja2"), ("attrs", "26.1.0", "attrs")]


@dataclass(frozen=True)
class Gold:
    """``git grep -n -E pattern`` (or ``-F`` when ``fixed``) in ``src/<path>`` must find ``count`` lines."""

    pattern: str
    path: str
    pick: str = "only"  # "only", "first", "last" or "range" (min..max of all hits)
    count: int | None = 1
    fixed: bool = False
    corpus_count: int | None = None  # the fixed text's line count in the whole corpus
    min_word_lines: int | None = None  # the query as a whole word, on at least this many lines


def G(pattern, path, pick="only", count=1, **kw) -> Gold:
    return Gold(pattern, path, pick, count, **kw)


def L(text, path, count=1) -> Gold:
    """Gold for literal text: the text itself, found ``count`` times in the file and in the corpus."""
    return Gold(text, path, "first" if count > 1 else "only", count, fixed=True, corpus_count=count)


def common(name, pattern, path) -> Gold:
    return Gold(pattern, path, "only", 1, min_word_lines=50)


# The cases the ranking was developed on (all in dev, categories as first written).
DEVELOPED_ON = [
    ("def-context", "def_class", "click", "Context", {}, G(r"^class Context\b", "click/core.py")),
    ("def-badparameter", "def_class", "click", "BadParameter", {}, G(r"^class BadParameter\b", "click/exceptions.py")),
    ("def-echo", "def_function", "click", "echo", {}, G(r"^def echo\(", "click/utils.py")),
    ("def-paramtype", "def_class", "click", "ParamType", {}, G(r"^class ParamType\b", "click/types.py")),
    ("def-secho", "def_function", "click", "secho", {}, G(r"^def secho\(", "click/termui.py")),
    ("def-pass-context", "def_function", "click", "pass_context", {}, G(r"^def pass_context\(", "click/decorators.py")),
    ("def-method-format-help", "def_method", "click", "format_help", {}, G(r"^\s+def format_help\(", "click/core.py")),
    (
        "dup-get-current-context",
        "duplicate_hits",
        "click",
        "get_current_context",
        {},
        G(r"^def get_current_context\(", "click/globals.py", "range", 3),
    ),
    (
        "dup-invoke-scoped",
        "duplicate_hits",
        "click",
        "invoke",
        {"path": r"core\.py$"},
        G(r"^\s+def invoke\(", "click/core.py", "range", 5),
    ),
    ("trap-abort", "irrelevant_results", "click", "Abort", {}, G(r"^class Abort\b", "click/exceptions.py")),
    (
        "trap-usageerror-lower",
        "irrelevant_results",
        "click",
        "usageerror",
        {},
        G(r"^class UsageError\b", "click/exceptions.py"),
    ),
    ("trap-option", "irrelevant_results", "click", "Option", {}, G(r"^class Option\b", "click/core.py")),
    # A usage, not a definition: ranking cannot know which call site is meant.
    (
        "trap-sys-exit-rv",
        "irrelevant_results",
        "click",
        "sys.exit(",
        {"literal": True},
        G(r"sys\.exit\(rv\)", "click/core.py"),
    ),
    (
        "unscoped-resolve-command",
        "unscoped_path",
        "click",
        "resolve_command",
        {},
        G(r"^\s+def resolve_command\(", "click/core.py"),
    ),
    ("unscoped-clirunner", "unscoped_path", "click", "CliRunner", {}, G(r"^class CliRunner\b", "click/testing.py")),
    (
        "scoped-clirunner",
        "lang_path_filter",
        "click",
        "CliRunner",
        {"lang": "python", "path": r"testing\.py$"},
        G(r"^class CliRunner\b", "click/testing.py"),
    ),
    (
        "repo-scoped-context",
        "repo_filter",
        "click",
        "Context",
        {"repo": "click"},
        G(r"^class Context\b", "click/core.py"),
    ),
    (
        "error-text",
        "error_text",
        "click",
        "The given command does not have a callback that can be invoked.",
        {"literal": True},
        G(r"The given command does not have a callback", "click/core.py"),
    ),
    (
        "literal-options-metavar",
        "literal_punctuation",
        "click",
        "[OPTIONS]",
        {"literal": True},
        G(r"\[OPTIONS\]", "click/core.py", "first", None),
    ),
    ("regex-make-context", "regex", "click", r"def\s+make_context\(", {}, G(r"def\s+make_context\(", "click/core.py")),
    (
        "boundary-start",
        "context_boundary",
        "click",
        "from __future__ import annotations",
        {
            "literal": True,
            "path": r"globals\.py$",
            "context": {"before": 20, "after": 20, "expect": {"startLine": 1, "truncated": True}},
        },
        G(r"^from __future__ import annotations$", "click/globals.py"),
    ),
    (
        "boundary-end",
        "context_boundary",
        "click",
        "return ctx.color",
        {
            "literal": True,
            "path": r"globals\.py$",
            "context": {"before": 20, "after": 20, "expect": {"truncated": True}},
        },
        G(r"return ctx\.color", "click/globals.py"),
    ),
    ("none-frobnicate", "no_match", "click", "frobnicate_widget", {}, None),
    ("none-go-filter", "no_match", "click", "Context", {"lang": "go"}, None),
    ("none-literal-regex-text", "no_match", "click", "Context(.*)", {"literal": True}, None),
]

# Written for the larger eval, before the ranking was looked at again; split by hash.
NEW = [
    # -- definition of a function
    (
        "fn-click-format-filename",
        "def_function",
        "click",
        "format_filename",
        {},
        G(r"^def format_filename\(", "click/utils.py"),
    ),
    ("fn-click-get-app-dir", "def_function", "click", "get_app_dir", {}, G(r"^def get_app_dir\(", "click/utils.py")),
    ("fn-click-confirm", "def_function", "click", "confirm", {}, G(r"^def confirm\(", "click/termui.py")),
    (
        "fn-jinja2-select-autoescape",
        "def_function",
        "jinja2",
        "select_autoescape",
        {},
        G(r"^def select_autoescape\(", "jinja2/utils.py"),
    ),
    (
        "fn-jinja2-do-truncate",
        "def_function",
        "jinja2",
        "do_truncate",
        {},
        G(r"^def do_truncate\(", "jinja2/filters.py"),
    ),
    (
        "fn-jinja2-make-logging-undefined",
        "def_function",
        "jinja2",
        "make_logging_undefined",
        {},
        G(r"^def make_logging_undefined\(", "jinja2/runtime.py"),
    ),
    (
        "fn-jinja2-pass-context",
        "def_function",
        "jinja2",
        "pass_context",
        {},
        G(r"^def pass_context\(", "jinja2/utils.py"),
    ),
    ("fn-attrs-make-class", "def_function", "attrs", "make_class", {}, G(r"^def make_class\(", "attr/_make.py")),
    (
        "fn-attrs-resolve-types",
        "def_function",
        "attrs",
        "resolve_types",
        {},
        G(r"^def resolve_types\(", "attr/_funcs.py"),
    ),
    ("fn-attrs-has", "def_function", "attrs", "has", {}, G(r"^def has\(", "attr/_funcs.py")),
    # -- definition of a class
    (
        "cls-click-progressbar",
        "def_class",
        "click",
        "ProgressBar",
        {},
        G(r"^class ProgressBar\b", "click/_termui_impl.py"),
    ),
    (
        "cls-click-helpformatter",
        "def_class",
        "click",
        "HelpFormatter",
        {},
        G(r"^class HelpFormatter\b", "click/formatting.py"),
    ),
    ("cls-click-choice", "def_class", "click", "Choice", {}, G(r"^class Choice\b", "click/types.py")),
    (
        "cls-jinja2-filesystemloader",
        "def_class",
        "jinja2",
        "FileSystemLoader",
        {},
        G(r"^class FileSystemLoader\b", "jinja2/loaders.py"),
    ),
    (
        "cls-jinja2-sandboxedenvironment",
        "def_class",
        "jinja2",
        "SandboxedEnvironment",
        {},
        G(r"^class SandboxedEnvironment\b", "jinja2/sandbox.py"),
    ),
    (
        "cls-jinja2-strictundefined",
        "def_class",
        "jinja2",
        "StrictUndefined",
        {},
        G(r"^class StrictUndefined\b", "jinja2/runtime.py"),
    ),
    ("cls-jinja2-lexer", "def_class", "jinja2", "Lexer", {}, G(r"^class Lexer\b", "jinja2/lexer.py")),
    ("cls-attrs-factory", "def_class", "attrs", "Factory", {}, G(r"^class Factory\b", "attr/_make.py")),
    (
        "cls-attrs-frozeninstanceerror",
        "def_class",
        "attrs",
        "FrozenInstanceError",
        {},
        G(r"^class FrozenInstanceError\b", "attr/exceptions.py"),
    ),
    (
        "cls-attrs-versioninfo",
        "def_class",
        "attrs",
        "VersionInfo",
        {},
        G(r"^class VersionInfo\b", "attr/_version_info.py"),
    ),
    # -- definition of a method
    ("meth-click-get-params", "def_method", "click", "get_params", {}, G(r"^\s+def get_params\(", "click/core.py")),
    (
        "meth-click-type-cast-value",
        "def_method",
        "click",
        "type_cast_value",
        {},
        G(r"^\s+def type_cast_value\(", "click/core.py"),
    ),
    ("meth-click-isolation", "def_method", "click", "isolation", {}, G(r"^\s+def isolation\(", "click/testing.py")),
    (
        "meth-jinja2-get-template",
        "def_method",
        "jinja2",
        "get_template",
        {},
        G(r"^\s+def get_template\(", "jinja2/environment.py"),
    ),
    ("meth-jinja2-expect", "def_method", "jinja2", "expect", {}, G(r"^\s+def expect\(", "jinja2/lexer.py")),
    (
        "meth-jinja2-from-string",
        "def_method",
        "jinja2",
        "from_string",
        {},
        G(r"^\s+def from_string\(", "jinja2/environment.py"),
    ),
    (
        "meth-jinja2-parse-expression",
        "def_method",
        "jinja2",
        "parse_expression",
        {},
        G(r"^\s+def parse_expression\(", "jinja2/parser.py"),
    ),
    ("meth-attrs-validator", "def_method", "attrs", "validator", {}, G(r"^\s+def validator\(", "attr/_make.py")),
    # -- definition of a constant
    (
        "const-click-forced-width",
        "def_constant",
        "click",
        "FORCED_WIDTH",
        {},
        G(r"^FORCED_WIDTH\b", "click/formatting.py"),
    ),
    ("const-click-win", "def_constant", "click", "WIN", {}, G(r"^WIN = ", "click/_compat.py")),
    ("const-click-bool", "def_constant", "click", "BOOL", {}, G(r"^BOOL: ", "click/types.py")),
    (
        "const-jinja2-block-start-string",
        "def_constant",
        "jinja2",
        "BLOCK_START_STRING",
        {},
        G(r"^BLOCK_START_STRING = ", "jinja2/defaults.py"),
    ),
    ("const-jinja2-filters", "def_constant", "jinja2", "FILTERS", {}, G(r"^FILTERS = ", "jinja2/filters.py")),
    (
        "const-jinja2-var-load-parameter",
        "def_constant",
        "jinja2",
        "VAR_LOAD_PARAMETER",
        {},
        G(r"^VAR_LOAD_PARAMETER = ", "jinja2/idtracking.py"),
    ),
    (
        "const-jinja2-gettext-functions",
        "def_constant",
        "jinja2",
        "GETTEXT_FUNCTIONS",
        {},
        G(r"^GETTEXT_FUNCTIONS\b", "jinja2/ext.py"),
    ),
    ("const-attrs-nothing", "def_constant", "attrs", "NOTHING", {}, G(r"^NOTHING = ", "attr/_make.py")),
    ("const-attrs-no-op", "def_constant", "attrs", "NO_OP", {}, G(r"^NO_OP = ", "attr/setters.py")),
    ("const-attrs-py310", "def_constant", "attrs", "PY_3_10_PLUS", {}, G(r"^PY_3_10_PLUS = ", "attr/_compat.py")),
    # -- a common identifier (50+ lines): the gold is where it is implemented
    (
        "common-click-command",
        "common_identifier",
        "click",
        "Command",
        {},
        common("Command", r"^class Command\b", "click/core.py"),
    ),
    (
        "common-click-parameter",
        "common_identifier",
        "click",
        "Parameter",
        {},
        common("Parameter", r"^class Parameter\b", "click/core.py"),
    ),
    (
        "common-jinja2-environment",
        "common_identifier",
        "jinja2",
        "Environment",
        {},
        common("Environment", r"^class Environment\b", "jinja2/environment.py"),
    ),
    (
        "common-jinja2-undefined",
        "common_identifier",
        "jinja2",
        "Undefined",
        {},
        common("Undefined", r"^class Undefined\b", "jinja2/runtime.py"),
    ),
    (
        "common-jinja2-frame",
        "common_identifier",
        "jinja2",
        "Frame",
        {},
        common("Frame", r"^class Frame\b", "jinja2/compiler.py"),
    ),
    (
        "common-jinja2-node",
        "common_identifier",
        "jinja2",
        "Node",
        {},
        common("Node", r"^class Node\b", "jinja2/nodes.py"),
    ),
    (
        "common-jinja2-writeline",
        "common_identifier",
        "jinja2",
        "writeline",
        {},
        common("writeline", r"^\s+def writeline\(", "jinja2/compiler.py"),
    ),
    (
        "common-jinja2-template",
        "common_identifier",
        "jinja2",
        "Template",
        {},
        common("Template", r"^class Template\b", "jinja2/environment.py"),
    ),
    (
        "common-attrs-attribute",
        "common_identifier",
        "attrs",
        "Attribute",
        {},
        common("Attribute", r"^class Attribute\b", "attr/_make.py"),
    ),
    (
        "common-attrs-attrib",
        "common_identifier",
        "attrs",
        "attrib",
        {},
        common("attrib", r"^def attrib\(", "attr/_make.py"),
    ),
    # -- a parameter name: the gold is its declaration (with its class annotation, when there is one)
    (
        "param-click-auto-envvar-prefix",
        "parameter",
        "click",
        "auto_envvar_prefix",
        {},
        G(r"^\s+auto_envvar_prefix: ", "click/core.py", "range", 2),
    ),
    (
        "param-click-prompt-required",
        "parameter",
        "click",
        "prompt_required",
        {},
        G(r"^\s+prompt_required: ", "click/core.py", "range", 2),
    ),
    (
        "param-click-token-normalize-func",
        "parameter",
        "click",
        "token_normalize_func",
        {},
        G(r"^\s+token_normalize_func: ", "click/core.py", "range", 2),
    ),
    (
        "param-jinja2-followlinks",
        "parameter",
        "jinja2",
        "followlinks",
        {},
        G(r"^\s+followlinks: bool", "jinja2/loaders.py"),
    ),
    ("param-jinja2-leeway", "parameter", "jinja2", "leeway", {}, G(r"^\s+leeway: ", "jinja2/filters.py")),
    ("param-jinja2-searchpath", "parameter", "jinja2", "searchpath", {}, G(r"^\s+searchpath: ", "jinja2/loaders.py")),
    (
        "param-jinja2-default-for-string",
        "parameter",
        "jinja2",
        "default_for_string",
        {},
        G(r"^\s+default_for_string: ", "jinja2/utils.py"),
    ),
    (
        "param-attrs-tuple-factory",
        "parameter",
        "attrs",
        "tuple_factory",
        {},
        G(r"^    tuple_factory=tuple,$", "attr/_funcs.py"),
    ),
    (
        "param-attrs-include-extras",
        "parameter",
        "attrs",
        "include_extras",
        {},
        G(r"attribs=None, include_extras=True$", "attr/_funcs.py"),
    ),
    (
        "param-attrs-attributes-arguments",
        "parameter",
        "attrs",
        "attributes_arguments",
        {},
        G(r"\*\*attributes_arguments$", "attr/_make.py"),
    ),
    # -- an error message
    (
        "err-jinja2-no-loader",
        "error_text",
        "jinja2",
        "no loader for this environment specified",
        {"literal": True},
        L("no loader for this environment specified", "jinja2/environment.py"),
    ),
    (
        "err-jinja2-round-method",
        "error_text",
        "jinja2",
        "method must be common, ceil or floor",
        {"literal": True},
        L("method must be common, ceil or floor", "jinja2/filters.py"),
    ),
    (
        "err-jinja2-buffer-small",
        "error_text",
        "jinja2",
        "buffer size too small",
        {},
        L("buffer size too small", "jinja2/environment.py"),
    ),
    (
        "err-click-no-name",
        "error_text",
        "click",
        "Command has no name.",
        {"literal": True},
        L("Command has no name.", "click/core.py"),
    ),
    (
        "err-click-atomic",
        "error_text",
        "click",
        "Atomic writes only make sense with `w`-mode.",
        {"literal": True},
        L("Atomic writes only make sense with `w`-mode.", "click/_compat.py"),
    ),
    (
        "err-attrs-factory-callable",
        "error_text",
        "attrs",
        "The `factory` argument must be a callable.",
        {"literal": True},
        L("The `factory` argument must be a callable.", "attr/_make.py"),
    ),
    (
        "err-attrs-freeze-setattr",
        "error_text",
        "attrs",
        "Can't freeze a class with a custom __setattr__.",
        {"literal": True},
        L("Can't freeze a class with a custom __setattr__.", "attr/_make.py"),
    ),
    (
        "err-attrs-dict-or-list",
        "error_text",
        "attrs",
        "attrs argument must be a dict or a list.",
        {"literal": True},
        L("attrs argument must be a dict or a list.", "attr/_make.py"),
    ),
    # -- regex metacharacters, searched literally
    (
        "lit-click-version-regex",
        "literal_punctuation",
        "click",
        r"(\d+)\.(\d+)",
        {"literal": True},
        L(r"(\d+)\.(\d+)", "click/shell_completion.py"),
    ),
    ("lit-click-yes-no", "literal_punctuation", "click", "[y/N]", {"literal": True}, L("[y/N]", "click/core.py")),
    (
        "lit-jinja2-ws-re",
        "literal_punctuation",
        "jinja2",
        r"\s*\n\s*",
        {"literal": True},
        L(r"\s*\n\s*", "jinja2/ext.py"),
    ),
    (
        "lit-jinja2-attr-key-re",
        "literal_punctuation",
        "jinja2",
        r"[\s/>=]",
        {"literal": True},
        L(r"[\s/>=]", "jinja2/filters.py"),
    ),
    (
        "lit-jinja2-word-split",
        "literal_punctuation",
        "jinja2",
        r"([-\s({\[<]+)",
        {"literal": True},
        L(r"([-\s({\[<]+)", "jinja2/filters.py"),
    ),
    (
        "lit-jinja2-email-re",
        "literal_punctuation",
        "jinja2",
        r"^\S+@\w[\w.-]*\.\w+$",
        {"literal": True},
        L(r"^\S+@\w[\w.-]*\.\w+$", "jinja2/utils.py"),
    ),
    (
        "lit-jinja2-newline-re",
        "literal_punctuation",
        "jinja2",
        r"(\r\n|\r|\n)",
        {"literal": True},
        L(r"(\r\n|\r|\n)", "jinja2/lexer.py"),
    ),
    (
        "lit-attrs-evolve-args",
        "literal_punctuation",
        "attrs",
        "evolve(*args, **changes)",
        {"literal": True},
        L("evolve(*args, **changes)", "attr/_make.py"),
    ),
    (
        "lit-attrs-generic",
        "literal_punctuation",
        "attrs",
        "specialized generic (A[str])?",
        {"literal": True},
        L("specialized generic (A[str])?", "attr/_funcs.py"),
    ),
    (
        "lit-attrs-hash-cache",
        "literal_punctuation",
        "attrs",
        "object.__setattr__(self, '{_HASH_CACHE_FIELD}'",
        {"literal": True},
        L("object.__setattr__(self, '{_HASH_CACHE_FIELD}'", "attr/_make.py"),
    ),
    # -- a docstring phrase
    (
        "doc-click-strip-ansi",
        "docstring",
        "click",
        "Removes ANSI styling information from a string",
        {},
        L("Removes ANSI styling information from a string", "click/termui.py"),
    ),
    (
        "doc-click-color-value",
        "docstring",
        "click",
        "Interprets a color value",
        {},
        L("Interprets a color value", "click/termui.py"),
    ),
    (
        "doc-click-definition-list",
        "docstring",
        "click",
        "Writes a definition list into the buffer",
        {},
        L("Writes a definition list into the buffer", "click/formatting.py"),
    ),
    (
        "doc-click-confirmation",
        "docstring",
        "click",
        "Prompts for confirmation (yes/no question).",
        {"literal": True},
        L("Prompts for confirmation (yes/no question).", "click/termui.py"),
    ),
    (
        "doc-jinja2-escaping",
        "docstring",
        "jinja2",
        "Enforce HTML escaping",
        {},
        L("Enforce HTML escaping", "jinja2/filters.py"),
    ),
    (
        "doc-jinja2-overlay",
        "docstring",
        "jinja2",
        "Create a new overlay environment",
        {},
        L("Create a new overlay environment", "jinja2/environment.py"),
    ),
    (
        "doc-jinja2-priority",
        "docstring",
        "jinja2",
        "Iterates over the extensions by priority",
        {},
        L("Iterates over the extensions by priority", "jinja2/environment.py"),
    ),
    (
        "doc-attrs-keyword-only",
        "docstring",
        "attrs",
        "All attributes are keyword-only.",
        {"literal": True},
        L("All attributes are keyword-only.", "attr/_make.py"),
    ),
    (
        "doc-attrs-generic-base",
        "docstring",
        "attrs",
        "return the generic base for it",
        {},
        L("return the generic base for it", "attr/_compat.py"),
    ),
    # -- queries that must return nothing
    ("none-jinja2-misspelled", "no_match", "jinja2", "Enviornment", {}, None),
    ("none-jinja2-literal-regex", "no_match", "jinja2", "Environment(.*)", {"literal": True}, None),
    ("none-attrs-lang-js", "no_match", "attrs", "define", {"lang": "javascript"}, None),
    ("none-click-other-corpus", "no_match", "click", "SandboxedEnvironment", {}, None),
    ("none-attrs-case", "no_match", "attrs", "Make_Class", {}, None),
    ("none-jinja2-path-filter", "no_match", "jinja2", "Environment", {"path": r"^docs/"}, None),
    ("none-attrs-regex", "no_match", "attrs", r"def\s+attrib\(self", {}, None),
]

CASES = [(*c, True) for c in DEVELOPED_ON] + [(*c, False) for c in NEW]


def grep_lines(
    repo_dir: Path,
    commit: str,
    pattern: str,
    paths: list[str],
    *,
    fixed: bool,
    word: bool = False,
    ignore_case: bool = False,
) -> list[tuple[str, int]]:
    args = ["grep", "-n", "-I", "--no-color", "-F" if fixed else "-E"]
    if word:
        args.append("-w")
    if ignore_case:
        args.append("-i")
    args += ["-e", pattern, commit, "--", *paths]
    out = run_git(repo_dir, args, ok_returncodes=(0, 1)).stdout.decode("utf-8")
    hits = []
    for line in out.splitlines():
        _rev, path, number, _text = line.split(":", 3)
        hits.append((path, int(number)))
    return hits


def no_match_hits(repo_dir: Path, commit: str, query: str, opts: dict) -> int:
    """What an independent scan finds for a no-match case (smart case, like labkit)."""
    ignore_case = not any(ch.isupper() for ch in query)
    if opts.get("lang") == "javascript":
        return len(git_bytes(repo_dir, ["ls-files", "-z", "--", "*.js", "*.mjs", "*.cjs", "*.jsx"]).split(b"\0")) - 1
    if opts.get("lang") == "go":
        return len(git_bytes(repo_dir, ["ls-files", "-z", "--", "*.go"]).split(b"\0")) - 1
    if opts.get("path") == r"^docs/":
        return len(git_bytes(repo_dir, ["ls-files", "-z", "--", "docs/"]).split(b"\0")) - 1
    return len(grep_lines(repo_dir, commit, query, ["."], fixed=bool(opts.get("literal")), ignore_case=ignore_case))


def gold_for(case_id: str, repo: str, repo_dir: Path, commit: str, query: str, gold: Gold) -> dict:
    path = "src/" + gold.path
    hits = grep_lines(repo_dir, commit, gold.pattern, [path], fixed=gold.fixed)
    if gold.count is not None and len(hits) != gold.count:
        raise SystemExit(
            f"{case_id}: git grep {gold.pattern!r} found {len(hits)} lines in {path}, expected {gold.count}"
        )
    if not hits:
        raise SystemExit(f"{case_id}: git grep {gold.pattern!r} found nothing")
    if gold.corpus_count is not None:
        everywhere = grep_lines(repo_dir, commit, gold.pattern, ["."], fixed=True)
        if len(everywhere) != gold.corpus_count:
            raise SystemExit(
                f"{case_id}: {gold.pattern!r} is on {len(everywhere)} lines of the corpus, expected {gold.corpus_count}"
            )
    if gold.min_word_lines is not None:
        words = grep_lines(repo_dir, commit, query, ["."], fixed=True, word=True)
        if len(words) < gold.min_word_lines:
            raise SystemExit(f"{case_id}: {query!r} is on only {len(words)} lines, expected {gold.min_word_lines}+")
    lines = [n for _p, n in hits]
    lo, hi = {
        "only": (lines[0], lines[0]),
        "first": (lines[0], lines[0]),
        "last": (lines[-1], lines[-1]),
        "range": (min(lines), max(lines)),
    }[gold.pick]
    how = "-F" if gold.fixed else "-E"
    return {
        "gold": {"repo": repo, "path": path, "line_min": lo, "line_max": hi},
        "goldSource": f"git grep -n {how} '{gold.pattern}' -- {path} ({gold.pick})",
    }


def main(out_path: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="labkit-eval-gen-") as tmp:
        laid = {}
        lines = []
        for package, version, repo in CORPORA:
            release = fetch_release(package, version)
            info = layout_release(release, Path(tmp) / repo)
            laid[repo] = info
            lines.append(
                {
                    "kind": "corpus",
                    "package": package,
                    "version": version,
                    "repo": repo,
                    "commit": info["commit"],
                    "files": info["files"],
                    "archive": release.archive,
                    "archiveSha256": release.archive_sha256,
                    "goldMethod": "git grep -n on the corpus commit (data/generate_code_search_eval.py)",
                }
            )
        for case_id, category, corpus, query, opts, gold, developed_on in CASES:
            repo_dir, commit = Path(laid[corpus]["path"]), laid[corpus]["commit"]
            case = {
                "kind": "case",
                "id": case_id,
                "corpus": corpus,
                "split": "dev" if developed_on else hashed_split(case_id),
                "splitReason": "ranking developed on it" if developed_on else "seeded hash of the id",
                "category": category,
                "query": query,
                "literal": bool(opts.get("literal")),
                "repo": opts.get("repo"),
                "lang": opts.get("lang"),
                "path": opts.get("path"),
            }
            if "context" in opts:
                case["context"] = opts["context"]
            if gold is None:
                hits = no_match_hits(repo_dir, commit, query, opts)
                if hits:
                    raise SystemExit(f"{case_id}: expected no match, the independent scan found {hits}")
                case["no_match"] = True
                case["goldSource"] = "git grep finds nothing"
            else:
                case.update(gold_for(case_id, corpus, repo_dir, commit, query, gold))
            lines.append(case)
    out_path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in lines), "utf-8")
    cases = [c for c in lines if c["kind"] == "case"]
    dev = sum(1 for c in cases if c["split"] == "dev")
    print(
        f"wrote {len(cases)} cases ({dev} dev, {len(cases) - dev} test) over "
        f"{', '.join(f'{p} {v}' for p, v, _r in CORPORA)} to {out_path.name}"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("code-search-eval.jsonl"))
