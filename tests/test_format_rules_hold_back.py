"""Where the readers and profile rules added for one framework must hold back on another run (found by a review of
the rules): each input is shaped like a real run that is not the framework or objective the rule names."""
from __future__ import annotations

import json
import math

import pytest

from support.format_runs import analyze_logs, losses, write_file
from forensics.ingest import megatron_args, stdout
from forensics.ingest.console_lines.blocks import ComposerBlock
from forensics.ingest.pretrain_lines import parse_line
from forensics.metric_names import tracker_metric_names


def test_a_hand_written_iteration_colon_line_is_not_nanotrons(tmp_path):
    """`iteration: N / M | loss: X |` from a hand-written LoRA loop lacks nanotron's lm_loss and consumed_tokens."""
    lines = ["trainable params: 4,194,304 || all params: 6,742,609,920 || trainable%: 0.0622"]
    lines += [f"iteration: {s} / 30 | loss: {loss:.4f} | lr: 2.00e-04 | grad_norm: 0.41 |"
              for s, loss in enumerate(losses(), 1)]
    profile = analyze_logs(write_file(tmp_path, "train.log", "\n".join(lines) + "\n")).run_profile
    assert profile.framework != "nanotron" and profile.objective != "pretrain"


def _state(folder, history, config=None):
    write_file(folder, "trainer_state.json", json.dumps({"global_step": 30, "log_history": history}))
    if config:
        write_file(folder, "config.json", json.dumps(config))
    return folder


def test_finetune_in_a_classifiers_name_or_a_parent_folder_is_not_sft(tmp_path):
    history = [{"step": s, "loss": loss, "epoch": s / 30} for s, loss in enumerate(losses(), 1)]
    classifier = {"architectures": ["BertForSequenceClassification"], "model_type": "bert", "num_labels": 2}
    assert analyze_logs(_state(tmp_path / "bert_finetune_sst2", history, classifier)).run_profile.objective != "sft"
    assert analyze_logs(_state(tmp_path / "finetune" / "run7", history)).run_profile.objective == "unknown"
    assert analyze_logs(_state(tmp_path / "llama_finetune", history)).run_profile.objective == "sft"


def test_alpacafarm_preference_pairs_are_not_instruction_data(tmp_path):
    """A reward model on AlpacaFarm's human preference pairs: its data path names alpaca, its loss starts at ln 2."""
    lines = ["Loading data from data_path=./data/alpaca_human_preference.json (pairs: chosen / rejected)"]
    lines += [str({"loss": round(math.log(2) - s / 1000, 4), "learning_rate": 1e-05, "epoch": s / 30})
              for s in range(1, 31)]
    profile = analyze_logs(write_file(tmp_path, "train.log", "\n".join(lines) + "\n")).run_profile
    assert profile.objective != "sft"


def test_a_metric_null_only_at_some_steps_of_a_step_data_log_is_not_a_nan(tmp_path):
    """verl's file logger writes a NaN as null; a metric logged only every 10th step is null in between, not NaN."""
    rows = [{"step": s, "data": {"train/loss": loss, "train/lr": 1e-5, "val/loss": loss + 0.1 if s % 10 == 0 else None}}
            for s, loss in enumerate(losses(), 1)]
    analysis = analyze_logs(write_file(tmp_path, "run.jsonl", "".join(json.dumps(r) + "\n" for r in rows)))
    assert analysis.status == "healthy" and len(analysis.timeline.series("eval_loss")) == 3


@pytest.mark.parametrize("count", ["inf", "1e30", "nan", "-3"])
def test_a_composer_block_with_an_odd_batch_count_keeps_its_header_step(count):
    block = ComposerBlock()
    for line in ("[batch=7/30]:", f"\t Train time/batch: {count}", "\t Train loss/train/total: 2.1000"):
        block.feed(line)
    assert block.close().step == 7


@pytest.mark.parametrize("updates", ["99999999999999999999999", "\u00b2"])
def test_a_fairseq_valid_line_with_an_odd_update_count_is_no_record(updates):
    assert parse_line(f"valid | epoch 001 | valid on 'valid' subset | loss 2.1 | num_updates {updates}") is None


