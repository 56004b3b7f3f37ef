"""A loss in a tqdm bar's description (forensics/ingest/pretrain_lines.py, stdout.py): read at the bar's count, beside
the held-out report a loop prints.

From AS68's misses: a loop that puts its loss in the tqdm bar's description (`pbar.set_description(f"batch loss
{loss:.3f}")`) beside one `Epoch: 1, Test Loss: X, Acc: Y` line a run (shambhavikris_Reward_Alignment)."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics
from forensics.errors import NotARunDirectory
from forensics.ingest import stdout
from forensics.ingest.pretrain_lines import parse_line
from forensics.discover.log_hints import log_hinted

CORPUS = Path(__file__).parent / "realworld"


_BAR = "██████████"


def _console(text: str) -> list[dict]:
    return stdout.read_console(text, Path("console.log"), []).frame.to_dict("records")


def _values(rows: list[dict]) -> dict:
    return {(row["step"], row["metric"]): row["value"] for row in rows}


def test_a_loss_in_the_bars_description_is_read_at_the_bars_count():
    rows = _console(f"batch loss 0.702: 100%|{_BAR}| 2000/2000 [04:19<00:00,  7.72it/s]\n")
    assert _values(rows) == {(2000, "loss"): 0.702}


def test_a_held_out_report_beside_the_bar_is_kept_with_its_accuracy_held_out_too():
    rows = _console(f"batch loss 0.731: 100%|{_BAR}| 2000/2000 [04:17<00:00,  7.77it/s]\n"
                    "Epoch: 1, Test Loss: 0.6713375449180603, Acc: 0.5771812200546265\n")
    assert _values(rows) == {(2000, "loss"): 0.731, (2000, "eval_loss"): 0.6713375449180603,
                             (2000, "eval_accuracy"): 0.5771812200546265}


def test_a_bar_named_for_a_held_out_split_is_the_evaluations_loss():
    """AananthV_Pytorch-Transformer: `Epoch: 1 Average Val Batch Loss: 0.1206: 100%|...| 1081/1081`."""
    record = parse_line(f"Epoch: 1 Average Val Batch Loss: 0.1205718625099101: 100%|{_BAR}| 1081/1081 "
                        "[01:15<00:00, 14.38it/s]")
    assert record.kind == "tqdm_postfix" and dict(record.metrics) == {"epoch": 1.0, "eval_loss": 0.1205718625099101}


def test_a_description_that_counts_its_own_steps_stays_read_by_that_count():
    """BeyonderXX_TRACE_issue5: `Epoch 1, Step 0, Loss: 0.9741:   1%|...| 2/144`, the bar one ahead of the step."""
    record = parse_line("Epoch 1, Step 0, Loss: 0.9741:   1%|▏         | 2/144 [00:02<02:20,  1.01it/s]")
    assert (record.kind, record.step) == ("generic", 0)


def test_a_bar_described_without_a_loss_is_no_record():
    assert _console(f"Map: 100%|{_BAR}| 2000/2000 [00:01<00:00, 1500.00it/s]\n"
                    f"Loading checkpoint shards: 100%|{_BAR}| 2/2 [00:04<00:00,  2.10s/it]\n") == []


def test_two_prose_lines_without_a_bar_are_still_left_out():
    assert _console("step 30 loss nan, then we switched to bf16\nepoch 2 loss 1.3 looked fine after that\n") == []


# --- a console of such bars is found as a training log (log_hints) ----------------------------------------------------

def _described_redraws(n: int) -> str:
    """An own loop's `pbar.set_description(f"Training loss: {mean:.2e} lr: {lr:.2e}")` bar, redrawn in place (`\\r`,
    the outer epoch bar's ESC[A), as dgjun32_Unlikelihood-training-BART-for-text-summarization's nohup.out holds it."""
    draws = "".join(f"\rTraining loss: {3.0 - 0.02 * i:.2e} lr: 5.65e-05:   0%|          | {i}/10000 "
                    f"[00:{i:02d}<2:29:24,  1.11it/s]\x1b[A" for i in range(1, n + 1))
    return "Loaded pretrained model and tokenizer\nTraining......\n" + draws


def test_a_console_of_described_bars_is_found_and_read(tmp_path):
    (tmp_path / "nohup.out").write_bytes(_described_redraws(40).encode())
    a = forensics.analyze(tmp_path)
    loss = a.timeline.series("loss")
    assert (len(loss), loss.index[0], loss.index[-1]) == (40, 1, 40)
    assert loss.iloc[-1] == pytest.approx(2.2)
    assert a.timeline.series("learning_rate").iloc[0] == pytest.approx(5.65e-05)


def test_the_kobart_unlikelihood_console_is_read_to_its_last_redraw():
    a = forensics.analyze(CORPUS / "dgjun32_Unlikelihood-training-BART-for-text-summarization")
    loss = a.timeline.series("loss")
    assert (len(loss), loss.index[-1], loss.iloc[0], loss.max(), loss.iloc[-1]) == (62, 62, 0.228, 6.93, 2.69)
    assert a.status == "warning"


@pytest.mark.parametrize("text", [
    # bars described without a number after the loss's name, or with no description at all
    "".join(f"\rTraining:   {i}%|          | {i}/100 [00:{i:02d}<00:10,  1.11it/s]" for i in range(1, 30)),
    "".join(f"\rComputing loss:   {i}%|          | {i}/100 [00:{i:02d}<00:10,  1.11it/s]" for i in range(1, 30)),
    # prose naming a loss and a percentage, no bar
    "The training loss: 2.3 fell 40% in the first epoch, see the bar chart | below.\n" * 5,
])
def test_bars_with_no_loss_number_in_their_description_are_not_a_training_log(tmp_path, text):
    (tmp_path / "nohup.out").write_text(text)
    assert not log_hinted(text.encode())
    with pytest.raises(NotARunDirectory):
        forensics.analyze(tmp_path)
