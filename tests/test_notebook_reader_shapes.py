"""Tests of the notebook reader (ingest/notebook.py) on shapes real notebooks have.

Review of the notebook reader (ingest.notebook, run._notebook_hinted): shapes real Colab / Kaggle / Jupyter
notebooks have, built in tmp_path. Each failing test names a misread or a crash; the passing ones at the end record
shapes that were checked and held."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import forensics
from forensics.errors import NotARunDirectory


ROOT = Path(__file__).resolve().parents[1]


# ---- builders: what Jupyter writes -------------------------------------------------------------------------------

def _write(path: Path, cells_outputs: list[list[dict]], **top) -> Path:
    cells = [{"cell_type": "code", "execution_count": i + 1, "metadata": {}, "source": "", "outputs": outs}
             for i, outs in enumerate(cells_outputs)]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5, **top},
                               indent=1, ensure_ascii=False))
    return path


def _stream(text: str, name: str = "stdout") -> dict:
    return {"output_type": "stream", "name": name, "text": text.splitlines(keepends=True)}


def _html(html: str) -> dict:
    return {"output_type": "display_data", "metadata": {},
            "data": {"text/html": html.splitlines(keepends=True), "text/plain": ["<IPython.core.display.HTML object>"]}}


def _trainer_table(header: list[str], rows: list[list], progress: str, value: int, maximum: int) -> dict:
    """transformers utils/notebook.py NotebookProgressCallback's display (progress bar, then text_to_html_table)."""
    html = (f"\n    <div>\n      \n      <progress value='{value}' max='{maximum}' style='width:300px; height:20px; "
            f"vertical-align: middle;'></progress>\n      {progress}\n    </div>\n"
            "    <table border=\"1\" class=\"dataframe\">\n  <thead>\n <tr style=\"text-align: left;\">\n")
    html += "".join(f"      <th>{c}</th>\n" for c in header) + "    </tr>\n  </thead>\n  <tbody>\n"
    for row in rows:
        html += "    <tr>\n" + "".join(f"      <td>{c}</td>\n" for c in row) + "    </tr>\n"
    return _html(html + "  </tbody>\n</table><p>")


def _error(ename: str, evalue: str) -> dict:
    return {"output_type": "error", "ename": ename, "evalue": evalue,
            "traceback": ["\u001b[0;31m---------------------------------------------------------------------------\u001b[0m",
                          f"\u001b[0;31m{ename}\u001b[0m                         Traceback (most recent call last)",
                          "Cell \u001b[0;32mIn[7], line 1\u001b[0m\n\u001b[0;32m----> 1\u001b[0m trainer\u001b[38;5;241m.\u001b[39mtrain()\n",
                          f"\u001b[0;31m{ename}\u001b[0m: {evalue}"]}


_SFT = ["Step", "Training Loss"]
_DPO = ["Step", "Training Loss", "rewards / chosen", "rewards / rejected", "rewards / accuracies", "rewards / margins"]


def _sft_table(steps: int = 60, every: int = 10, start: float = 2.6) -> dict:
    rows = [[s * every, f"{start - 0.02 * s:.6f}"] for s in range(1, steps + 1)]
    total = steps * every
    return _trainer_table(_SFT, rows, f"[{total}/{total} 05:00, Epoch 3/3]", total, total)


def _dicts(losses: list[float]) -> str:
    return "".join(f"{{'loss': {loss}, 'grad_norm': 1.5, 'learning_rate': 0.0002, 'epoch': {i / 40:.3f}}}\n"
                   for i, loss in enumerate(losses, 1))


def _cli(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "forensics", "analyze", str(folder)], capture_output=True, text=True,
                          cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=300)


def _live_losses(a) -> dict[int, float]:
    frame = a.timeline.frame
    rows = frame[(frame["metric"] == "loss") & ~frame["abandoned"]]
    return dict(zip(rows["step"].astype(int), rows["value"]))


# ---- misreads ------------------------------------------------------------------------------------------------------

