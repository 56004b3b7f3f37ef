"""trainer_state.json reader on files written the way TrainerState.save_to_json writes them."""
from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from forensics.errors import UnreadableFile
from forensics.ingest import trainer_state

TrainerState = pytest.importorskip("transformers.trainer_callback").TrainerState


def _save(path, history, **fields):
    """Exactly TrainerState.save_to_json: json.dumps(asdict, indent=2, sort_keys=True) + newline."""
    state = TrainerState(log_history=history, **fields)
    path.write_text(json.dumps(dataclasses.asdict(state), indent=2, sort_keys=True) + "\n")
    return path


def _train(step, loss, grad=1.0):
    return {"loss": loss, "grad_norm": grad, "learning_rate": 2e-5 * step, "epoch": step / 10, "step": step}


def _values(frame, metric):
    rows = frame[frame["metric"] == metric]
    return rows["step"].tolist(), rows["value"].tolist()


def test_train_eval_and_summary_entries_with_nan_tokens(tmp_path):
    history = [_train(s, 2.0 / s) for s in range(1, 5)]
    history += [_train(5, 0.0, math.nan), _train(6, 0.0, math.inf), _train(7, 0.0, -math.inf)]
    history.append({"eval_loss": math.nan, "eval_runtime": 1.5, "eval_samples_per_second": 10.0,
                    "eval_steps_per_second": 1.25, "epoch": 0.7, "step": 7})
    history.append({"train_runtime": 12.5, "train_samples_per_second": 4.0, "train_steps_per_second": 0.5,
                    "total_flos": 1234, "train_loss": 0.0, "epoch": 0.7, "step": 7})
    path = _save(tmp_path / "trainer_state.json", history, global_step=7, max_steps=7, logging_steps=1,
                 best_model_checkpoint="out/checkpoint-5", train_batch_size=4)
    assert "NaN" in path.read_text() and "-Infinity" in path.read_text()
    rec = trainer_state.read(path)
    steps, loss = _values(rec.frame, "loss")
    assert steps == [1, 2, 3, 4, 5, 6, 7] and loss == [2.0, 1.0, 2.0 / 3, 0.5, 0.0, 0.0, 0.0]
    _, grad = _values(rec.frame, "grad_norm")
    assert math.isnan(grad[4]) and grad[5] == math.inf and grad[6] == -math.inf
    assert _values(rec.frame, "eval_loss")[0] == [7] and math.isnan(_values(rec.frame, "eval_loss")[1][0])
    assert _values(rec.frame, "train_loss") == ([7], [0.0])
    assert _values(rec.frame, "train_runtime") == ([7], [12.5])
    assert _values(rec.frame, "total_flos") == ([7], [1234.0])
    assert rec.meta["global_step"] == 7 and rec.meta["logging_steps"] == 1 and rec.meta["max_steps"] == 7
    assert rec.meta["best_model_checkpoint"] == "out/checkpoint-5" and rec.meta["train_batch_size"] == 4
    assert rec.frame["wall_time"].isna().all() and rec.frame["step"].dtype == np.int64


def test_rows_in_file_order_and_every_numeric_key_kept(tmp_path):
    history = [{"loss": -0.25, "rewards/chosen": 1.5, "logps/rejected": -80.0, "step": 1, "epoch": 0.1},
               {"loss": -0.0, "rewards/chosen": 2.5, "logps/rejected": -90.0, "step": 2, "epoch": 0.2,
                "note": "text", "flag": True, "nested": {"a": 1}}]
    rec = trainer_state.read(_save(tmp_path / "trainer_state.json", history))
    got = list(zip(rec.frame["step"], rec.frame["metric"], rec.frame["value"]))
    # sort_keys=True puts each entry's keys in alphabetical order; strings, bools, dicts are no metric
    assert got == [(1, "epoch", 0.1), (1, "logps/rejected", -80.0), (1, "loss", -0.25), (1, "rewards/chosen", 1.5),
                   (2, "epoch", 0.2), (2, "logps/rejected", -90.0), (2, "loss", -0.0), (2, "rewards/chosen", 2.5)]
    assert math.copysign(1.0, got[6][2]) == -1.0


def test_old_file_without_steps_and_newer_keys(tmp_path):
    doc = {"epoch": 1.0, "global_step": 30, "max_steps": 30, "logging_steps": 10,
           "log_history": [{"loss": 3.0, "learning_rate": 1e-4, "epoch": 0.33},
                           {"loss": 2.0, "learning_rate": 1e-4, "epoch": 0.66},
                           {"eval_loss": 2.5, "epoch": 0.66},
                           {"loss": 1.0, "learning_rate": 1e-4, "epoch": 1.0}]}
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps(doc))
    rec = trainer_state.read(path)
    assert _values(rec.frame, "loss")[0] == [10, 20, 30]
    assert _values(rec.frame, "eval_loss")[0] == [20]
    assert "position" in rec.meta["step_inferred"]
    assert "best_model_checkpoint" not in rec.meta


