"""The messages labkit shows people, read out of its own source, and the catalog kept from them.

An extractor of our own (``ast``, no Babel): what counts as a message here is not only what sits
inside ``_()``: a checker's ``raise Incorrect(f"...")``, an ``Exercise``'s hints and explanation,
a report's page text and a command's ``render`` function are messages where they stand, so the
call sites stay as they are and the English output stays byte for byte the same. pybabel
extracts ``_()`` calls only, and would need every one of those sites rewritten.

Each message has a context (``check``, ``widget``, ``report``, ``cli``: :mod:`.messages`). An
f-string becomes a brace-format msgid with positional fields (``you gave {0}``); a report's
page text is cut at block tags into the runs :func:`messages.translate_html` looks up.

``python -m labkit.course.i18n.extract [--lang zh-CN]`` refreshes
``labs/i18n/<lang>/messages.po``: new messages get an empty ``msgstr``, translations of
messages that are gone are kept as obsolete, for the translator.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import polib

from labkit.course.i18n.messages import html_runs

PACKAGE = Path(__file__).resolve().parents[2]  # labkit/

#: (files under labkit/, context, what is a message there)
SOURCES = (
    ("course/check/*.py", "check", "check"),
    ("course/widgets/*.py", "widget", "calls"),
    ("course/plots/*.py", "widget", "calls"),  # every word a figure draws
    ("course/report.py", "report", "report"),
    ("course/targets.py", "report", "report"),  # the headline's words (the JSON keeps its English)
    ("course/instructor_notes.py", "report", "calls"),  # labs/i18n/<lang>/INSTRUCTOR-NOTES.md
    ("course/sources.py", "report", "calls"),  # the sources' short names
    ("course/progress.py", "report", "calls"),  # the report's progress lines on stderr
    ("cli/*.py", "cli", "render"),
    # each experiment's declaration: its intro sentence on the report's page
    ("course/experiments/*.py", "report", "experiment"),
    ("course/context_scale/experiment.py", "report", "experiment"),
)
#: Files a glob above takes that hold no text for people (reference.py writes docs/reference.md).
NOT_SOURCES = ("cli/reference.py",)
EXERCISE_TEXT = ("prompt", "hint_text", "hint2", "explanation", "on_correct")
#: Calls whose string arguments are code, keys or patterns, never text for people.
NOT_TEXT_CALLS = {
    "get", "compile", "search", "match", "fullmatch", "sub", "split", "join", "replace", "startswith",
    "endswith", "getattr", "setdefault", "encode", "decode", "open", "Path", "glob", "rstrip", "strip",
    "lstrip", "pop", "index", "count", "figure_to_png", "load_target", "run_experiment", "import_module",
    "write_text", "read_text", "mkdir", "isinstance", "hasattr", "format_column", "_status_cell", "unit_for",
    "b64encode", "dumps", "loads", "lab_name", "execute_notebook", "mktemp", "environ", "add_argument",
    "add_parser", "set_defaults", "float", "int", "zip", "sorted", "sum", "table", "strftime", "Boundary",
}  # fmt: skip
WORD = re.compile(r"[A-Za-z]{2}")
IDENT = re.compile(r"^[A-Za-z_][\w.\-/]*$")
CSS_RULE = re.compile(r"[a-z-]+:\s*[#\w.%(),-]+;")


@dataclass(frozen=True)
class Message:
    ctx: str
    msgid: str
    brace: bool  # a brace-format template (placeholders {0}, {1} ...)
    where: str  # file:line of its first occurrence


# -- a string expression as a template ------------------------------------------------------------

Part = tuple[str, str]  # ("lit", text) or ("field", "")


def parts_of(node: ast.AST, *, loose: bool = True) -> list[Part] | None:
    """The literal text and fields of a string expression (``None`` when it is not one)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [("lit", node.value)]
    if isinstance(node, ast.JoinedStr):
        out: list[Part] = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                out.append(("lit", str(v.value)))
            else:
                out.append(("field", ""))
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = parts_of(node.left), parts_of(node.right)
        if left is None and right is None:
            return None
        return (left if left is not None else [("field", "")]) + (right if right is not None else [("field", "")])
    return None


def render(parts: list[Part]) -> tuple[str, bool]:
    """Parts as a msgid: literal braces doubled and fields numbered when there is a field."""
    brace = any(kind == "field" for kind, _ in parts)
    out, n = "", 0
    for kind, text in parts:
        if kind == "lit":
            out += text.replace("{", "{{").replace("}", "}}") if brace else text
        else:
            out += f"{{{n}}}"
            n += 1
    return out, brace


