"""A training history a script dumped as JSON (ingest.json_history): `json.dump(trainer.state.log_history, f)`, or a
summary with a `history` list of log entries, as course notebooks save them."""
from __future__ import annotations

import json

import forensics
from forensics.ingest import json_history
from forensics.discover.run import discover


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


def test_the_shapes_scripts_dump_their_losses_in_are_read(tmp_path):
    """Five `loss_history.json` of batch AE1, each its own shape: a list of [step, train, val] rows (CollinPhipps), a
    list of {step, train_loss, dev_loss} dicts (jaipkapoor99), parallel lists {steps, train, val} (pranjalidatascience)
    and {train, val} without steps (ARUN18), a bare list of per-step losses (shivansh-arch)."""
    shapes = {
        "rows": [[200 * i, 6.0 - i / 10, 6.1 - i / 12] for i in range(1, 11)],
        "dicts": [{"step": 250 * i, "train_loss": 5.2 - i / 10, "dev_loss": 5.1 - i / 10, "learning_rate": 1e-3}
                  for i in range(1, 11)],
        "columns": {"steps": [100 * i for i in range(10)], "train": [5.0 - i / 10 for i in range(10)],
                    "val": [5.1 - i / 10 for i in range(10)]},
        "no_steps": {"train": [5.0 - i / 10 for i in range(10)], "val": [5.1 - i / 5 for i in range(5)]},
        "bare": [4.7 - i / 10 for i in range(10)],
    }
    for name, data in shapes.items():
        folder = tmp_path / name
        folder.mkdir()
        (folder / "loss_history.json").write_text(json.dumps(data))
        frame = json_history.read(folder / "loss_history.json").frame
        assert (frame["metric"] == "loss").sum() == 10, name
        assert (frame["metric"] == "eval_loss").sum() == (0 if name == "bare" else 5 if name == "no_steps" else 10), name
    frame = json_history.read(tmp_path / "no_steps" / "loss_history.json").frame
    assert list(frame.loc[frame["metric"] == "eval_loss", "step"]) == [2, 4, 6, 8, 10]  # each interval's end


def test_a_bare_list_of_numbers_is_a_loss_history_only_where_the_file_says_so(tmp_path):
    (tmp_path / "scores.json").write_text(json.dumps([0.5, 0.6, 0.7]))
    assert json_history.history_of(json.loads((tmp_path / "scores.json").read_text())) is None
    (tmp_path / "trainer_state.json").write_text(json.dumps({"global_step": 120, "log_history": _entries()}))
    assert discover(tmp_path).json_histories == []


def _pprinted(entries) -> str:
    """A history as pprint writes it into a text file: single quotes, each dict broken over lines."""
    import pprint
    return pprint.pformat(entries, width=40, sort_dicts=False)


def test_a_log_history_pprinted_into_a_text_file_is_read_as_the_trainers_history(tmp_path):
    """NguyenTuoc2807_Financial-Numerical-Reasoning's experiments/log.txt: `pprint(trainer.state.log_history)`, each
    dict over five lines, the closing train_runtime summary last; a NaN loss is printed `nan`."""
    entries = _entries() + [{"train_runtime": 13816.2, "train_samples_per_second": 0.785,
                             "train_steps_per_second": 0.098, "train_loss": 0.25, "epoch": 1.0, "step": 120}]
    entries[5]["loss"] = float("nan")
    (tmp_path / "log.txt").write_text(_pprinted(entries))
    assert "'loss': nan" in (tmp_path / "log.txt").read_text()
    assert [p.name for p in discover(tmp_path).json_histories] == ["log.txt"]
    records = json_history.read(tmp_path / "log.txt")
    losses = records.frame.loc[records.frame["metric"] == "loss"]
    assert list(losses["step"]) == list(range(10, 130, 10)) and losses["value"].isna().sum() == 1
    analysis = forensics.analyze(tmp_path)
    assert analysis.run_profile.framework == "hf_trainer"


