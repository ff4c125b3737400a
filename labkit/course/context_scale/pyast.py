"""What strategy D learns from Python source without running it.

Everything here is syntax only (:mod:`ast` and :mod:`tokenize`): which
functions a set of changed lines falls in, which names a function calls, how
a file's imports map a name to a module file, and whether a search hit line
uses a name as code or only mentions it in a comment or a string. Receiver
types are unknown to a syntax-only reader, so a method call on a value
(``store.load()``) is reported as unresolved rather than guessed.
"""

from __future__ import annotations

import ast
import builtins
import io
import re
import tokenize
from collections.abc import Callable
from dataclasses import dataclass, field

BUILTIN_NAMES = frozenset(dir(builtins))
_DEF_LINE = re.compile(r"^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)")
_CALL_WORD = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_KEYWORDS = frozenset(
    {
        "if",
        "for",
        "while",
        "return",
        "and",
        "or",
        "not",
        "in",
        "def",
        "class",
        "with",
        "elif",
        "lambda",
        "yield",
        "print",
        "assert",
        "del",
        "except",
        "raise",
    }
)


@dataclass(frozen=True)
class FunctionSpan:
    name: str  # simple name
    qualname: str  # "Class.method" for methods
    start: int
    end: int


@dataclass(frozen=True)
class SyntaxProblem:
    path: str
    line: int | None
    message: str


@dataclass(frozen=True)
class ImportBinding:
    """A local name bound by an import: ``module`` (dotted) and the imported ``attr``."""

    module: str
    attr: str | None  # None: the name is the module itself (``import a.b as x``)


@dataclass
class ModuleInfo:
    path: str
    tree: ast.Module | None
    problem: SyntaxProblem | None = None
    functions: list[FunctionSpan] = field(default_factory=list)
    imports: dict[str, ImportBinding] = field(default_factory=dict)
    top_level: set[str] = field(default_factory=set)
    source: str = ""


@dataclass(frozen=True)
class CallSite:
    name: str  # the called name (function name or attribute)
    receiver: str | None  # dotted receiver for ``a.b.name()``; None for a bare ``name()``
    line: int


def _package_of(path: str) -> list[str]:
    parts = path.split("/")[:-1]
    return parts


def absolute_module(importer: str, module: str | None, level: int) -> str | None:
    """The dotted module an import names, relative imports resolved against ``importer``'s package."""
    if level == 0:
        return module
    package = _package_of(importer)
    if level - 1 > len(package):
        return None
    base = package[: len(package) - (level - 1)]
    return ".".join([*base, *(module.split(".") if module else [])])


def module_files(module: str) -> list[str]:
    """Candidate files for a dotted module: ``a/b.py`` and ``a/b/__init__.py``."""
    rel = module.replace(".", "/")
    return [f"{rel}.py", f"{rel}/__init__.py"]


