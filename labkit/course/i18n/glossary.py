"""The term base as a bilingual glossary, in both editions, generated from ``terms.tsv``.

``labs/GLOSSARY.md`` (the English edition) ends with a section between two markers that holds
the English–Chinese table; ``labs/i18n/zh-CN/GLOSSARY.md`` is the Chinese edition's glossary,
the same table with the Chinese first. Both are written from ``terms.tsv`` and never edited by
hand: ``python -m labkit.course.i18n.glossary --write`` rewrites them, ``--check`` (and the drift
check) fails when either is out of date.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from labkit.course.i18n import catalog as lab_catalog

BEGIN = "<!-- terms zh-CN: generated from labs/i18n/zh-CN/terms.tsv by python -m labkit.course.i18n.glossary -->"
END = "<!-- end of terms zh-CN -->"
#: What the third column of terms.tsv (where the Chinese comes from) means.
SEEDS = {
    "000": "源码学习文章《Workspace Search 与 Git Diff》",
    "001": "《Git Diff 自检》",
    "002": "Code Search MCP 项目",
    "003": "《Direct 回合行为审计账本》",
    "004": "《从工单开始，做一个 AI Agent》第 06 篇",
    "—": "本课程自拟",
}
SEEDS_EN = {
    "000": "the source-reading article",
    "001": "the Git Diff review lesson",
    "002": "the Code Search MCP project",
    "003": "the audit-ledger design note",
    "004": "the deployment story",
    "—": "the course's own",
}


def rows(lang: str = lab_catalog.DEFAULT_LANG, root: Path | None = None) -> list[tuple[str, str, str]]:
    """(English, Chinese, source) in the term base's own order."""
    path = lab_catalog.catalog_dir(lang, root) / "terms.tsv"
    out = []
    for line in path.read_text("utf-8").splitlines():
        if not line.strip() or line.startswith("#") or line.startswith("english\t"):
            continue
        cols = [c.strip() for c in line.split("\t")] + ["", ""]
        if cols[0] and cols[1]:
            out.append((cols[0], cols[1], cols[2] or "—"))
    return out


def english_section(table: list[tuple[str, str, str]]) -> str:
    lines = [
        BEGIN,
        "",
        "## English–Chinese terms (中英术语对照)",
        "",
        "The Chinese edition (`labkit labs starter --lang zh-CN`) renders each term as below, in every lab, "
        "hint and checker message; the Chinese comes from the sources' own words where they have one.",
        "",
        "| English | 中文 | the Chinese is from |",
        "|---|---|---|",
    ]
    lines += [f"| {en} | {zh} | {SEEDS_EN.get(src, src)} |" for en, zh, src in table]
    return "\n".join([*lines, "", END])


def chinese_glossary(table: list[tuple[str, str, str]]) -> str:
    lines = [
        "# 术语表（中英对照）",
        "",
        "中文版的每个实验、提示和检查器消息都按下表翻译术语。中文尽量取自资料原文的说法。"
        "英文版的术语表（`labs/GLOSSARY.md`）末尾是同一张表。本文件由 "
        "`python -m labkit.course.i18n.glossary --write` 从 `terms.tsv` 生成，请勿手改。",
        "",
        "| 中文 | English | 出处 |",
        "|---|---|---|",
    ]
    lines += [f"| {zh} | {en} | {SEEDS.get(src, src)} |" for en, zh, src in table]
    from labkit.course.i18n.messages import speaking
    from labkit.course.plots.concept_map import concept_table

    with speaking("zh-CN"):  # the concept map's rows, as the Chinese figure beside this file draws them
        concepts = concept_table()
    lines += [
        "",
        "## 概念图",
        "",
        "![概念图：每个实验讲的一种失败、显示它的字段和修复办法。下表以文字给出同样的各行。](concept-map.png)",
        "",
        "同一张图的文字版（`python -m labkit.course.plots.concept_map --write` 重画两种语言的图）：",
        "",
        concepts,
    ]
    return "\n".join(lines) + "\n"


def with_section(english: str, section: str) -> str:
    """``english`` (GLOSSARY.md) with its generated section replaced, or appended."""
    if BEGIN in english and END in english:
        head, rest = english.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        return head + section + tail
    return english.rstrip("\n") + "\n\n" + section + "\n"


def expected(root: Path | None = None, lang: str = lab_catalog.DEFAULT_LANG) -> dict[Path, str]:
    from labkit.course import labfiles

    labs = root or labfiles.labs_dir()
    table = rows(lang, labs)
    english_path = labs / "GLOSSARY.md"
    return {
        english_path: with_section(english_path.read_text("utf-8"), english_section(table)),
        lab_catalog.catalog_dir(lang, labs) / "GLOSSARY.md": chinese_glossary(table),
    }


def problems(root: Path | None = None) -> list[str]:
    """Which glossary file is not what terms.tsv gives (empty when both are in step)."""
    out = []
    for path, text in expected(root).items():
        if not path.exists() or path.read_text("utf-8") != text:
            out.append(f"{path.parent.name}/{path.name} is not generated from terms.tsv: run glossary --write")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labkit.course.i18n.glossary", description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    if args.write:
        for path, text in expected().items():
            path.write_text(text, encoding="utf-8")
        return 0
    found = problems()
    for p in found:
        print(p, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
