"""The Chinese edition: the language switch, the message catalog, the drift check, the starters.

The drift check is shown to catch each planted failure in a temporary copy of the labs (an English
edit, a changed number, a lost code span, a wrong hash, a missing message, a missing term, a stale
glossary) and to pass once it is fixed the documented way. Real files, real polib, real CLI.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import nbformat
import polib
import pytest

from labkit.boundary.errors import LabkitError
from labkit.course import labfiles
from labkit.course.i18n import catalog, check, edition, messages

LAB = "01-workspace-search"


@pytest.fixture
def zh(monkeypatch):
    monkeypatch.setenv(messages.ENV, "zh-CN")
    monkeypatch.setattr(messages, "_chosen", None)
    yield
    messages.catalog.cache_clear()


@pytest.fixture
def labs_copy(tmp_path, monkeypatch):
    """A copy of the labs folder (catalogs included) that every lab reader sees instead of the real one."""
    dest = tmp_path / "labs"
    shutil.copytree(labfiles.labs_dir(), dest, symlinks=False)
    monkeypatch.setattr(labfiles, "labs_dir", lambda: dest)
    edition.translations.cache_clear()
    messages.catalog.cache_clear()
    yield dest
    edition.translations.cache_clear()
    messages.catalog.cache_clear()


# -- the language ---------------------------------------------------------------------------------


def test_english_is_the_default_and_looks_nothing_up(monkeypatch):
    monkeypatch.delenv(messages.ENV, raising=False)
    monkeypatch.setattr(messages, "_chosen", None)
    assert messages.current() == "en"
    text = "replace the `...` placeholder with your answer, then run this cell again"
    assert messages.translate(text, "check") is text


@pytest.mark.parametrize("given", ["zh-CN", "zh_CN", "zh-cn", "zh", " zh-CN "])
def test_the_chinese_names(given):
    assert messages.resolve(given) == "zh-CN"


@pytest.mark.parametrize("given", ["fr", "klingon", "zh-TW-x", "../etc"])
def test_an_unknown_language_is_invalid_argument(given):
    with pytest.raises(LabkitError) as err:
        messages.resolve(given)
    assert err.value.code == "invalid_argument" and "en, zh-CN" in err.value.message


def test_the_cli_refuses_an_unknown_language_with_the_contract_error(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "labkit", "labs", "starter", "--lang", "fr", "--out", str(tmp_path / "s"), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1 and json.loads(run.stdout)["error"]["code"] == "invalid_argument"
    assert not (tmp_path / "s").exists(), "nothing is written for a refused language"
    env = {**__import__("os").environ, "LABKIT_LANG": "xx"}
    run = subprocess.run(
        [sys.executable, "-m", "labkit", "status", str(tmp_path), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert run.returncode == 1 and json.loads(run.stdout)["error"]["code"] == "invalid_argument"


# -- the message catalog --------------------------------------------------------------------------


def test_checker_messages_hints_and_verdicts_in_chinese(zh):
    from labkit.course.check import lab01

    assert str(lab01.q1.check(...)).startswith("[lab01.q1] 未作答: ")
    wrong = str(lab01.q1.check("Z"))
    assert wrong == "[lab01.q1] 不正确: 请用一个字母作答：A, B, C, D；你给的是 'Z'"  # a template, its values filled in
    assert str(lab01.q1.check("C")).startswith("[lab01.q1] 正确: 做得好。")
    assert str(lab01.q1.hint()).startswith("提示 1/2: ") and "truncated" in str(lab01.q1.hint())
    assert "截断" in str(lab01.q1.hint(2))


def test_english_messages_are_unchanged_in_an_english_process(monkeypatch):
    monkeypatch.delenv(messages.ENV, raising=False)
    monkeypatch.setattr(messages, "_chosen", None)
    from labkit.course.check import lab01

    assert str(lab01.q1.check("Z")) == "[lab01.q1] Incorrect: answer with one letter: A, B, C, D; you gave 'Z'"


def test_a_composed_message_is_looked_up_by_its_template(zh):
    assert messages.formatted("promise {0} ({1}) broke on {2}: {3}", (2, "x", "y", "z"), "check") == (
        "承诺 2（x）在 y 上被打破：z"
    )
    assert messages.formatted("no such message {0}", (1,), "check") == "no such message 1"


def test_a_report_page_is_translated_between_its_tags_and_never_inside_code(zh):
    page = (
        "<!DOCTYPE html><html lang='en'><head><style>p{color:red}</style></head><body>"
        "<h2 id=headline>Headline</h2><p>load 0.50 (1 min), 0.25 (5 min) on 2 CPUs</p>"
        "<pre>Headline</pre><p><code>Headline</code></p>"
        "<details><summary>Raw data: every field of the result</summary><table><tr><td>Headline</td></tr></table>"
        "</details></body></html>"
    )
    out = messages.translate_html(page, "report")
    assert "<html lang='zh-CN'>" in out and "<h2 id=headline>要点</h2>" in out
    assert "<p>负载 0.50（1 分钟）、0.25（5 分钟），2 个 CPU</p>" in out
    assert "<pre>Headline</pre>" in out and "<code>Headline</code>" in out and "p{color:red}" in out
    assert "<summary>原始数据：结果的全部字段</summary><table><tr><td>Headline</td>" in out  # data stays data


def test_every_message_in_the_source_has_a_translation():
    """The message half of the drift check on the real tree: nothing missing, stale or drifted."""
    report = check.Report()
    check.check_messages("zh-CN", report, required=True)
    assert report.problems == [], [str(p) for p in report.problems[:5]]
    assert report.translated["messages"] > 800


# -- the drift check, planted failures ------------------------------------------------------------


def _translate_one(labs_dir, lab: str, want) -> polib.POEntry:
    """Fill in one entry of ``lab``'s catalog (the first whose English ``want`` accepts): every token kept."""
    path = catalog.catalog_path(lab, "zh-CN", labs_dir)
    po = polib.pofile(str(path), wrapwidth=0)
    entry = next(e for e in po if not e.obsolete and want(e.msgid))
    entry.msgstr = "中文译文：" + " ".join(check.tokens(entry.msgid)) + _strict_terms(entry.msgid)
    po.save(str(path))
    return entry