def split_parts(parts: list[Part], *, html: bool) -> list[list[Part]]:
    """Parts cut where the output is cut before it is looked up: lines, and (for a page) block tags."""
    pieces: list[list[Part]] = [[]]
    for kind, text in parts:
        if kind == "field":
            pieces[-1].append((kind, text))
            continue
        chunks = html_runs(text) if html else [text]
        for k, chunk in enumerate(chunks):
            if html and k % 2:  # a block tag: a new run starts after it
                pieces.append([])
                continue
            lines = chunk.split("\n")
            for j, line in enumerate(lines):
                if j:
                    pieces.append([])
                if line:
                    pieces[-1].append(("lit", line))
    return [p for p in pieces if p]


def _strip(parts: list[Part]) -> list[Part]:
    """A run without the white space at its ends (the lookup strips it too)."""
    parts = list(parts)
    if parts and parts[0][0] == "lit":
        parts[0] = ("lit", parts[0][1].lstrip())
    if parts and parts[-1][0] == "lit":
        parts[-1] = ("lit", parts[-1][1].rstrip())
    return [p for p in parts if p != ("lit", "")]


def is_text(parts: list[Part], *, marked: bool = False) -> bool:
    """Whether a run reads as words for people (not a key, a CSS rule, a bare field).

    ``marked``: the source says it is a message (``_()``, a checker's ``Incorrect``), so a word with a dot
    (``est.``) is a word, not a key, and ``file.py:L3-L8);`` in a sentence is no CSS rule.
    """
    literal = "".join(t for k, t in parts if k == "lit")
    words = re.sub(r"<[^<>]*>", "", render(parts)[0])  # markup alone (a row's tag, a link's href) is no text
    if not WORD.search(re.sub(r"\{\d+\}", "", words)):
        return False
    if len(parts) == 1 and IDENT.match(literal) and not literal.isalpha() and not marked:
        return False  # a key, a path, a dotted name
    return marked or not CSS_RULE.search(words)


# -- walking the source ---------------------------------------------------------------------------


def _call_name(node: ast.Call) -> str:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


class _Walker(ast.NodeVisitor):
    def __init__(self, rel: str, ctx: str, mode: str):
        self.rel, self.ctx, self.mode = rel, ctx, mode
        self.found: list[tuple[list[Part], int]] = []
        self.templates: list[tuple[str, int]] = []
        self.func: list[str] = []
        self.skip: set[int] = set()

    def add(self, node: ast.AST | None) -> None:
        parts = parts_of(node) if node is not None else None
        if parts is not None and node is not None:
            self.found.append((parts, getattr(node, "lineno", 0)))
            for sub in ast.walk(node):
                self.skip.add(id(sub))

    def visit_FunctionDef(self, node) -> None:
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            self.skip.add(id(body[0].value))  # a docstring
        self.func.append(node.name)
        self.generic_visit(node)
        self.func.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Module(self, node) -> None:
        if node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant):
            self.skip.add(id(node.body[0].value))
        self.generic_visit(node)

    def visit_ClassDef(self, node) -> None:
        if node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant):
            self.skip.add(id(node.body[0].value))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = _call_name(node)
        if name in ("_", "N_", "gettext", "human"):
            if node.args:
                self.add(node.args[0])
        elif name == "_f":  # _f("promise {0} broke on {1}", ...): the msgid is written as a template
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                self.templates.append((node.args[0].value, node.lineno))
                self.skip.add(id(node.args[0]))
        elif self.mode == "check":
            if name in ("Incorrect", "Broken", "Promise", "Waiting") and node.args:
                self.add(node.args[0])
                if name == "Broken" and len(node.args) > 1:
                    self.add(node.args[1])
            if name == "Mutant" and len(node.args) > 2:  # Mutant(name, fn, mistake): the mistake is the words
                self.add(node.args[2])
            if name == "expect_type" and len(node.args) > 2:  # what the answer is called: "your answer"
                self.add(node.args[2])
            if name in ("Exercise", "FixIt"):
                for kw in node.keywords:
                    if kw.arg in EXERCISE_TEXT:
                        self.add(kw.value)
            if name == "Mutant":
                for kw in node.keywords:
                    if kw.arg == "mistake":
                        self.add(kw.value)
        elif self.mode == "experiment":
            if name == "Experiment":
                for kw in node.keywords:
                    if kw.arg == "intro":
                        self.add(kw.value)
        elif self.text_here():
            if name in NOT_TEXT_CALLS:
                for a in node.args:
                    self._skip_tree(a)
            elif name == "Col":  # Col(key, label, unit): only the label is text
                for a in node.args[:1] + node.args[2:]:
                    self._skip_tree(a)
        self.generic_visit(node)

    def _skip_tree(self, node: ast.AST) -> None:
        if isinstance(node, (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple)):
            for sub in ast.walk(node):
                self.skip.add(id(sub))

    def visit_Dict(self, node: ast.Dict) -> None:
        for k in node.keys:
            if k is not None:
                self._skip_tree(k)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        value = node.value
        if isinstance(value, ast.Call) and _call_name(value) == "in_language" and value.args:
            value = value.args[0]  # a table of choices the lab prints: in_language({...})
        if self.mode == "check" and not self.func and isinstance(value, ast.Dict):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            if any(n.endswith("_CHOICES") for n in names):
                for v in value.values:
                    self.add(v)
        if self.text_here() and any(
            isinstance(t, ast.Name) and t.id in ("CSS", "_TEXT_FONTS", "_MONO_FONTS") for t in node.targets
        ):
            for sub in ast.walk(node.value):
                self.skip.add(id(sub))
        self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> None:
        if self.mode == "check" and self.func and "validate" in self.func[-1] and node.value is not None:
            self.add(node.value)
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self._skip_tree(node.slice)
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        for c in [node.left, *node.comparators]:
            self._skip_tree(c)
        self.generic_visit(node)

    def text_here(self) -> bool:
        if self.mode == "report":
            return True
        return self.mode == "render" and any(f.startswith("render") for f in self.func)

    def generic_visit(self, node: ast.AST) -> None:
        if self.text_here() and isinstance(node, (ast.JoinedStr, ast.BinOp, ast.Constant)):
            if id(node) not in self.skip and parts_of(node) is not None:
                self.add(node)
                return
        super().generic_visit(node)


