"""The report in a real browser: headless Chromium renders it, nothing fails, nothing executes.

Two views of each page:
* the page as written, screenshotted (saved under tests/artifacts/) with Chromium's console
  logged to stderr: any console message (a script, a CSP violation, a failed load) fails the test;
* a test-only copy with a harness <script> put first in <head> (and the page's CSP removed, so
  the harness may run and escaping alone must keep the payloads inert). The harness records
  alert/confirm/prompt calls, script errors, failed loads, every request that is not a data:
  URI, every <img> that did not decode, scripts and on* attributes, and writes them as JSON into
  the DOM, which `--dump-dom` prints.
A negative control runs the harness on a page with the payloads left unescaped: it must catch them.
"""
from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from forensics.report import render_bisect_html, render_html
from test_report_runs import HOSTILE, bisect_result, broken_analysis, hostile_analysis

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
ARTIFACTS = Path(__file__).parent / "artifacts"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (Debian: apt-get install chromium)"),
]

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--hide-scrollbars"]

HARNESS = """<script>
(function () {
  var h = window.__harness = {calls: [], errors: []};
  ['alert', 'confirm', 'prompt', 'print', 'open'].forEach(function (name) {
    window[name] = function (m) { h.calls.push(name + ':' + m); };
  });
  window.addEventListener('error', function (e) {
    var t = e.target;
    h.errors.push(t && t !== window ? 'failed to load ' + t.tagName + ' ' + (t.src || t.href || '')
                                    : 'script error ' + e.message);
  }, true);
  window.addEventListener('load', function () {
    var handlers = [];
    document.querySelectorAll('*').forEach(function (el) {
      Array.prototype.forEach.call(el.attributes, function (a) {
        if (a.name.indexOf('on') === 0) handlers.push(el.tagName + '.' + a.name);
      });
    });
    var result = {
      calls: h.calls, errors: h.errors, handlers: handlers,
      scripts: document.scripts.length,
      images: Array.prototype.map.call(document.images, function (i) {
        return {id: i.id, ok: i.complete && i.naturalWidth > 0}; }),
      requests: performance.getEntriesByType('resource').map(function (r) { return r.name; })
                 .filter(function (n) { return n.indexOf('data:') !== 0; })
    };
    var out = document.createElement('pre');
    out.id = 'harness-result';
    out.textContent = JSON.stringify(result);
    document.body.appendChild(out);
  });
})();
</script>"""

_CSP = re.compile(r'<meta http-equiv="Content-Security-Policy"[^>]*>')


def chromium(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
    cmd = [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def console_messages(stderr: str) -> list[str]:
    """Chromium's `--enable-logging=stderr` writes each console message as a CONSOLE line."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def screenshot(page_html: str, name: str, tmp_path: Path) -> Path:
    """Render the page as written, save a screenshot artifact, fail on any console message."""
    ARTIFACTS.mkdir(exist_ok=True)
    page, shot = ARTIFACTS / f"{name}.html", ARTIFACTS / f"{name}.png"
    page.write_text(page_html, encoding="utf-8")
    shot.unlink(missing_ok=True)
    proc = chromium(["--enable-logging=stderr", "--v=0", f"--screenshot={shot}", "--window-size=1200,3000",
                     page.resolve().as_uri()], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert console_messages(proc.stderr) == []
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return shot


def harness_result(page: str, tmp_path: Path) -> dict:
    """Load a copy of the page with the harness first in <head>; return what the harness saw."""
    assert page.count("<head>") == 1
    copy = tmp_path / "harness.html"
    copy.write_text(_CSP.sub("", page).replace("<head>", "<head>" + HARNESS, 1), encoding="utf-8")
    proc = chromium(["--dump-dom", "--virtual-time-budget=5000", copy.as_uri()], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = re.search(r'<pre id="harness-result">(.*?)</pre>', proc.stdout, re.S)
    assert found, "the harness did not report (page did not load?)"
    return json.loads(html.unescape(found.group(1)))


def assert_inert_and_complete(result: dict, image_ids: list[str]) -> None:
    assert result["calls"] == []          # no payload called alert & co.
    assert result["errors"] == []         # no script error, no failed load (an injected img src=x would fail)
    assert result["requests"] == []       # nothing fetched but data: URIs
    assert result["handlers"] == []       # no on* attribute anywhere
    assert result["scripts"] == 1         # the harness itself, nothing else
    assert [i["id"] for i in result["images"]] == image_ids
    assert all(i["ok"] for i in result["images"]), result["images"]


def test_broken_run_report_renders_with_all_images(tmp_path):
    page = render_html(broken_analysis(), bisect=bisect_result())
    screenshot(page, "report_broken", tmp_path)
    assert_inert_and_complete(harness_result(page, tmp_path), ["main-plot", "damage-plot", "bisect-plot"])


def test_hostile_report_executes_nothing(tmp_path):
    page = render_html(hostile_analysis())
    screenshot(page, "report_hostile", tmp_path)
    assert_inert_and_complete(harness_result(page, tmp_path), ["main-plot", "damage-plot"])


def test_bisect_page_renders(tmp_path):
    page = render_bisect_html(bisect_result())
    screenshot(page, "bisect", tmp_path)
    assert_inert_and_complete(harness_result(page, tmp_path), ["bisect-plot"])


def test_harness_catches_unescaped_payloads(tmp_path):
    """Negative control: the same checks on a page that does NOT escape the payloads must fail."""
    page = f"<!DOCTYPE html><html><head><title>t</title></head><body><p>{HOSTILE}</p></body></html>"
    result = harness_result(page, tmp_path)
    assert "alert:1" in result["calls"]
    assert result["scripts"] == 2
    assert any(e.startswith("failed to load IMG") for e in result["errors"])
    assert result["handlers"] == ["IMG.onerror"]
    with pytest.raises(AssertionError):
        assert_inert_and_complete(result, [])
