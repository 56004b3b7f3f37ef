"""Make docs/report.png: a headless-Chromium screenshot of the report of a broken run.

The run is the hand-made one of tests/test_report_runs.py (a grad_norm spike, NaN grad_norm with
loss logged as 0.0, NaN weights in blocks 9-11 of the last checkpoint, a resumed attempt).
Run from the repository root: `python docs/make_report_png.py` (needs the `chromium` package).
"""
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from forensics.report import render_html  # noqa: E402
from test_report_runs import broken_analysis, bisect_result  # noqa: E402


def main(out: Path = ROOT / "docs" / "report.png", height: int = 2300) -> None:
    chromium = shutil.which("chromium")
    if chromium is None:
        sys.exit("chromium is not installed (Debian: apt-get install chromium)")
    analysis = broken_analysis()
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "report.html"
        page.write_text(render_html(analysis, bisect=bisect_result(analysis)), encoding="utf-8")
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        "--hide-scrollbars", f"--user-data-dir={tmp}/profile", f"--screenshot={out}",
                        f"--window-size=1200,{height}", page.as_uri()], check=True, capture_output=True)
    print(f"{out}: {out.stat().st_size // 1024} KB")


if __name__ == "__main__":
    main()
