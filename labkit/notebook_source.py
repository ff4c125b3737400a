"""Lab notebooks written from Python: one source of truth per lab.

A lab's generator module builds a :class:`LabNotebook` cell by cell and writes
``labs/<name>``; a test compares the committed file with :meth:`LabNotebook.text`.
Cells carry no outputs and stable ids; the kernelspec is ``python3``.
Exercises follow the starter convention: a placeholder cell, a cell tagged
``solution`` that only assigns the answer, then the check.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

LABS_DIR = Path(__file__).resolve().parents[1] / "labs"
KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


@dataclass
class LabNotebook:
    lab: str  # "00", "09", ...: prefixes cell ids and names the checker module labkit.check.labNN
    name: str  # the file name under labs/
    cells: list[tuple[str, str, list[str]]] = field(default_factory=list)

    def md(self, text: str) -> None:
        self.cells.append(("markdown", text.strip("\n"), []))

    def code(self, text: str, tags: list[str] | None = None) -> None:
        self.cells.append(("code", text.strip("\n"), list(tags or [])))

    def exercise(self, number: int, solution: str, before: str = "") -> None:
        """Placeholder cell, solution cell (tagged ``solution``), check cell."""
        answer = f"answer_q{number}"
        self.code(before + f"{answer} = ...  # replace ... with your answer")
        self.code(solution, tags=["solution"])
        self.code(f"lab{self.lab}.q{number}.check({answer})")

    def build(self):
        import nbformat

        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = dict(KERNELSPEC)
        nb.metadata["language_info"] = {"name": "python"}
        for i, (kind, text, tags) in enumerate(self.cells):
            cell = nbformat.v4.new_markdown_cell(text) if kind == "markdown" else nbformat.v4.new_code_cell(text)
            cell.id = f"lab{self.lab}-{i:02d}"
            if tags:
                cell.metadata["tags"] = list(tags)
            nb.cells.append(cell)
        return nb

    def text(self) -> str:
        import nbformat

        return nbformat.writes(self.build()) + "\n"

    def write(self, path: str | Path | None = None) -> Path:
        out = Path(path) if path else LABS_DIR / self.name
        out.write_text(self.text(), "utf-8")
        return out
