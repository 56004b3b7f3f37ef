"""Keras epoch lines whose metric names are capitalised (`Loss`, `val_Loss`): read at their epochs as the
lowercase names are (forensics/ingest/console_lines, Keras epochs).

From corpus batch AS52 (Asocsar_GPT2)."""
from __future__ import annotations


from support.format_runs import analyze_logs, write_file


# --- Keras epoch lines with capitalised metric names ----------------------------------------------------------------

def _keras_console(loss: str = "Loss") -> str:
    lines = []
    for epoch in range(1, 13):
        lines += [f"Epoch {epoch}/50", f"901/901 [==============================] - 84s 93ms/step - {loss}: "
                  f"{5.0 - 0.2 * epoch:.4f} - Perplexity: inf - val_{loss}: {5.1 - 0.2 * epoch:.4f} - val_Perplexity: inf"]
    return "\n".join(lines) + "\n"


def test_capitalised_keras_metric_names_are_read_at_their_epochs(tmp_path):
    a = analyze_logs(write_file(tmp_path, "nohup.out", _keras_console("Loss")))
    assert list(a.timeline.series("loss").index) == list(range(1, 13))
    assert list(a.timeline.series("eval_loss").index) == list(range(1, 13))
    assert a.run_profile.framework == "keras"


def test_lowercase_keras_metric_names_read_as_before(tmp_path):
    a = analyze_logs(write_file(tmp_path, "nohup.out", _keras_console("loss")))
    assert list(a.timeline.series("loss").index) == list(range(1, 13)) and a.status == "healthy"