def test_lightnings_momentum_and_weight_decay_are_not_the_learning_rate():
    assert tracker_metric_names(["lr-AdamW", "lr-AdamW-momentum", "lr-AdamW-weight_decay", "lr-AdamW/pg1"]) == [
        "learning_rate", "lr-AdamW-momentum", "lr-AdamW-weight_decay", "lr-AdamW/pg1"]


def test_gpt_neox_fp16_section_of_type_bfloat16_is_bf16():
    args = megatron_args.parse_block(["-------------------- arguments --------------------",
                                      "  fp16 ............. {'enabled': True, 'type': 'bfloat16'}....updated",
                                      "---------------- end of arguments ----------------"])
    values = megatron_args.config_values(args)
    assert (values.get("fp16"), values.get("bf16")) == (False, True)


def _mlx_table(n=30):
    rows = ["  iter   train_loss     tok/s     tokens"]
    rows += [f"  {s:>4}    {loss:>5.3f} \u25bc    {210:>5,.0f}    {0.41 * s:>5.1f}k" for s, loss in enumerate(losses(n=n), 1)]
    return rows


def test_mlx_lms_table_ends_where_its_rows_do(tmp_path):
    """A small results table the script prints after mlx-lm's own (`0    0.51   arc`) is not more training rows."""
    text = "\n".join(_mlx_table() + ["", "    task   score", "0    0.51   arc", "1    0.62   hella"]) + "\n"
    analysis = analyze_logs(write_file(tmp_path, "train.log", text))
    assert analysis.status == "healthy" and len(analysis.timeline.series("loss")) == 30


def test_a_tqdm_loop_under_epoch_lines_is_not_a_keras_bar(tmp_path):
    """`Epoch 3/3` then `  100/1024 [00:31<01:10] - loss: nan - lr: 0.0003`: a hand-written loop's bar, read by the
    other readers (the NaN in epoch 3 must be seen)."""
    lines = []
    for epoch in (1, 2, 3):
        lines.append(f"Epoch {epoch}/3")
        for k in range(1, 11):
            loss = math.nan if epoch == 3 and k >= 5 else 2.5 - 0.05 * (10 * (epoch - 1) + k)
            lines.append(f"  {k * 100}/1024 [00:{k:02d}<01:10] - loss: {loss:.4f} - lr: 0.0003")
    analysis = analyze_logs(write_file(tmp_path, "train.log", "\n".join(lines) + "\n"))
    assert analysis.status == "broken"


def _keras_fit(epochs, start_loss, nan_at=None):
    out = []
    for e in range(1, epochs + 1):
        loss = math.nan if nan_at and e >= nan_at else start_loss - 0.1 * e
        out += [f"Epoch {e}/{epochs}", f"100/100 \u2501\u2501\u2501\u2501\u2501\u2501 5s 50ms/step - loss: {loss:.4f} - "
                f"val_accuracy: 0.6000 - val_loss: {start_loss - 0.08 * e:.4f}"]
    return out


def test_a_second_keras_fit_after_a_finished_one_comes_after_it(tmp_path):
    """Transfer learning: `fit` 5 epochs frozen, then unfreeze and `fit` 3 more (`Epoch 1/3` ...), NaN in the last:
    the second phase is the run's last, not an attempt a resume threw away."""
    text = "\n".join(_keras_fit(5, 2.5) + _keras_fit(3, 2.0, nan_at=3)) + "\n"
    analysis = analyze_logs(write_file(tmp_path, "train.log", text))
    assert analysis.status == "broken" and analysis.first_incident.step == 8
    assert "eval_accuracy" in analysis.timeline.metrics


