"""One lab in JupyterLab, in a real browser: Run All, then an ipywidgets explorer renders and follows its control.

Starts JupyterLab on a free local port with a token, drives Debian's Chromium
with Playwright (``executable_path``; Playwright cannot download its own
browsers here), runs every cell of lab 09 from the Run menu, and checks that the
deployment explorer shows its figure and that changing its hour slider
changes the figure. Skips with a reason where Chromium or Playwright is missing,
unless ``LABKIT_REQUIRE_BROWSER=1`` (``.ci/run`` sets it), which turns the skip
into a failure.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from labkit.course.labfiles import labs_dir

LAB = "09-pinned-source"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def _chromium() -> str | None:
    for candidate in (
        os.environ.get("LABKIT_CHROMIUM"),
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def _require_or_skip(reason: str) -> None:
    if os.environ.get("LABKIT_REQUIRE_BROWSER") == "1":
        pytest.fail(f"LABKIT_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture
def browser_path() -> str:
    path = _chromium()
    if path is None:
        _require_or_skip("Chromium is not installed (.ci/install-chromium installs Debian's package)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _require_or_skip("the playwright package is not installed (pip install -e '.[dev]')")
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def jupyterlab(tmp_path):
    """JupyterLab serving a folder that holds one lab; yields its base URL and token."""
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(labs_dir() / f"{LAB}.ipynb", root)
    port, token = _free_port(), "labkit-browser-test"
    env = {
        **os.environ,
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"),
    }
    env.pop("MPLBACKEND", None)
    log = open(tmp_path / "jupyterlab.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}",
            "--LabApp.news_url=",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            *(["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []),
        ],
        cwd=root,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.flush()
                pytest.fail("JupyterLab did not start:\n" + (tmp_path / "jupyterlab.log").read_text("utf-8")[-3000:])
            time.sleep(0.5)
        yield base, token
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
        log.close()


def _wait_for_idle_kernel(base: str, token: str, timeout: float = 120) -> None:
    """The notebook's kernel is up and idle (asked of the server, not read off the page)."""
    import json

    deadline = time.monotonic() + timeout
    last_error = "none"
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{base}/api/kernels?token={token}", timeout=5) as r:
                kernels = json.load(r)
        except urllib.error.HTTPError as exc:
            # jupyter_server lists a kernel that is still starting before it has a
            # ``last_activity``, and answers 500 for that moment; ask again.
            if exc.code < 500:
                raise
            last_error = f"HTTP {exc.code}"
            time.sleep(0.5)
            continue
        if kernels and all(k.get("execution_state") == "idle" for k in kernels):
            return
        time.sleep(0.5)
    pytest.fail(f"the notebook's kernel did not become idle (last server error: {last_error})")


def _output_image(page, explorer):
    img = explorer.locator(".widget-output img")
    img.first.wait_for(state="visible", timeout=60_000)
    return img.first.get_attribute("src")


@pytest.mark.notebook
@pytest.mark.slow
def test_explorer_renders_and_follows_its_slider_in_jupyterlab(browser_path, jupyterlab, tmp_path):
    from playwright.sync_api import sync_playwright

    base, token = jupyterlab
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=browser_path, headless=True, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{base}/lab/tree/{LAB}.ipynb?token={token}", timeout=120_000)
            page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=120_000)
            _wait_for_idle_kernel(base, token)
            page.locator("#jp-MainMenu").get_by_text("Run", exact=True).click()
            page.locator(".lm-Menu-content").get_by_text("Run All Cells", exact=True).click()
            # Every code cell has run when no prompt is '[ ]:' or '[*]:' any more.
            page.wait_for_function(
                """() => {
                    const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
                        .map(p => p.textContent.trim());
                    return prompts.length > 0 && prompts.every(t => /^\\[\\d+\\]:$/.test(t));
                }""",
                timeout=240_000,
            )
            errors = page.locator(
                ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr'] >> text=Traceback"
            )
            page.screenshot(path=str(tmp_path / "ran.png"))
            assert errors.count() == 0, "a cell raised in JupyterLab"
            explorer = (
                page.locator(".jp-OutputArea-output .widget-vbox").filter(has=page.locator(".widget-hslider")).first
            )
            explorer.wait_for(state="visible", timeout=60_000)
            explorer.scroll_into_view_if_needed()
            before = _output_image(page, explorer)
            assert before and before.startswith("data:image/png")
            page.screenshot(path=str(tmp_path / "before.png"))
            hour = explorer.locator(".widget-hslider").filter(has_text="hour").first
            readout = hour.locator(".widget-readout")
            old_value = readout.inner_text().strip()
            readout.click()
            page.keyboard.press("Control+A")
            page.keyboard.type("20" if old_value != "20" else "3")
            page.keyboard.press("Enter")
            page.wait_for_function(
                """([el, before]) => {
                    const img = el.querySelector('.widget-output img');
                    return img && img.getAttribute('src') !== before;
                }""",
                arg=[explorer.element_handle(), before],
                timeout=60_000,
            )
            after = _output_image(page, explorer)
            assert after != before and after.startswith("data:image/png")
            assert readout.inner_text().strip() != old_value
            page.screenshot(path=str(tmp_path / "after.png"))
        finally:
            browser.close()