def test_a_text_log_that_only_opens_with_a_printed_history_stays_a_console(tmp_path):
    """A console whose first lines are a printed list of dicts but which goes on with other lines is no literal: it
    stays a text log (its dict lines read as the console reader reads them)."""
    text = _pprinted(_entries(3)) + "\nstep 40 loss 2.0\nstep 50 loss 1.9\nstep 60 loss 1.8\n"
    (tmp_path / "train.log").write_text(text)
    layout = discover(tmp_path)
    assert layout.json_histories == [] and [p.name for p in layout.text_logs] == ["train.log"]


def _epoch_rows(first_key="epoch"):
    """LogSentinel's checkpoints/training_log.json rows (Lukas1121_LogSentinel): one a epoch, the losses named by
    their split."""
    losses = [(3.11806149800871, 1.1473038909064621), (0.9727402964549182, 1.040628087745995),
              (0.905336828010247, 1.2028592698463874), (0.9156282127045563, 1.2891), (0.863, 0.990), (0.711, 0.822)]
    return [{first_key: i, "train_loss": t, "val_loss": v, "val_perplexity": 2.718281828 ** v,
             "elapsed_s": 367.41709423065186} for i, (t, v) in enumerate(losses, 1)]


def test_a_list_of_epoch_rows_with_split_named_losses_is_found_whatever_its_name(tmp_path):
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "training_log.json").write_text(json.dumps(_epoch_rows(), indent=2))
    assert [p.name for p in discover(tmp_path).json_histories] == ["training_log.json"]
    frame = json_history.read(tmp_path / "checkpoints" / "training_log.json").frame
    assert frame.loc[frame["metric"] == "loss", "value"].iloc[0] == 3.11806149800871
    assert frame.loc[frame["metric"] == "eval_loss", "value"].iloc[2] == 1.2028592698463874


def test_a_list_of_records_with_a_train_loss_but_no_step_or_epoch_is_not_a_history(tmp_path):
    """A sweep's results (one record a configuration) is no run's history: without a step or an epoch in its first
    record, a list with a `train_loss` stays unread."""
    rows = [{"lr": lr, "train_loss": 0.5 + lr, "val_loss": 0.6 + lr} for lr in (1e-4, 3e-4, 1e-3)]
    (tmp_path / "sweep_results.json").write_text(json.dumps(rows))
    (tmp_path / "training_log.json").write_text(json.dumps(_epoch_rows(first_key="model_id")))
    assert discover(tmp_path).json_histories == []


def test_a_dict_of_per_epoch_lists_opening_with_train_loss_is_found_whatever_its_name(tmp_path):
    """XiaoMuSWW_Chinese-Chatbot-Based-on-Transformer's checkpoints/history.json: `{"train_loss": [5.14, 3.97, ...],
    "val_loss": [...], "val_ppl": [...]}` (the sniff's `train_losses?` asked for 'train_losse' before)."""
    history = {"train_loss": [5.141844131409642, 3.9746144536799606, 3.6899518532384836],
               "val_loss": [4.1, 3.8, 3.7], "val_ppl": [60.3, 44.7, 40.4]}
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "history.json").write_text(json.dumps(history, indent=2))
    assert [p.name for p in discover(tmp_path).json_histories] == ["history.json"]


def test_a_list_of_epoch_rows_whose_first_row_nests_dicts_is_found(tmp_path):
    """Amara-ch_dialogue-bug-localization's checkpoints/history.json: each epoch row holds its split losses and dicts
    of ranking scores (`"train": {"top1": 0.27, ...}`); the first row is read whole, nested dicts and all."""
    rows = [{"epoch": i, "train_loss": 0.51 - 0.01 * i, "val_loss": 0.37 - 0.01 * i,
             "train": {"top1": 0.27, "mrr": 0.49}, "val": {"top1": 0.83, "mrr": 0.9}} for i in range(1, 6)]
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "history.json").write_text(json.dumps(rows, indent=2))
    assert [p.name for p in discover(tmp_path).json_histories] == ["history.json"]


def test_a_dict_of_lists_opening_with_another_key_is_still_not_a_history(tmp_path):
    (tmp_path / "results.json").write_text(json.dumps({"train_accuracy": [0.5, 0.6], "val_loss": [1.0, 0.9]}))
    assert discover(tmp_path).json_histories == []