def test_sft_then_dpo_notebook_judges_the_dpo_run_that_went_nan(tmp_path):
    """An SFT-then-DPO notebook (Unsloth / TRL tutorials): `SFTTrainer.train()` shows its table (steps 10..600), a
    later cell `DPOTrainer.train()` shows a second table (steps 10..200) whose loss is NaN from step 50. The DPO run
    is the notebook's last training and it is broken. The tool reads both tables as one console, takes the DPO
    table's restart at step 10 for a resume of the SFT run, marks the whole DPO run as the attempt 'a resume later
    threw away' and says warning (while the profile says trl / preference: it judges SFT's loss under DPO's name)."""
    dpo_rows = [[s * 10, f"{0.693 - 0.01 * s:.6f}" if s < 5 else "nan", f"{0.01 * s:.6f}", f"{-0.01 * s:.6f}",
                 f"{min(1, 0.5 + 0.05 * s):.6f}", f"{0.02 * s:.6f}"] for s in range(1, 21)]
    dpo = _trainer_table(_DPO, dpo_rows, "[200/200 05:00, Epoch 1/1]", 200, 200)
    _write(tmp_path / "sft_dpo.ipynb", [[_sft_table()], [dpo]])
    a = forensics.analyze(tmp_path)
    assert a.status == "broken"
    assert (a.first_incident.kind, a.first_incident.step) == ("nonfinite_metric", 50)
    assert "threw away" not in a.first_incident.message


def test_trial_run_then_real_run_are_not_one_series(tmp_path):
    """A short trial (`max_steps=20`, logging every step) and then the real run (600 steps, logging every 10) in the
    next cell: two trainings of a fresh model. The tool reads the real run's restart at step 10 as a resume of the
    trial and keeps the trial's steps 1..9 live in front of the real run's (steps 1..9 from one model, 10..600 from
    another: a loss jump from 2.05 at step 9 to 2.58 at step 10 that never happened). Expected: the judged series
    is the last run's 60 points (the trial an earlier attempt)."""
    trial_rows = [[s, f"{2.5 - 0.05 * s:.6f}"] for s in range(1, 21)]
    trial = _trainer_table(_SFT, trial_rows, "[20/20 00:10, Epoch 0/1]", 20, 20)
    _write(tmp_path / "train.ipynb", [[trial], [_sft_table()]])
    a = forensics.analyze(tmp_path)
    assert sorted(_live_losses(a)) == [s * 10 for s in range(1, 61)]


def test_oom_of_an_earlier_attempt_is_no_crash_of_the_run_that_finished(tmp_path):
    """The commonest Colab story: `trainer.train()` dies with `OutOfMemoryError: CUDA out of memory` at step ~55,
    the batch size is lowered and a later cell trains to 600/600. The tool says warning run_crashed 'the run stopped
    after step 600: OutOfMemoryError ...': stdout._final_crash looks for the word 'loss' after the crash, and the
    Trainer table's text copy says 'Training Loss' (capital L) and its rows hold numbers only, so any OOM before a
    table counts as the end of the run. Expected: healthy, no run_crashed."""
    partial = _trainer_table(_SFT, [[s * 10, f"{2.6 - 0.02 * s:.6f}"] for s in range(1, 6)],
                             "[ 55/600 00:30 < 05:00, 1.1 it/s, Epoch 0.27/3]", 55, 600)
    oom = _error("OutOfMemoryError", "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
                                     "14.75 GiB of which 1.06 GiB is free.")
    _write(tmp_path / "train.ipynb", [[partial, oom], [_sft_table()]])
    a = forensics.analyze(tmp_path)
    assert not [f for f in a.findings if f.kind == "run_crashed"]
    assert (a.status, a.first_incident) == ("healthy", None)


def test_evaluate_only_notebook_is_not_a_training_run(tmp_path):
    """An inference / evaluation notebook: a fine-tuned model is loaded and `trainer.evaluate()` is run once; its
    result `{'eval_loss': 0.5234, 'eval_runtime': ...}` is the cell's only output. No training ran here. The tool
    takes the notebook for a run and says warning no_learning_evidence ('no training loss was logged (logging_steps
    longer than the run?)'). Expected: no run found (NotARunDirectory)."""
    result = {"output_type": "execute_result", "execution_count": 1, "metadata": {},
              "data": {"text/plain": ["{'eval_loss': 0.5234, 'eval_runtime': 12.3, 'eval_samples_per_second': 81.2, "
                                      "'eval_steps_per_second': 10.2}"]}}
    _write(tmp_path / "inference.ipynb", [[result]])
    with pytest.raises(NotARunDirectory):
        forensics.analyze(tmp_path)


# ---- crashes on odd JSON -------------------------------------------------------------------------------------------

def test_worksheet_whose_cells_is_a_number_gives_one_line_not_a_traceback(tmp_path):
    """An nbformat-3-shaped file whose worksheet holds `"cells": 5` (a hand-edited or generated file) beside a
    training line: run._notebook_hinted iterates `w.get("cells") or []` and raises TypeError ('int' object is not
    iterable) out of `forensics analyze`."""
    line = "{'loss': 2.5, 'grad_norm': 1.5, 'learning_rate': 0.0002, 'epoch': 0.1}\n"
    (tmp_path / "run.ipynb").write_text(json.dumps({"worksheets": [{"cells": 5}], "note": line}))
    result = _cli(tmp_path)
    assert "Traceback" not in result.stderr, result.stderr[-800:]


