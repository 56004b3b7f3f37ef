"""Printed dicts whose training loss goes by a name that says how it was taken (`average_training_loss`), with no
plain `loss` key: a hand-written loop's per-epoch `print(dict)` (minhchuxuan_GloVe_TextSumm's result/training_log.txt,
`{'epoch': '12', 'checkpoint_loss': X, 'average_training_loss': X, 'validation_loss': V, 'learning_rate': lr}`).
Such a dict is a training record, so it is dated as one (its position), not piled onto step 0 with the eval dicts.
The HF Trainer's closing summary (`train_loss` beside `train_runtime`, the mean over the run) and a held-out or other
loss term (`val_avg_loss`, `aux_loss`) are no training loss.
"""
from __future__ import annotations

from support.format_runs import analyze_logs, write_file

EPOCHS = 30


def _epoch_dicts(epoch_quoted: bool = True, train_name: str = "average_training_loss") -> str:
    """`Total epochs processed: N` then one dict an epoch: training loss 6.1 -> ~2.3, validation 4.6 -> ~2.6."""
    out = [f"Total epochs processed: {EPOCHS}", ""]
    for e in range(1, EPOCHS + 1):
        train = 2.2 + 3.9 / e ** 1.1 + (0.01 if e % 2 else -0.01)
        val = 2.5 + 2.1 / e ** 1.2
        epoch = f"'{e}'" if epoch_quoted else str(e)
        out.append(f"{{'epoch': {epoch}, 'checkpoint_loss': {train:.4f}, '{train_name}': {train:.4f}, "
                   f"'validation_loss': {val:.4f}, 'learning_rate': {1e-4 / e:.3g}}}")
    return "\n".join(out) + "\n"


def test_average_training_loss_dicts_are_a_training_series(tmp_path):
    """The 30 dicts are 30 training points at steps 1..30 (quoted epochs or not), the validation loss beside each;
    a loss and held-out loss falling to the end is healthy."""
    for quoted in (True, False):
        run = tmp_path / f"q{quoted}"
        a = analyze_logs(write_file(run, "result/training_log.txt", _epoch_dicts(epoch_quoted=quoted)))
        loss = a.timeline.series("loss")
        assert list(loss.index) == list(range(1, EPOCHS + 1))
        assert loss.iloc[0] > 6.0 and loss.iloc[-1] < 2.4
        assert len(a.timeline.series("eval_loss")) == EPOCHS
        assert a.status == "healthy", (a.status, a.first_incident)


def test_a_held_out_or_other_loss_term_is_no_training_loss(tmp_path):
    """The same dicts with `val_avg_loss` (a held-out mean) or `aux_loss` (another term) in place of the training
    loss: no loss series is made of them."""
    for name in ("val_avg_loss", "aux_loss"):
        run = tmp_path / name
        a = analyze_logs(write_file(run, "result/training_log.txt", _epoch_dicts(train_name=name)))
        assert "loss" not in a.timeline.metrics, name


def test_the_trainer_closing_summary_train_loss_stays_its_own(tmp_path):
    """A Trainer console: loss dicts, then the closing summary `{'train_runtime': ..., 'train_loss': 1.8, ...}`: the
    summary's mean over the run is not read as one more training loss."""
    lines = [str({"loss": round(2.5 - 0.04 * s, 4), "grad_norm": 1.0, "learning_rate": 1e-4,
                  "epoch": round(s / 30, 2)}) for s in range(1, 31)]
    lines.append(str({"train_runtime": 120.5, "train_samples_per_second": 8.0, "train_steps_per_second": 0.25,
                      "train_loss": 1.87, "epoch": 1.0}))
    a = analyze_logs(write_file(tmp_path, "train.log", "\n".join(lines) + "\n"))
    loss = a.timeline.series("loss")
    assert len(loss) == 30 and abs(loss.iloc[-1] - 1.3) < 1e-6
    assert "train_loss" in a.timeline.metrics


def test_an_average_a_script_adds_to_the_trainers_eval_dict_is_no_training_loss(tmp_path):
    """Jinyeop3110_Post_Training_Protein_LLM's Trainer subclass adds `token_avg_loss` to every dict, its evaluations'
    too (`{'eval_loss': 3.39, 'eval_runtime': ..., 'token_avg_loss': 3.59, ...}`): the eval dict stays an evaluation,
    no training loss at its step."""
    lines = [str({"loss": round(17.4 - 0.1 * k, 4), "grad_norm": 1.0, "learning_rate": 1e-4, "token_avg_loss":
                  round(4.4 - 0.025 * k, 4), "epoch": round(k / 60, 2)}) for k in range(1, 31)]
    lines.insert(25, str({"eval_loss": 3.39, "eval_runtime": 364.8, "token_avg_loss": 3.5897, "epoch": 0.42}))
    a = analyze_logs(write_file(tmp_path, "training_log.txt", "\n".join(lines) + "\n"))
    loss = a.timeline.series("loss")
    assert len(loss) == 30 and float(loss.min()) > 10
    assert len(a.timeline.series("eval_loss")) == 1


def test_such_dicts_are_no_trainers(tmp_path):
    """The renamed `loss` beside `epoch` and `learning_rate` does not make the dicts the HF Trainer's (whose logging
    dict holds `loss` itself): the framework stays unknown."""
    a = analyze_logs(write_file(tmp_path, "result/training_log.txt", _epoch_dicts()))
    assert a.run_profile.framework == "unknown"


_TRAINER_BANNER = ("***** Running training *****\n  Num examples = 2,000\n  Num Epochs = 1\n"
                   "  Gradient Accumulation steps = 1\n  Total optimization steps = 300\n")


def _trainer_with_callback(name: str, scale: float) -> str:
    # review 29b: the Trainer's own `{'loss': ..}` every 10 steps, and a callback's `{name: .., 'epoch': ..}` every 50
    out = ""
    for s in range(10, 301, 10):
        out += str({"loss": round(2.5 - 0.005 * s, 4), "grad_norm": 1.0, "learning_rate": 1e-4,
                    "epoch": round(s / 300, 2)}) + "\n"
        if s % 50 == 0:
            out += str({name: round(scale * (2.5 - 0.005 * s) + (1.4 if scale == 1 else 0), 4),
                        "epoch": round(s / 300, 2)}) + "\n"
    return out


def test_a_callbacks_mean_loss_beside_the_trainers_loss_is_no_second_training_loss(tmp_path):
    for name, scale in (("mean_loss", 1.0), ("train_mean_loss", 4.0)):
        text = _TRAINER_BANNER + _trainer_with_callback(name, scale)
        a = analyze_logs(write_file(tmp_path / name, "train.log", text))
        loss = a.timeline.frame[a.timeline.frame.metric == "loss"]
        assert len(loss) == 30 and loss.value.iloc[-1] == 1.0, (name, loss.tail(3))
