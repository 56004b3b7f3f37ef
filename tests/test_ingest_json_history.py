"""A training history a script dumped as JSON (ingest.json_history): `json.dump(trainer.state.log_history, f)`, or a
summary with a `history` list of log entries, as course notebooks save them."""
from __future__ import annotations

import json

import forensics
from forensics.ingest import json_history
from forensics.run import discover


def _entries(n=12, with_step=True):
    return [{**({"step": 10 * i} if with_step else {}), "epoch": i / n, "loss": 2.5 - i / 10, "grad_norm": 1.2,
             "learning_rate": 1e-4} for i in range(1, n + 1)]


def test_a_dumped_log_history_is_found_and_read_with_its_steps(tmp_path):
    (tmp_path / "log_history.json").write_text(json.dumps(_entries() + [{"step": 120, "eval_loss": 1.4, "epoch": 1.0}]))
    assert [p.name for p in discover(tmp_path).json_histories] == ["log_history.json"]
    frame = json_history.read(tmp_path / "log_history.json").frame
    assert list(frame.loc[frame["metric"] == "loss", "step"]) == list(range(10, 130, 10))
    assert frame.loc[frame["metric"] == "eval_loss", "value"].tolist() == [1.4]
    assert forensics.analyze(tmp_path).learning is not None


def test_a_summary_with_a_history_list_without_steps_is_numbered_by_place(tmp_path):
    """ZukaNoPro2k5's dpo_metrics.json: run settings, then `history`: eleven {epoch, loss, chosen, rejected, gap,
    accuracy} entries and no step."""
    (tmp_path / "dpo_metrics.json").write_text(json.dumps({"beta": 0.1, "train_loss": 0.83,
                                                           "history": _entries(11, with_step=False)}))
    records = json_history.read(tmp_path / "dpo_metrics.json")
    assert sorted(set(records.frame.loc[records.frame["metric"] == "loss", "step"])) == list(range(1, 12))
    assert "place in the list" in records.meta["step_inferred"]


def test_json_files_that_hold_no_log_entries_with_a_loss_are_not_histories(tmp_path):
    (tmp_path / "data.json").write_text(json.dumps([{"instruction": "say hi", "output": "hi"}] * 5))
    (tmp_path / "results.json").write_text(json.dumps({"scores": [{"accuracy": 0.9}], "loss_type": "sigmoid"}))
    (tmp_path / "all_results.json").write_text(json.dumps({"train_loss": 0.5, "epoch": 3.0}))
    (tmp_path / "trainer_state.json").write_text(json.dumps({"global_step": 120, "log_history": _entries()}))
    assert discover(tmp_path).json_histories == []