def test_odd_html_in_a_table_output_gives_one_line_not_a_traceback(tmp_path):
    """An HTML output that holds a Trainer-like table and an SGML marked section the stdlib parser rejects
    (`<![x[ ... ]]>`, as HTML pasted from office tools carries): notebook.trainer_tables feeds it to HTMLParser,
    which raises AssertionError('unknown status keyword') out of `forensics analyze`."""
    html = ("<table><tr><th>Step</th><th>Training Loss</th></tr><tr><td>10</td><td>2.5</td></tr></table>"
            "<![x[ ignored ]]>")
    _write(tmp_path / "run.ipynb", [[_stream(_dicts([2.5 - 0.03 * i for i in range(40)])), _html(html)]])
    result = _cli(tmp_path)
    assert "Traceback" not in result.stderr, result.stderr[-800:]


def test_stray_non_utf8_byte_does_not_lose_the_whole_notebook(tmp_path):
    """A notebook with one byte that is not UTF-8 (a Latin-1 'é' in a dataset name printed by a script, then the
    file re-saved by another tool): the whole run is lost ('not UTF-8 text; not a Jupyter notebook', nothing
    readable), where the same text as train.log is read with 'bytes that are not UTF-8 were replaced'. Expected:
    the 40 losses read, the replacement named."""
    path = _write(tmp_path / "run.ipynb", [[_stream("Caf\u00e9 dataset\n" + _dicts([2.5 - 0.03 * i for i in range(40)]))]])
    path.write_bytes(path.read_bytes().replace("Caf\u00e9".encode(), b"Caf\xe9"))
    a = forensics.analyze(tmp_path)
    assert len(_live_losses(a)) == 40


# ---- shapes checked that held ----------------------------------------------------------------------------------------

def test_grpo_table_with_negative_zero_losses_is_healthy_rl(tmp_path):
    """TRL GRPO's table: `-0.000000` losses at the start, reward / kl / per-function reward columns."""
    header = ["Step", "Training Loss", "reward", "reward_std", "completions / mean_length", "kl",
              "rewards / correctness_reward_func / mean"]
    rows = [[s, "-0.000000" if s < 3 else f"{0.0001 * (s % 7):.6f}", f"{0.2 + 0.015 * s:.6f}", "0.300000", "180.5",
             f"{0.0005 * s:.6f}", f"{0.1 + 0.01 * s:.6f}"] for s in range(1, 101)]
    _write(tmp_path / "grpo.ipynb", [[_trainer_table(header, rows, "[100/100 30:00, Epoch 0/1]", 100, 100)]])
    a = forensics.analyze(tmp_path)
    assert (a.status, a.first_incident) == ("healthy", None)
    assert (a.run_profile.framework, a.run_profile.objective) == ("trl", "rl")


def test_notebook_beside_its_own_trainer_state_is_not_read_twice(tmp_path):
    """The notebook and the run's checkpoint trainer_state.json show the same 60 logging steps: 60 points, one run."""
    _write(tmp_path / "train.ipynb", [[_sft_table()]])
    history = [{"loss": round(2.6 - 0.02 * s, 4), "grad_norm": 1.1, "learning_rate": 2e-4, "epoch": s / 20,
                "step": s * 10} for s in range(1, 61)]
    ckpt = tmp_path / "out" / "checkpoint-600"
    ckpt.mkdir(parents=True)
    (ckpt / "trainer_state.json").write_text(json.dumps({"global_step": 600, "max_steps": 600, "logging_steps": 10,
                                                         "num_train_epochs": 3, "log_history": history}))
    a = forensics.analyze(tmp_path)
    frame = a.timeline.frame
    assert len(frame[frame["metric"] == "loss"]) == 60
    assert a.status == "healthy"


def test_keyboard_interrupt_is_not_a_crash(tmp_path):
    """The user stopped the cell (KeyboardInterrupt) at step 55 of 600: not a crash of the run."""
    partial = _trainer_table(_SFT, [[s * 10, f"{2.6 - 0.02 * s:.6f}"] for s in range(1, 6)],
                             "[ 55/600 00:30 < 05:00, 1.1 it/s, Epoch 0.27/3]", 55, 600)
    _write(tmp_path / "train.ipynb", [[partial, _error("KeyboardInterrupt", "")]])
    a = forensics.analyze(tmp_path)
    assert (a.status, a.first_incident) == ("healthy", None)
