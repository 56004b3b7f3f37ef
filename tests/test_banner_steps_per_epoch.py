"""The steps an epoch makes, from the Trainer's (or Unsloth's) start-up banner: its total steps over its epochs,
unless max_steps stopped the run inside its first epoch - `Num examples = 3,346 | Num Epochs = 1 | Total steps = 30`
with a total batch of 8 is 30 steps of a 418-step epoch, not a whole epoch (the printed dicts' epochs say 0.07 by the
end). A GRPO run's batch counts completions, so where its total steps exceed examples over batch the banner's own
total stands."""
from __future__ import annotations

from forensics.ingest import stdout


def _console(tmp_path, banner: str, n: int):
    dicts = "".join(f"{{'loss': {1.0 - i / 100:.4f}, 'grad_norm': 0.5, 'learning_rate': 0.0002, 'epoch': "
                    f"{round((i + 1) / 418, 4)}}}\n" for i in range(n))
    path = tmp_path / "train.log"
    path.write_text(banner + dicts)
    return stdout.read(path)


UNSLOTH = ("==((====))==  Unsloth - 2x faster free finetuning | Num GPUs used = 1\n"
           "   \\\\   /|    Num examples = 3,346 | Num Epochs = 1 | Total steps = 30\n"
           "O^O/ \\_/ \\    Batch size per device = 2 | Gradient accumulation steps = 4\n"
           "\\        /    Data Parallel GPUs = 1 | Total batch size (2 x 4 x 1) = 8\n")


def test_max_steps_inside_the_first_epoch_keeps_the_epochs_steps(tmp_path):
    records = _console(tmp_path, UNSLOTH, 30)
    assert "418 steps per epoch" in records.meta["step_inferred"]
    assert sorted(records.frame.loc[records.frame["metric"] == "loss", "step"]) == list(range(1, 31))


def test_the_banner_total_stands_where_examples_over_batch_is_fewer_steps(tmp_path):
    grpo = UNSLOTH.replace("Total steps = 30", "Total steps = 372").replace("Num examples = 3,346", "Num examples = 1,488")
    assert stdout._steps_per_epoch(grpo) == 372.0


def test_the_steps_per_epoch_of_a_run_cut_by_max_steps():
    assert stdout._steps_per_epoch(UNSLOTH) == 418.0


def test_a_plain_banner_is_total_over_epochs():
    hf = ("***** Running training *****\n  Num examples = 1,000\n  Num Epochs = 3\n"
          "  Total train batch size (w. parallel, distributed & accumulation) = 8\n  Total optimization steps = 375\n")
    assert stdout._steps_per_epoch(hf) == 125.0
