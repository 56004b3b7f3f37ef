"""A loop's `E<e> B<b>/<N> | Loss:X Task:X Graph:X | C∇:g A∇:a | ...` step lines (forensics/ingest/console_lines/
epoch_batch_steps.py). From corpus batch AS97 (Johnny221B_latent-MAS: a latent multi-agent system on a frozen
Qwen3-4B, 233 batches an epoch, cut at E3 B131)."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics
from forensics.ingest import stdout
from forensics.ingest.pretrain_lines import parse_line

CORPUS = Path(__file__).parent / "realworld"
_LINE = ("  E2 B56/233 | Loss:0.3537 Task:0.3537 Graph:0.0000 | C∇:4.272686 A∇:0.236944 | tok:0.0s fwd:5.5s "
         "bwd:1.5s | mem:97.3GB | elapsed:33m04s eta:3h00m12s")


def test_the_step_is_the_runs_own_count_of_batches_and_the_losses_are_read():
    record = parse_line(_LINE)
    assert (record.kind, record.step) == ("epoch_batch", 289)  # 233 x (2 - 1) + 56
    metrics = dict(record.metrics)
    assert (metrics["loss"], metrics["task_loss"], metrics["graph_loss"]) == (0.3537, 0.3537, 0.0)


def test_each_modules_gradient_norm_is_kept_apart_from_the_whole_models():
    metrics = dict(parse_line(_LINE).metrics)
    assert (metrics["grad_norm_compressor"], metrics["grad_norm_adjacency"]) == (4.272686, 0.236944)
    assert "grad_norm" not in metrics


@pytest.mark.parametrize("line", ["E2 B56/233 | Loss: the task loss was 0.35",  # prose after the counter
                                  "E2 B300/233 | Loss:0.35 Task:0.35",  # a batch past its epoch's count
                                  "| E2 B56/233 | Acc:0.91 F1:0.88",  # no loss
                                  "Epoch E2 B56/233 | Loss:0.35"])
def test_lines_that_only_look_like_it_are_not_read_as_such(line):
    record = parse_line(line)
    assert record is None or record.kind != "epoch_batch"


def _log(spike_at: int | None = None, batches: int = 40, epochs: int = 3) -> str:
    text = "Total parameters: 4,296,559,120\nBatches per epoch per GPU: 40\n"
    for e in range(1, epochs + 1):
        for b in range(1, batches + 1):
            step = (e - 1) * batches + b
            loss = 0.3 + 3.0 / step + (1.2 if step == spike_at else 0.01 * (step % 3))
            text += (f"  E{e} B{b}/{batches} | Loss:{loss:.4f} Task:{loss:.4f} Graph:0.0000 | "
                     f"C∇:{0.01 + 0.001 * (step % 4):.6f} A∇:0.000100 | tok:0.0s fwd:5.5s bwd:1.0s | mem:97.3GB\n")
        mean = 0.3 + 3.0 / (e * batches)
        text += f"\n{'=' * 60}\nEpoch {e} complete | Avg Loss: {mean:.4f} | elapsed: 2m | eta: 1m\n"
    return text


def test_a_falling_console_of_these_lines_is_read_step_by_step(tmp_path: Path):
    (tmp_path / "train.log").write_text(_log())
    frame = stdout.read(tmp_path / "train.log").frame
    loss = frame[frame.metric == "loss"]
    assert sorted(loss.step.astype(int)) == list(range(1, 121))


def test_a_one_step_loss_spike_in_these_lines_is_found_at_its_step(tmp_path: Path):
    (tmp_path / "train.log").write_text(_log(spike_at=70))
    spikes = [f for f in forensics.analyze(tmp_path).findings if f.kind == "loss_spike"]
    assert [f.step for f in spikes] == [70]


def test_the_real_latent_mas_console_is_read_with_its_spike():
    """597 step lines (E1 B1 -> E3 B131): the loss 13.45 -> 0.21, its one-step jump to 1.564 at step 290 after the
    compressor's gradient norm 4.27 at 289. The fresh prefix / compressor modules over a frozen base start above any
    tokenizer's guess (13.45): no identity-start adapter's, so no start_above_uniform_guess."""
    a = forensics.analyze(CORPUS / "Johnny221B_latent-MAS")
    loss = a.timeline.series("loss")
    assert len(loss) == 597 and loss.index[-1] == 597 and loss.loc[290] == 1.5643
    assert a.timeline.series("grad_norm_compressor").loc[289] == 4.272686
    assert [f.step for f in a.findings if f.kind == "loss_spike"] == [290]
    assert not {"no_learning_evidence", "start_above_uniform_guess"} & {f.kind for f in a.findings}


# --- a console still being written: its last line (no newline after it) cut mid-write ---------------------------------

def _last_step(tmp_path: Path, last_line: str):
    (tmp_path / "train.log").write_text("".join(_LINE.replace("B56", f"B{b}") + "\n" for b in range(50, 56))
                                        + last_line)
    records = stdout.read(tmp_path / "train.log")
    rows = records.frame[records.frame.step == 289]
    return dict(zip(rows.metric, rows.value)), records.warnings


def test_a_last_line_cut_mid_loss_gives_no_loss(tmp_path: Path):
    metrics, _ = _last_step(tmp_path, "  E2 B56/233 | Loss:0.3")  # 0.3537 cut
    assert "loss" not in metrics


def test_a_last_line_cut_in_a_later_token_keeps_its_whole_losses_and_says_so(tmp_path: Path):
    metrics, warnings = _last_step(tmp_path, _LINE[:_LINE.index("Graph:") + 8])  # `Graph:0.0`, cut
    assert (metrics["loss"], metrics["task_loss"]) == (0.3537, 0.3537) and "graph_loss" not in metrics
    assert "the last line (step 289) is cut mid-write; its complete fields were kept" in warnings


def test_a_last_line_cut_inside_its_eta_still_gives_its_losses(tmp_path: Path):
    metrics, _ = _last_step(tmp_path, _LINE[:_LINE.rindex(":")])  # `eta`, cut before its colon
    assert metrics["loss"] == 0.3537


def test_a_whole_last_line_without_its_newline_is_read_whole(tmp_path: Path):
    metrics, warnings = _last_step(tmp_path, _LINE)
    assert metrics["grad_norm_adjacency"] == 0.236944 and not warnings
