"""Tests of the memorization rule: passes read from a streaming run's progress line.

From the consoles and run texts the tool did not read, found on real runs (day 7, second batch)."""
from __future__ import annotations

from support.final_series import _analyze, _series


# ---- (4) the notebook progress table of a max_steps run on a streaming set --------------------------------------------


def _progress_table_notebook(path, steps, total, epoch_text, losses):
    """A notebook whose training cell shows the Trainer's NotebookProgressCallback display (its progress line
    `[S/S hh:mm:ss, Epoch E/N]` over a `Step | Training Loss` table), as Jupyter saves it (text/html output)."""
    import json
    rows = "".join(f"    <tr>\n      <td>{s}</td>\n      <td>{v:.6f}</td>\n    </tr>\n" for s, v in zip(steps, losses))
    html = ("\n    <div>\n      \n      <progress value='%d' max='%d' style='width:300px; height:20px; vertical-align: "
            "middle;'></progress>\n      [%d/%d 10:09:58, Epoch %s]\n    </div>\n    <table border=\"1\" class=\"dataframe\">\n"
            "  <thead>\n <tr style=\"text-align: left;\">\n      <th>Step</th>\n      <th>Training Loss</th>\n    </tr>\n"
            "  </thead>\n  <tbody>\n%s  </tbody>\n</table><p>" % (total, total, total, total, epoch_text, rows))
    cell = {"cell_type": "code", "execution_count": 7, "metadata": {}, "source": ["trainer.train()"],
            "outputs": [{"output_type": "display_data", "metadata": {},
                         "data": {"text/html": html, "text/plain": ["<IPython.core.display.HTML object>"]}}]}
    path.write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 4}))


def test_passes_from_a_streaming_runs_progress_line_make_a_near_zero_loss_memorization(tmp_path):
    """`[500/500 10:09:58, Epoch 19/9223372036854775807]` (max_steps on a streaming set: 19 passes over the data, the
    total sys.maxsize) over a Step table with no Epoch column, the loss 2.0 -> 0.02 with no evaluation: read as no
    epoch at all, the run was healthy; with 19 passes it is memorization."""
    steps = list(range(25, 525, 25))
    losses = [2.0 * 0.78 ** i for i in range(len(steps))]
    _progress_table_notebook(tmp_path / "finetune.ipynb", steps, 500, "19/9223372036854775807", losses)
    a = _analyze(tmp_path)
    assert _series(a, "epoch")[500] == 19.0
    assert a.status == "warning" and a.first_incident.kind == "memorization", [(f.kind, f.step) for f in a.findings]
