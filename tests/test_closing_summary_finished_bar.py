"""A Trainer's closing summary with no step (forensics/ingest/stdout.py): dated by the finished progress bar printed
after it."""
from __future__ import annotations


from forensics.ingest import stdout


def _summary(loss: float) -> str:
    return (f"{{'train_runtime': 3.037, 'train_samples_per_second': 1.646, 'train_steps_per_second': 0.988, "
            f"'train_loss': {loss}, 'epoch': 1.0}}\n")


def test_a_closing_summary_is_dated_by_the_finished_bar_printed_after_it(tmp_path):
    # REICHIYAN_llm_ft_tinyllama: `!python train_*.py` cells of 3 steps each, only their summaries logged; the bar
    # before the second is the first run's own finished one, before the third that run's first draw `0% 0/3`
    outputs = ["Map: 100% 5/5 [00:00<00:00, 177.71 examples/s]\n" + _summary(11.1548) + "100% 3/3 [04:13<00:00, 84.50s/it]\n",
               _summary(11.1548) + "100% 3/3 [00:02<00:00,  1.28it/s]\n",
               "  0% 0/3 [00:00<?, ?it/s]`use_cache=True` is incompatible with gradient checkpointing.\n"
               + _summary(13.697) + "100% 3/3 [00:03<00:00,  1.01s/it]\n"]
    path = tmp_path / "console.txt"
    path.write_text("".join(outputs))
    frame = stdout.read_console("".join(outputs), path, []).frame
    assert frame[frame["metric"] == "train_loss"]["step"].tolist() == [3, 3, 3]