def test_a_steps_counter_within_each_epoch_is_not_the_run_step(tmp_path):
    """`{'epoch': 1, 'steps': 50, 'loss': ...}` counts within an epoch: no epoch is read as an abandoned attempt."""
    lines = [str({"epoch": epoch, "steps": k * 50, "loss": round(2.5 - 0.05 * (epoch * 10 + k), 4), "lr": 0.0003})
             for epoch in range(3) for k in range(1, 11)]
    analysis = analyze_logs(write_file(tmp_path, "train.log", "\n".join(lines) + "\n"))
    assert len(analysis.timeline.series("loss")) == 30 and not analysis.timeline.abandoned().size


@pytest.mark.parametrize("line", ["[1] collection=train loss=2.3, accuracy=0.4, jax=0.4.30",
                                  "[2] collection=train loss=2.2.1, accuracy=0.4"])
def test_a_version_like_value_in_a_clu_line_is_no_number(line):
    record = parse_line(line)
    assert record is None or all(math.isfinite(v) for _, v in record.metrics)


def test_a_note_quoting_one_framework_line_is_not_a_log(tmp_path):
    """A healthy trainer_state.json beside notes.txt that quotes a line of another run: `[1200] collection=train
    loss=nan, accuracy=0.1`."""
    history = [{"step": s, "loss": loss, "epoch": s / 30} for s, loss in enumerate(losses(), 1)]
    _state(tmp_path, history)
    write_file(tmp_path, "notes.txt", "Last week's t5x run ended with\n[1200] collection=train loss=nan, accuracy=0.1\n")
    assert analyze_logs(tmp_path).status == "healthy"


def test_a_step_counted_within_each_epoch_before_a_dict_is_not_the_run_step(tmp_path):
    """slime prints `step N: {...}`; a loop's `Epoch 2 step 10: {'loss': ...}` counts within the epoch: no epoch is
    read as an abandoned attempt."""
    lines = [f"Epoch {epoch} step {k}: " + str({"loss": round(2.5 - 0.05 * (epoch * 10 + k), 4), "lr": 0.0003})
             for epoch in range(3) for k in range(1, 11)]
    analysis = analyze_logs(write_file(tmp_path, "train.log", "\n".join(lines) + "\n"))
    assert len(analysis.timeline.series("loss")) == 30 and not analysis.timeline.abandoned().size


@pytest.mark.parametrize("line", [
    "Step... (100 | Loss: 2.1, Acc: 0.5):  20%|██        | 1/5 [00:01<00:04,  1.00it/s]",  # run_mlm_flax's eval bar
    "Step... (10 | loss went up after the warm-up, Learning Rate: 5e-05)",
    "Step... (10 | Loss: [2.48], Learning Rate: 4.9e-05)",
])
def test_a_flax_like_step_line_that_is_not_the_whole_shape_is_not_read(line):
    """The Flax examples' `Step... (N | Name: X, ...)` is read whole or not at all: not its eval bar's description (no
    learning rate there either), prose, or a value that is no number."""
    assert parse_line(line) is None


def test_a_flax_line_without_a_learning_rate_is_an_evaluation():
    """run_mlm_flax's evaluation `Step... (N | Loss: X, Acc: Y)` is held-out, not more training loss."""
    record = parse_line("Step... (100 | Loss: 2.1, Acc: 0.5)")
    assert record.metrics == (("eval_loss", 2.1), ("eval_accuracy", 0.5))


def test_a_note_quoting_one_flax_or_h2o_line_is_not_found_as_a_log(tmp_path):
    """The console hints for the Flax, simpletransformers and H2O LLM Studio lines are anchored to their shapes: prose
    that mentions them (not at a line's start, no bar after the loss) is no training log."""
    note = ("We saw the loss go to nan: the log said Step... (10 | Loss: nan, Learning Rate: 5e-05).\n"
            "simpletransformers printed Running Loss: nan for a while, and H2O's train loss: nan was in logs.log.\n")
    write_file(tmp_path, "notes.txt", note)
    from forensics.discover.run import discover
    assert discover(tmp_path).text_logs == []


