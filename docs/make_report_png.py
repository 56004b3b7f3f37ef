"""Make docs/report.png: a headless-Chromium screenshot of the report of a broken run.

The run is the shipped sample_runs/qwen1_names (made by the real Trainer: NaN grad_norm with loss
logged as 0.0, NaN weights in blocks transformer.h.21-23 of 24 from ckpt-30 on: incident case 4).
Run from the repository root: `python docs/make_report_png.py` (needs the `chromium` package).
"""
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

import forensics  # noqa: E402
from forensics.report import render_html  # noqa: E402

RUN = ROOT / "sample_runs" / "qwen1_names"


def main(out: Path = ROOT / "docs" / "report.png", height: int = 3200) -> None:
    chromium = shutil.which("chromium")
    if chromium is None:
        sys.exit("chromium is not installed (Debian: apt-get install chromium)")
    analysis = forensics.analyze(RUN)
    checkpoints = sorted(analysis.checkpoints, key=lambda c: c.step)
    bisect = forensics.bisect(checkpoints[0].ref.path, checkpoints[-1].ref.path)
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "report.html"
        page.write_text(render_html(analysis, bisect=bisect), encoding="utf-8")
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        "--hide-scrollbars", f"--user-data-dir={tmp}/profile", f"--screenshot={out}",
                        f"--window-size=1200,{height}", page.as_uri()], check=True, capture_output=True)
    print(f"{out}: {out.stat().st_size // 1024} KB")


if __name__ == "__main__":
    main()