def parse_module(path: str, source: str) -> ModuleInfo:
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as exc:
        return ModuleInfo(path, None, SyntaxProblem(path, exc.lineno, exc.msg), source=source)
    info = ModuleInfo(path, tree, source=source)

    def visit(node, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qual = f"{prefix}{child.name}"
                info.functions.append(FunctionSpan(child.name, qual, child.lineno, child.end_lineno or child.lineno))
                visit(child, qual + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            info.top_level.add(node.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    info.imports[alias.asname] = ImportBinding(alias.name, None)
                else:
                    head = alias.name.split(".")[0]
                    info.imports[head] = ImportBinding(head, None)
        elif isinstance(node, ast.ImportFrom):
            module = absolute_module(path, node.module, node.level)
            if module is None:
                continue
            for alias in node.names:
                if alias.name != "*":
                    info.imports[alias.asname or alias.name] = ImportBinding(module, alias.name)
    return info


def functions_touching(info: ModuleInfo, lines: set[int]) -> list[FunctionSpan]:
    """The innermost function around each changed line (each function once, in file order)."""
    found: dict[str, FunctionSpan] = {}
    for line in sorted(lines):
        inner = None
        for fn in info.functions:
            if fn.start <= line <= fn.end and (inner is None or fn.start >= inner.start):
                inner = fn
        if inner is not None:
            found.setdefault(inner.qualname, inner)
    return sorted(found.values(), key=lambda f: f.start)


def lexical_functions_touching(source: str, lines: set[int]) -> list[FunctionSpan]:
    """Fallback for a file that does not parse: the nearest ``def`` line above each changed line."""
    defs = [(i, m.group(1)) for i, text in enumerate(source.splitlines(), 1) if (m := _DEF_LINE.match(text))]
    found: dict[str, FunctionSpan] = {}
    for line in sorted(lines):
        above = [(i, name) for i, name in defs if i <= line]
        if above:
            i, name = above[-1]
            found.setdefault(name, FunctionSpan(name, name, i, line))
    return sorted(found.values(), key=lambda f: f.start)


def lexical_function_text(source: str, name: str) -> str:
    """A ``def name`` line and the indented lines after it; the whole source when there is none."""
    lines = source.splitlines()
    for i, text in enumerate(lines):
        m = _DEF_LINE.match(text)
        if m and m.group(1) == name:
            indent = len(text) - len(text.lstrip())
            body = [text]
            for more in lines[i + 1 :]:
                if more.strip() and len(more) - len(more.lstrip()) <= indent:
                    break
                body.append(more)
            return "\n".join(body)
    return source


def lexical_calls(text: str) -> list[str]:
    """Fallback: words followed by ``(`` in source text, without keywords and builtins."""
    out: list[str] = []
    for name in _CALL_WORD.findall(text):
        if name not in _KEYWORDS and name not in BUILTIN_NAMES and name not in out:
            out.append(name)
    return out


def function_node(info: ModuleInfo, qualname: str):
    if info.tree is None:
        return None
    parts = qualname.split(".")

    def find(body, rest):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == rest[0]:
                if len(rest) == 1:
                    return node if not isinstance(node, ast.ClassDef) else None
                return find(node.body, rest[1:])
        return None

    return find(info.tree.body, parts)


def _dotted(node) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None


def calls_in(node) -> list[CallSite]:
    """Every call inside ``node``, in source order."""
    sites: list[CallSite] = []
    for sub in ast.walk(node):
        if not isinstance(sub, ast.Call):
            continue
        func = sub.func
        if isinstance(func, ast.Name):
            sites.append(CallSite(func.id, None, sub.lineno))
        elif isinstance(func, ast.Attribute):
            # A receiver that is not a dotted name (a literal, a call) is a value: "<value>".
            sites.append(CallSite(func.attr, _dotted(func.value) or "<value>", sub.lineno))
    sites.sort(key=lambda s: (s.line, s.name))
    return sites


def enclosing_function(info: ModuleInfo, line: int) -> FunctionSpan | None:
    inner = None
    for fn in info.functions:
        if fn.start <= line <= fn.end and (inner is None or fn.start >= inner.start):
            inner = fn
    return inner


@dataclass(frozen=True)
class Target:
    """Where a called name may be defined: ``kind`` and candidate module files."""

    kind: str  # builtin | local | project | external | method | unknown
    name: str
    files: tuple[str, ...] = ()


def resolve_call(info: ModuleInfo, site: CallSite, exists: Callable[[str], bool]) -> Target:
    """Map a call to its definition site, by this file's imports and top-level defs only."""
    if site.receiver is None:
        if site.name in info.top_level:
            return Target("local", site.name, (info.path,))
        binding = info.imports.get(site.name)
        if binding is not None and binding.attr is not None:
            return _project_or_external(binding.module, binding.attr, exists)
        if site.name in BUILTIN_NAMES:
            return Target("builtin", site.name)
        return Target("unknown", site.name)
    head, _, rest = site.receiver.partition(".")
    binding = info.imports.get(head)
    if binding is None:
        return Target("method", site.name)
    module = binding.module if binding.attr is None else f"{binding.module}.{binding.attr}"
    if rest:
        module = f"{module}.{rest}"
    return _project_or_external(module, site.name, exists)


def _project_or_external(module: str, name: str, exists: Callable[[str], bool]) -> Target:
    files = [f for f in module_files(module) if exists(f)]
    if files:
        return Target("project", name, tuple(files))
    return Target("external", name)


def call_targets_file(
    info: ModuleInfo, site: CallSite, name: str, target_file: str, exists: Callable[[str], bool]
) -> bool | None:
    """Does ``site`` call ``name`` defined in ``target_file``? None when the file cannot tell."""
    if site.name != name:
        return False
    if site.receiver is None:
        binding = info.imports.get(name)
        if binding is None or binding.attr is None:
            return info.path == target_file
        files = module_files(binding.module)
    else:
        head, _, rest = site.receiver.partition(".")
        binding = info.imports.get(head)
        if binding is None:
            return None  # a method on a value: the receiver's type is unknown
        module = binding.module if binding.attr is None else f"{binding.module}.{binding.attr}"
        if rest:
            module = f"{module}.{rest}"
        files = module_files(module)
    if target_file in files:
        return True
    if any(exists(f) for f in files):
        return None  # a module that may re-export the name
    return False


@dataclass(frozen=True)
class LineUse:
    """How one search hit line uses a name."""

    code: bool  # the name appears as a code token
    mention: bool  # the name appears inside a comment or a string
    defines: bool  # ``def name``
    import_module: str | None  # the dotted module of ``from M import name`` (resolved)
    readable: bool  # the line tokenized on its own


def classify_line(text: str, name: str, importer: str) -> LineUse:
    """Classify a single source line (a search hit) without reading its file."""
    code = mention = defines = False
    import_module = None
    stripped = text.strip()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(stripped + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return LineUse(False, False, False, None, False)
    previous = None
    for tok in tokens:
        if tok.type == tokenize.NAME and tok.string == name:
            code = True
            if previous is not None and previous.type == tokenize.NAME and previous.string == "def":
                defines = True
        elif tok.type in (tokenize.COMMENT, tokenize.STRING) and re.search(rf"\b{re.escape(name)}\b", tok.string):
            # An f-string can call the name inside a replacement field: count it as code, to be verified.
            prefix = tok.string[: len(tok.string) - len(tok.string.lstrip("rRbBuUfF"))]
            if tok.type == tokenize.STRING and "f" in prefix.lower():
                code = True
            else:
                mention = True
        elif getattr(tokenize, "FSTRING_MIDDLE", None) == tok.type and name in tok.string:
            mention = True
        if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            previous = tok
    if code and stripped.startswith(("from ", "import ")):
        try:
            node = ast.parse(stripped).body[0]
        except SyntaxError:
            node = None
        if isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names):
            import_module = absolute_module(importer, node.module, node.level)
    return LineUse(code, mention, defines, import_module, True)