def messages_in(path: Path, ctx: str, mode: str) -> Iterator[Message]:
    rel = path.relative_to(PACKAGE.parent).as_posix()
    tree = ast.parse(path.read_text("utf-8"))
    walker = _Walker(rel, ctx, mode)
    walker.visit(tree)
    for msgid, line in walker.templates:
        yield Message(ctx, msgid.strip(), True, f"{rel}:{line}")
    for parts, line in walker.found:
        for run in split_parts(parts, html=(mode == "report")):
            run = _strip(run)
            if not run or not is_text(run, marked=(mode in ("calls", "check"))):
                continue
            msgid, brace = render(run)
            yield Message(ctx, msgid, brace, f"{rel}:{line}")


def extract(package: Path = PACKAGE) -> list[Message]:
    """Every message in labkit's source, once per (context, msgid), in source order."""
    seen: dict[tuple[str, str], Message] = {}
    for pattern, ctx, mode in SOURCES:
        for path in sorted(package.glob(pattern)):
            if path.relative_to(package).as_posix() in NOT_SOURCES:
                continue
            for m in messages_in(path, ctx, mode):
                seen.setdefault((m.ctx, m.msgid), m)
    return list(seen.values())


# -- the catalog file -----------------------------------------------------------------------------


def build(lang: str, old: polib.POFile | None = None) -> polib.POFile:
    po = polib.POFile(wrapwidth=0)
    po.metadata = {
        "Project-Id-Version": "labkit messages",
        "Language": lang,
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
    }
    known = {(e.msgctxt, e.msgid): e for e in (old or [])}
    for m in extract():
        prev = known.pop((m.ctx, m.msgid), None)
        po.append(
            polib.POEntry(
                msgctxt=m.ctx,
                msgid=m.msgid,
                msgstr=prev.msgstr if prev else "",
                occurrences=[tuple(m.where.rsplit(":", 1))],
                flags=["python-brace-format"] if m.brace else [],
                tcomment=prev.tcomment if prev else "",
            )
        )
    for entry in known.values():  # messages the source no longer has: kept for the translator
        if entry.msgstr:
            entry.obsolete = True
            entry.occurrences = []
            po.append(entry)
    return po


def update(lang: str = "zh-CN") -> Path:
    from labkit.course.i18n.messages import messages_path

    path = messages_path(lang)
    old = polib.pofile(str(path), wrapwidth=0) if path.exists() else None
    po = build(lang, old)
    path.parent.mkdir(parents=True, exist_ok=True)
    po.save(str(path))
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labkit.course.i18n.extract", description=__doc__.split("\n")[0])
    parser.add_argument("--lang", default="zh-CN")
    parser.add_argument("--list", action="store_true", help="print the messages instead of updating the catalog")
    args = parser.parse_args(argv)
    if args.list:
        for m in extract():
            print(f"{m.ctx}\t{m.where}\t{m.msgid!r}")
        return 0
    path = update(args.lang)
    po = polib.pofile(str(path), wrapwidth=0)
    todo = sum(1 for e in po if not e.obsolete and not e.msgstr)
    print(f"{path.name}: {len(po.translated_entries())} translated, {todo} to translate", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
