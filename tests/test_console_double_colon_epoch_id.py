"""Hand-written loops' epoch and step lines met in corpus batch AS107: the CS224N default project's classifier.py
(`Epoch 0: train loss :: 1.540, train acc :: 0.427, dev acc :: 0.375`, a name and its number separated by `::`) and
CasEE's loop (`Epoch id: 1, Training steps: 5, ... Avg loss: 8395.2`, the epoch's index named `id` and the step
counter in the plural)."""
from __future__ import annotations

import forensics
from forensics.ingest.pretrain_lines import parse_line
from forensics.discover.run import discover

# silin3_CS224n_final_project logs/train1.log (the CFIMDB training, as printed)
_CS224N = """Training Sentiment Classifier on cfimdb...
load 1707 data from data/ids-cfimdb-train.csv
load 245 data from data/ids-cfimdb-dev.csv
save the model to cfimdb-classifier.pt
Epoch 0: train loss :: 0.740, train acc :: 0.811, dev acc :: 0.747
save the model to cfimdb-classifier.pt
Epoch 1: train loss :: 0.526, train acc :: 0.801, dev acc :: 0.792
save the model to cfimdb-classifier.pt
Epoch 2: train loss :: 0.453, train acc :: 0.903, dev acc :: 0.886
Epoch 3: train loss :: 0.297, train acc :: 0.945, dev acc :: 0.845
Epoch 4: train loss :: 0.165, train acc :: 0.982, dev acc :: 0.886
save the model to cfimdb-classifier.pt
Epoch 5: train loss :: 0.080, train acc :: 0.998, dev acc :: 0.902
Epoch 6: train loss :: 0.061, train acc :: 0.985, dev acc :: 0.865
Epoch 7: train loss :: 0.041, train acc :: 0.995, dev acc :: 0.849
Epoch 8: train loss :: 0.030, train acc :: 0.998, dev acc :: 0.861
Epoch 9: train loss :: 0.015, train acc :: 0.999, dev acc :: 0.886
Evaluating on cfimdb...
load model from cfimdb-classifier.pt
dev acc :: 0.902
"""


def test_a_name_and_its_number_separated_by_a_double_colon_are_a_pair():
    line = parse_line("Epoch 5: train loss :: 0.080, train acc :: 0.998, dev acc :: 0.902")
    assert line is not None and line.kind == "generic_epoch" and line.step == 5
    assert dict(line.metrics) == {"loss": 0.080, "accuracy": 0.998, "eval_accuracy": 0.902, "epoch": 5.0}


def test_the_cs224n_classifier_console_is_a_log_with_its_losses_and_dev_accuracy(tmp_path):
    (tmp_path / "train1.log").write_text(_CS224N)
    assert [p.name for p in discover(tmp_path).text_logs] == ["train1.log"]
    timeline = forensics.analyze(tmp_path).timeline
    assert timeline.series("loss").tolist()[-1] == 0.015 and len(timeline.series("loss")) == 10
    assert len(timeline.series("eval_accuracy")) >= 10


def test_an_evaluation_report_of_double_colon_pairs_alone_is_no_log(tmp_path):
    """The guard: the same script's evaluation-only lines (`dev acc :: 0.902`) hold no training loss."""
    (tmp_path / "eval.log").write_text("Evaluating on cfimdb...\nload model from cfimdb-classifier.pt\n"
                                       "dev acc :: 0.902\ntest acc :: 0.881\n")
    assert discover(tmp_path).text_logs == []


def test_a_cpp_scope_before_a_loss_word_is_no_pair():
    """`::` joins a C++ scope to a name (`at::native::loss`); only a name then `::` then a number is a pair."""
    assert parse_line("E1107 at::native::loss::forward 3 failed") is None


# JiaweiSheng_CasEE logs/model.log: a line every 5 steps, the steps counted over again each epoch
def _casee_lines(epochs: int = 3, steps: int = 40) -> str:
    lines = ["Batch size:  8", "The number of training instances: 9057", "Training..."]
    for epoch in range(1, epochs + 1):
        for step in range(5, steps + 1, 5):
            avg = 8395.204102 / (epoch * step)
            lines.append(f"Epoch id: {epoch}, Training steps: {step}, ED loss:{avg / 150:.6f},TE loss:{avg / 8:.6f}, "
                         f"AE loss:{avg * 0.85:.6f},  Avg loss: {avg:.6f}")
    return "\n".join(lines) + "\n"


def test_an_epoch_named_by_its_id_and_a_plural_step_counter_count_the_line():
    line = parse_line("Epoch id: 2, Training steps: 5, ED loss:53.409713,TE loss:971.626587, AE loss:7370.167773,  "
                      "Avg loss: 8395.204102")
    assert line is not None and line.kind == "generic" and line.step == 5
    assert dict(line.metrics) == {"loss": 8395.204102, "epoch": 2.0}  # ED / TE / AE losses are parts, passed over


def test_the_casee_console_is_a_log_numbered_on_across_its_epochs(tmp_path):
    (tmp_path / "model.log").write_text(_casee_lines())
    assert [p.name for p in discover(tmp_path).text_logs] == ["model.log"]
    loss = forensics.analyze(tmp_path).timeline.series("loss")
    assert len(loss) == 24 and loss.index.is_monotonic_increasing and loss.index.is_unique


def test_a_count_of_steps_in_a_summary_without_a_loss_is_no_log(tmp_path):
    """The guard: a data / config summary that counts steps and epochs by id (`Epoch id: 3, Total steps: 1133`)
    holds no loss, and stays unread."""
    (tmp_path / "summary.log").write_text("".join(f"Epoch id: {e}, Total steps: 1133, saved: model_{e}.pt\n"
                                                  for e in range(1, 6)))
    assert discover(tmp_path).text_logs == []