def test_epoch_going_backwards_after_a_resume_is_kept_as_written(tmp_path):
    history = [_train(s, 1.0) for s in (1, 2, 3)] + [dict(_train(s, 2.0), epoch=0.05 * s) for s in (2, 3, 4)]
    rec = trainer_state.read(_save(tmp_path / "trainer_state.json", history))
    assert _values(rec.frame, "loss")[0] == [1, 2, 3, 2, 3, 4]


@pytest.mark.parametrize("content, reason", [
    (b'{"log_history": [{"loss": 1.0, "st', "invalid JSON"),
    (b"\xff\xfe\x00garbage", "invalid JSON"),  # a UTF-16 BOM, then no JSON
    (b"[1, 2, 3]", "not an object"),
    (b'{"log_history": {"loss": 1}}', "not a list"),
])
def test_bad_files_raise_unreadable(tmp_path, content, reason):
    path = tmp_path / "trainer_state.json"
    path.write_bytes(content)
    with pytest.raises(UnreadableFile, match=reason):
        trainer_state.read(path)


def test_empty_log_history_gives_empty_frame(tmp_path):
    rec = trainer_state.read(_save(tmp_path / "trainer_state.json", [], global_step=0))
    assert rec.frame.empty and list(rec.frame.columns) == ["step", "metric", "value", "wall_time"]


def test_state_cut_mid_write_is_read_to_its_last_complete_entry(tmp_path):
    """A run still writing: 60 entries saved, the file ends inside entry 51 -> 50 read, one warning."""
    history = [{"epoch": k / 60, "grad_norm": 1.0 + k / 100, "learning_rate": 2e-5, "loss": 3.0 - k / 40,
                "step": k} for k in range(1, 61)]
    full = tmp_path / "full.json"
    _save(full, history, global_step=60, max_steps=60, logging_steps=1, epoch=1.0)
    text = full.read_text()
    entry_51 = text.index('"step": 51')
    path = tmp_path / "trainer_state.json"
    path.write_text(text[:entry_51 + 5])  # part-way through entry 51
    rec = trainer_state.read(path)
    loss = rec.frame[rec.frame["metric"] == "loss"]
    assert loss["step"].tolist() == list(range(1, 51))
    assert loss["value"].tolist() == [3.0 - k / 40 for k in range(1, 51)]
    assert list(rec.warnings) == ["cut mid-write (the run may still be writing it): read its 50 complete "
                                    "log_history entries"]
    assert rec.meta["global_step"] == 60 and rec.meta["epoch"] == 1.0  # keys before log_history
    assert "max_steps" not in rec.meta  # written after log_history: lost with the tail


def test_state_damaged_part_way_is_read_to_the_damage_and_said_damaged_not_cut(tmp_path):
    """Bytes that are no JSON between entries 50 and 51 of a file that ends whole (with its closing brace): the 50
    entries before are read, and the warning does not tell the user the run may still be writing
    (scripts/cut_corpus_copies.py's bad_utf8 and overwrite variants)."""
    history = [{"loss": 3.0 - k / 40, "step": k} for k in range(1, 61)]
    full = tmp_path / "full.json"
    _save(full, history, global_step=60, max_steps=60, logging_steps=1)
    raw = full.read_bytes()
    at = raw.rindex(b"{", 0, raw.index(b'"step": 51'))  # where entry 51 opens
    path = tmp_path / "trainer_state.json"
    path.write_bytes(raw[:at] + b"\xff\xfe#" + raw[at:])
    rec = trainer_state.read(path)
    assert rec.frame[rec.frame["metric"] == "loss"]["step"].tolist() == list(range(1, 51))
    (note,) = [w for w in rec.warnings if "log_history" in w]
    assert note.startswith("damaged part-way") and "50 complete log_history entries" in note
    assert "still be writing" not in note


def test_state_cut_before_any_complete_entry_is_unreadable(tmp_path):
    full = tmp_path / "full.json"
    _save(full, [{"loss": 1.0, "step": 1}], global_step=1)
    text = full.read_text()
    path = tmp_path / "trainer_state.json"
    path.write_text(text[:text.index('"step": 1')])
    with pytest.raises(UnreadableFile, match="the file may be cut"):
        trainer_state.read(path)
