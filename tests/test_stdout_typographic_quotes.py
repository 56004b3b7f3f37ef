"""Tests of the console reader (ingest/stdout.py): Trainer dicts pasted with typographic quotes.

From the day-8 reading fixes, each from a real paste the corpus holds (tests/realworld/PROVENANCE.md, batches AO2 /
AO3).

* HF Trainer dict lines pasted with typographic quotes (`{‘loss’: 1.453, ...}`, huggingface/transformers issue
  33336) are read as the plain-quoted dicts they are."""
from __future__ import annotations

from pathlib import Path

import forensics
from forensics.ingest import stdout


def _metric(frame, name: str) -> list[tuple[int, float]]:
    rows = frame[frame["metric"] == name]
    return list(zip(rows["step"].astype(int).tolist(), rows["value"].round(4).tolist()))


# ---- typographic quotes in a Trainer dict line -------------------------------------------------------------------

def _trainer_dicts(path: Path, open_q: str, close_q: str) -> Path:
    lines = []
    for i in range(12):
        loss = 1.45 + 0.015 * i
        lr = 5e-5 * (1 - 4 * (i + 1) / 63)
        keys = [f"{open_q}{k}{close_q}" for k in ("loss", "grad_norm", "learning_rate", "epoch")]
        lines.append("{" + f"{keys[0]}: {loss:.4f}, {keys[1]}: 2.5, {keys[2]}: {lr}, {keys[3]}: {0.19 * (i + 1):.2f}"
                     + "}\n")
    (path / "train.log").write_text("".join(lines), encoding="utf-8")
    return path


def test_trainer_dicts_with_typographic_single_quotes_are_read(tmp_path):
    frame = stdout.read(_trainer_dicts(tmp_path, "\u2018", "\u2019") / "train.log").frame
    assert len(_metric(frame, "loss")) == 12 and _metric(frame, "loss")[0][1] == 1.45
    a = forensics.analyze(tmp_path)
    assert a.run_profile.framework == "hf_trainer"


def test_trainer_dicts_with_typographic_double_quotes_are_read(tmp_path):
    frame = stdout.read(_trainer_dicts(tmp_path, "\u201c", "\u201d") / "train.log").frame
    assert len(_metric(frame, "loss")) == 12


def test_plain_quoted_trainer_dicts_read_as_before(tmp_path):
    frame = stdout.read(_trainer_dicts(tmp_path, "'", "'") / "train.log").frame
    assert [v for _, v in _metric(frame, "loss")] == [round(1.45 + 0.015 * i, 4) for i in range(12)]