def test_a_lightning_metrics_csv_keeps_its_blank_cells_as_no_value(tmp_path):
    """Lightning's metrics.csv leaves the validation row's train columns blank on purpose: those blanks are no NaN
    (only a dense table's empty loss cell is pandas' NaN)."""
    rows = ["epoch,step,train_loss,val_loss"]
    for i, v in enumerate(losses(), 1):
        rows.append(f"0,{i * 10 - 1},{v},")
        if i % 10 == 0:
            rows.append(f"0,{i * 10 - 1},,{v + 0.1}")
    a = analyze_logs(write_file(tmp_path, "metrics.csv", "\n".join(rows) + "\n"))
    assert a.status == "healthy" and a.timeline.series("loss").notna().all()
    assert len(a.timeline.series("loss")) == 30


def test_a_train_folder_tensorboard_without_keras_tags_is_left_as_it_is(tmp_path):
    """Only Keras' `epoch_loss` / `batch_loss` make a `train/` folder's events a Keras callback's: another writer's
    `train/` folder keeps its steps and names."""
    pytest.importorskip("torch")
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(tmp_path / "runs" / "train"))
    for i, v in enumerate(losses(), 1):
        writer.add_scalar("loss", v, i)
    writer.close()
    a = analyze_logs(tmp_path)
    assert list(a.timeline.series("loss").index[:2]) == [1, 2]


@pytest.mark.parametrize("line", [
    "the training loss: 2.4 was where we stopped",  # prose, not lucidrains' whole-line print
    "Epoch 1 training loss: 2.4",  # some other loop's counted line, not a bare print
    "Step 10; acc: 41.0; loss: 2.3; lr: 0.001;",  # no OpenNMT-py xent field
    "{ Epoch:[  1/  1], step:[   10/   30], acc: 0.41, lr: 1e-05",  # a MindFormers-like line without a loss
    "Training epoch 0, iteration 3/10 | lr: 1e-05 | global_step: 3 |",  # NeMo 2.0's line before any loss
    "Validation perplexity: 11.2 was our best"])  # not OpenNMT-py's logger line
def test_near_misses_of_the_fmt8_shapes_are_not_their_records(line):
    record = parse_line(line)
    assert record is None or record.kind not in ("loss_print", "opennmt", "opennmt_valid", "mindformers", "nemo2"), record


def test_an_opennmt_validation_line_with_no_step_line_before_it_is_not_read(tmp_path):
    """OpenNMT-py's `Validation perplexity: P` has no step: it is placed at the step line before it, and with none
    (a note, another program's log) it is no record; a trainer_state.json beside it stays healthy."""
    history = [{"step": s, "loss": loss, "epoch": s / 30} for s, loss in enumerate(losses(), 1)]
    _state(tmp_path, history)
    write_file(tmp_path, "train.log", "".join(f"[2024-06-01 10:00:0{i},500 INFO] Validation perplexity: nan\n"
                                              for i in range(5)))
    assert analyze_logs(tmp_path).status == "healthy"
    assert stdout.read(tmp_path / "train.log").frame.empty


def test_notes_quoting_a_few_bare_loss_prints_are_not_a_log(tmp_path):
    """lucidrains' `training loss: X` is a whole line, but a notes file may quote a few: fewer than a loop's many
    are not read (a healthy trainer_state.json beside them stays healthy)."""
    history = [{"step": s, "loss": loss, "epoch": s / 30} for s, loss in enumerate(losses(), 1)]
    _state(tmp_path, history)
    write_file(tmp_path, "notes.txt", "enwik8 run, last prints:\ntraining loss: 2.1\ntraining loss: nan\n"
                                      "training loss: nan\nvalidation loss: nan\n")
    assert analyze_logs(tmp_path).status == "healthy"


@pytest.mark.parametrize("quoted", [
    "{ Epoch:[  1/  1], step:[   10/   30], loss:   nan, per_step_time: 345ms",  # MindFormers
    "[2024-06-01 10:00:00,000 INFO] Step 250/  300; acc: 41.0; ppl:   nan; xent: nan; lr: 0.00100;"])  # OpenNMT-py