def _strict_terms(english: str) -> str:
    table = check.terms("zh-CN")
    return "".join(zh for en, zh, strict in check.term_problems(english, "", table) if strict)


def _problems(labs_dir, lab=LAB, **kw) -> list[check.Problem]:
    return check.run("zh-CN", labs=[lab], root=labs_dir, **kw).problems


def _has_number_and_code(text: str) -> bool:
    toks = check.tokens(text)
    return any(t.startswith("`") for t in toks) and any(t[:1].isdigit() for t in toks)


def _set_english(labs_dir, lab: str, old: str, new: str) -> None:
    nb = nbformat.read(labs_dir / f"{lab}.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "markdown" and c.source == old)
    cell.source = new
    nbformat.write(nb, labs_dir / f"{lab}.ipynb")


def test_a_planted_english_edit_is_stale_until_the_catalog_is_updated_and_translated(labs_copy):
    entry = _translate_one(labs_copy, LAB, _has_number_and_code)
    assert _problems(labs_copy) == []
    _set_english(labs_copy, LAB, entry.msgid, entry.msgid + " One more sentence.")
    found = _problems(labs_copy)
    assert {p.kind for p in found} == {"stale", "missing"}, found  # the old entry, and the new cell without one
    assert any("no longer in the lab" in p.text for p in found)
    catalog.update(LAB, "zh-CN", labs_copy)  # the documented fix: the old translation becomes obsolete
    assert _problems(labs_copy) == []  # an empty translation is counted, not failed ...
    assert any(p.kind == "missing" for p in _problems(labs_copy, require_complete=True))  # ... unless required
    _translate_one(labs_copy, LAB, lambda text: text == entry.msgid + " One more sentence.")
    assert _problems(labs_copy, require_complete=False) == []


def test_a_planted_changed_number_fails_until_it_is_put_back(labs_copy):
    entry = _translate_one(labs_copy, LAB, _has_number_and_code)
    number = next(t for t in check.tokens(entry.msgid) if t[:1].isdigit())
    path = catalog.catalog_path(LAB, "zh-CN", labs_copy)
    po = polib.pofile(str(path), wrapwidth=0)
    planted = next(e for e in po if e.msgid == entry.msgid)
    planted.msgstr = planted.msgstr.replace(number, number + "9")
    po.save(str(path))
    found = _problems(labs_copy)
    assert [p.kind for p in found] == ["token"] and number in found[0].text, found
    planted.msgstr = planted.msgstr.replace(number + "9", number)
    po.save(str(path))
    assert _problems(labs_copy) == []


def test_a_lost_code_span_and_a_wrong_hash_fail(labs_copy):
    entry = _translate_one(labs_copy, LAB, _has_number_and_code)
    span = next(t for t in check.tokens(entry.msgid) if t.startswith("`"))
    path = catalog.catalog_path(LAB, "zh-CN", labs_copy)
    po = polib.pofile(str(path), wrapwidth=0)
    planted = next(e for e in po if e.msgid == entry.msgid)
    planted.msgstr = planted.msgstr.replace(span, span.strip("`"))
    planted.comment = planted.comment[:-4] + "0000"
    po.save(str(path))
    kinds = sorted(p.kind for p in _problems(labs_copy))
    assert kinds == ["stale", "token"], kinds


def test_a_planted_missing_message_fails_until_extract_puts_it_back(labs_copy):
    path = labs_copy / "i18n" / "zh-CN" / "messages.po"
    po = polib.pofile(str(path), wrapwidth=0)
    gone = next(e for e in po if e.msgid == "well done.")
    po.remove(gone)
    po.save(str(path))
    report = check.Report()
    check.check_messages("zh-CN", report, root=labs_copy)
    assert [(p.kind, "well done." in p.where) for p in report.problems] == [("missing", True)]
    po.append(polib.POEntry(msgctxt="check", msgid="well done.", msgstr=""))
    po.save(str(path))
    report = check.Report()
    check.check_messages("zh-CN", report, root=labs_copy)
    assert [p.text for p in report.problems] == ["no translation"]
    po.find("well done.", msgctxt="check").msgstr = "做得好。"
    po.save(str(path))
    report = check.Report()
    check.check_messages("zh-CN", report, root=labs_copy)
    assert report.problems == []


def test_a_translation_has_no_placeholder_its_english_lacks(labs_copy):
    path = labs_copy / "i18n" / "zh-CN" / "messages.po"
    po = polib.pofile(str(path), wrapwidth=0)
    entry = po.find("you chose {0}, but {1}", msgctxt="check")
    entry.msgstr = "你选了 {0}，但 {2}"
    po.save(str(path))
    report = check.Report()
    check.check_messages("zh-CN", report, root=labs_copy)
    assert [p.kind for p in report.problems] == ["field"]


def test_terms_strict_ones_fail_the_others_warn():
    table = check.terms("zh-CN")
    english = "Bind every page to one snapshot; the search was truncated."
    problems = check.term_problems(english, "把每一页绑定到同一个 snapshotId；检索被截断了。", table)
    assert problems == [("snapshot", "快照", True)]
    assert check.term_problems(english, "把每一页绑定到同一个快照；检索被截断了。", table) == []
    soft = check.term_problems("The search was truncated.", "检索被切短了。", table)
    assert soft == [("truncated", "截断", False)]
    # a field in code is not the word: `truncated` needs no 截断
    assert check.term_problems("`truncated` is true.", "`truncated` 为 true。", table) == []
    # the longest term first: "snapshot drift" asks for 快照漂移, not also for a second 快照
    assert check.term_problems("snapshot drift", "快照漂移", table) == []


def test_a_strict_term_missing_from_a_translation_fails_the_lab(labs_copy):
    entry = _translate_one(
        labs_copy, "04-snapshot-drift", lambda t: re.search(r"\bsnapshot\b", check.CODE_SPAN.sub(" ", t)) is not None
    )
    assert _problems(labs_copy, "04-snapshot-drift") == []
    path = catalog.catalog_path("04-snapshot-drift", "zh-CN", labs_copy)
    po = polib.pofile(str(path), wrapwidth=0)
    planted = next(e for e in po if e.msgid == entry.msgid)
    planted.msgstr = planted.msgstr.replace("快照", "snapshot")
    po.save(str(path))
    assert [p.kind for p in _problems(labs_copy, "04-snapshot-drift")] == ["term"]


def test_the_glossary_is_generated_from_the_term_base(labs_copy):
    from labkit.course.i18n import glossary

    assert glossary.problems(labs_copy) == []
    terms = labs_copy / "i18n" / "zh-CN" / "terms.tsv"
    terms.write_text(terms.read_text("utf-8") + "worktree\t工作树\t000\n", encoding="utf-8")
    assert len(glossary.problems(labs_copy)) == 2  # both editions
    for path, text in glossary.expected(labs_copy).items():
        path.write_text(text, encoding="utf-8")
    assert glossary.problems(labs_copy) == []
    assert "| worktree | 工作树 |" in (labs_copy / "GLOSSARY.md").read_text("utf-8")
    assert "| 工作树 | worktree |" in (labs_copy / "i18n" / "zh-CN" / "GLOSSARY.md").read_text("utf-8")


def test_the_real_tree_has_no_drift():
    """Stale entries, lost tokens, missing messages, the glossary: none (empty translations are not failed
    here: they are while the translators work; CI passes --require-complete)."""
    report = check.run("zh-CN")
    assert report.problems == [], [str(p) for p in report.problems[:8]]


# -- the starters ---------------------------------------------------------------------------------


def test_a_chinese_starter_shares_every_code_cell_and_translates_the_prose(labs_copy, tmp_path):
    from labkit.course.starter import make_starter, write_starters

    entry = _translate_one(labs_copy, LAB, _has_number_and_code)
    # One other cell left untranslated: it falls back to its English.
    path = catalog.catalog_path(LAB, "zh-CN", labs_copy)
    po = polib.pofile(str(path), wrapwidth=0)
    blank = next(e for e in po if not e.obsolete and e.msgid != entry.msgid)
    blank.msgstr = ""
    po.save(str(path))
    edition.translations.cache_clear()
    table = {e.msgid: e.msgstr for e in po if not e.obsolete and e.msgstr}
    write_starters(tmp_path / "en", lang="en")
    write_starters(tmp_path / "zh", lang="zh-CN")
    en = nbformat.read(tmp_path / "en" / f"{LAB}.ipynb", as_version=4)
    zh = nbformat.read(tmp_path / "zh" / f"{LAB}.ipynb", as_version=4)
    assert (
        edition.shared_code(zh)
        == edition.shared_code(en)
        == edition.shared_code(make_starter(labfiles.read_lab(LAB), LAB))
    )
    assert zh.cells[0].metadata["tags"] == [edition.LANG_TAG] and 'LABKIT_LANG"] = "zh-CN"' in zh.cells[0].source
    assert zh.metadata["labkit"] == {"lab": LAB, "kind": "starter", "lang": "zh-CN"}
    en_md = [c.source for c in en.cells if c.cell_type == "markdown"]
    zh_md = [c.source for c in zh.cells if c.cell_type == "markdown"]
    assert len(en_md) == len(zh_md)
    assert zh_md == [table.get(a, a) for a in en_md]  # each cell its translation, or its English
    assert (entry.msgid, entry.msgstr) in list(zip(en_md, zh_md, strict=True))
    assert (blank.msgid, blank.msgid) in list(zip(en_md, zh_md, strict=True))
    again = tmp_path / "zh2"
    write_starters(again, lang="zh-CN")
    assert (again / f"{LAB}.ipynb").read_bytes() == (tmp_path / "zh" / f"{LAB}.ipynb").read_bytes()


def test_the_starter_json_is_byte_identical_in_both_languages(tmp_path):
    outs = []
    for lang in ("en", "zh-CN"):
        work = tmp_path / lang
        work.mkdir()
        run = subprocess.run(
            [sys.executable, "-m", "labkit", "labs", "starter", "--out", "s", "--lang", lang, "--json"],
            cwd=work,
            capture_output=True,
            timeout=120,
        )
        assert run.returncode == 0, run.stderr
        outs.append(run.stdout)
    assert outs[0] == outs[1]
    human = subprocess.run(
        [sys.executable, "-m", "labkit", "labs", "starter", "--out", "s2", "--lang", "zh-CN"],
        cwd=tmp_path / "en",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert human.stdout.startswith("已写入 13 个起始版本 notebook 到 s2"), human.stdout


def test_content_is_never_translated_only_the_commands_own_words(repo, tmp_path):
    """A patch, a file's lines, a match are evidence: a context line that reads like a message stays as it is."""
    import os

    words = "all\n(none)\nstaged\nmore matches exist\n"
    repo.write("notes.txt", words + "end\n")
    repo.commit("notes")
    repo.write("notes.txt", words + "END\n")
    env = {**os.environ, "LABKIT_LANG": "zh-CN"}
    diff = subprocess.run(
        [sys.executable, "-m", "labkit", "diff", str(repo.path)], capture_output=True, text=True, env=env, timeout=120
    )
    assert diff.returncode == 0, diff.stderr
    assert "@@ -2,4 +2,4 @@ all\n (none)\n staged\n more matches exist\n-end\n+END" in diff.stdout
    assert diff.stdout.startswith("# 未暂存 diff，字节 0..")  # the header is the command's own
    found = subprocess.run(
        [sys.executable, "-m", "labkit", "search", str(repo.path), "more matches exist"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert "notes.txt:4: more matches exist" in found.stdout and "引擎找到 1 条匹配" in found.stderr


# -- the instructor notes -------------------------------------------------------------------------


def test_the_chinese_instructor_notes_are_generated_and_current():
    """labs/i18n/zh-CN/INSTRUCTOR-NOTES.md is what the generator writes from the labs, checkers and catalogs."""
    from labkit.course import instructor_notes as notes

    text = notes.render("zh-CN")
    assert notes.notes_path("zh-CN").read_text("utf-8") == text
    assert notes.problems() == []
    assert text.startswith("# 讲师笔记\n")
    for lab in labfiles.lab_names():
        assert f"## {lab}\n\n**时间。** 讲解约 " in text, lab  # each lab's own Chinese time line
    assert "(not stated)" not in text and "(●●●)" in text
    assert "- 提示 1：" in text and "- 为什么这个答案对：" in text
    assert "**来源。** 训练营课程。" in text  # a source's short name
    assert "这正是" not in text  # no checker verdict pasted in, only the messages a wrong answer gets
    assert "  - 你选了 …，但 …" in text  # a wrong answer's template, its fields as …
    assert "裸前缀匹配（训练营课程里的 startsWith）" in text  # a fix-it's mutants, in Chinese
    assert notes.render() == notes.notes_path().read_text("utf-8")  # English: the same generator, untouched


def test_a_changed_translation_makes_the_chinese_notes_stale_until_regenerated(labs_copy):
    from labkit.course import instructor_notes as notes

    assert [p.kind for p in check.run("zh-CN", root=labs_copy).problems] == []
    path = labs_copy / "i18n" / "zh-CN" / "messages.po"
    po = polib.pofile(str(path), wrapwidth=0)
    entry = po.find("- Hint 1: {0}", msgctxt="report")
    entry.msgstr = "- 第 1 级提示：{0}"
    po.save(str(path))
    messages.catalog.cache_clear()
    found = check.run("zh-CN", root=labs_copy).problems
    assert [(p.kind, p.text.split(" is out")[0]) for p in found] == [("notes", "labs/i18n/zh-CN/INSTRUCTOR-NOTES.md")]
    assert notes.main(["--check"]) == 1
    assert notes.main(["--write"]) == 0
    assert check.run("zh-CN", root=labs_copy).problems == []
    assert notes.notes_path("zh-CN") == labs_copy / "i18n" / "zh-CN" / "INSTRUCTOR-NOTES.md"  # the copy, not the tree
    assert "- 第 1 级提示：" in notes.notes_path("zh-CN").read_text("utf-8")


def test_a_code_span_the_english_wraps_is_carried_on_one_line():
    english = "checked by `labkit labs\ngrade` with the same checker"
    assert check.missing_tokens(english, "`labkit labs grade` 也用同一个检查器") == []
    assert check.missing_tokens(english, "`labkit grade` 也用同一个检查器") == ["`labkit labs\ngrade`"]