def test_notes_quoting_one_mindformers_or_opennmt_line_are_not_a_log(tmp_path, quoted):
    history = [{"step": s, "loss": loss, "epoch": s / 30} for s, loss in enumerate(losses(), 1)]
    _state(tmp_path, history)
    write_file(tmp_path, "notes.txt", f"The other cluster's run ended with\n{quoted}\n")
    assert analyze_logs(tmp_path).status == "healthy"


def test_bare_loss_prints_beside_the_trainers_dicts_give_way_to_them(tmp_path):
    """A script printing `training loss: X` each batch under the Trainer's own `{'loss': ...}` lines: the dicts are
    the log, the prints (another count of steps) are not read beside them."""
    lines = []
    for i, v in enumerate(losses(), start=1):
        lines += [f"training loss: {v + 0.1}"] * 4 + [str({"loss": round(v, 4), "learning_rate": 2e-05,
                                                           "epoch": round(i / 30, 2)})]
    analysis = analyze_logs(write_file(tmp_path, "train.log", "\n".join(lines) + "\n"))
    assert len(analysis.timeline.series("loss")) == 30 and analysis.status == "healthy"


# --- fmt10: DVCLive's folder, add_scalars' split folders, DVCLive's params.yaml, `losses/total_loss` --------------


def test_a_plots_metrics_tsv_outside_dvclives_layout_is_no_dvclive_log(tmp_path):
    """`plots/metrics/*.tsv` is DVCLive's only in a `dvclive` folder or beside its metrics.json / dvc.yaml, and only
    with its `step<TAB><name>` header: elsewhere (a project's own figures folder) or with another header (a table of
    its own in a dvclive folder) the files are what they were before, tables read one by one."""
    from forensics.discover.run import discover

    rows = "".join(f"{s}\t{v}\n" for s, v in enumerate(losses(), 1))
    write_file(tmp_path / "a", "analysis/plots/metrics/loss.tsv", "step\tloss\n" + rows)
    write_file(tmp_path / "b", "dvclive/plots/metrics/loss.tsv", "step\tloss\tacc\n" + rows.replace("\n", "\t0.5\n"))
    for run in ("a", "b"):
        layout = discover(tmp_path / run)
        assert not layout.dvclive_logs and len(layout.csv_logs) == 1, layout


def test_a_loss_tag_in_a_folder_that_is_no_add_scalars_split_keeps_its_name(tmp_path):
    """add_scalars' `loss_val/` folder makes its `loss` tag the eval loss; a `loss_curve/` folder (no split) keeps its
    `loss` the loss, and another tag in `loss_val/` keeps its own name."""
    from torch.utils.tensorboard import SummaryWriter

    from forensics.ingest import tensorboard

    for folder, tag in (("loss_curve", "loss"), ("loss_val", "accuracy")):
        w = SummaryWriter(log_dir=str(tmp_path / folder))
        for i, v in enumerate(losses(), 1):
            w.add_scalar(tag, v, i)
        w.close()
    (curve,) = (tmp_path / "loss_curve").glob("events.out.tfevents.*")
    (val,) = (tmp_path / "loss_val").glob("events.out.tfevents.*")
    assert set(tensorboard.read(curve).frame["metric"]) == {"loss"}
    assert set(tensorboard.read(val).frame["metric"]) == {"accuracy"}


def test_a_dvc_projects_own_params_yaml_is_no_training_arguments(tmp_path):
    """DVCLive's params.yaml holds the Trainer's TrainingArguments (read); a DVC pipeline's params.yaml, the project's
    own parameters, gives nothing, bf16 or not."""
    from forensics.ingest.config_files import read_config_yaml

    path = tmp_path / "params.yaml"
    path.write_text("train:\n  lr: 0.001\n  batch_size: 8\nbf16: true\nlearning_rate: 0.001\n")
    assert read_config_yaml(path) == {}


def test_losses_total_loss_beside_a_loss_is_not_the_loss():
    """`losses/total_loss` is the loss only where no tag is named loss."""
    assert tracker_metric_names(["loss", "losses/total_loss"]) == ["loss", "losses/total_loss"]
