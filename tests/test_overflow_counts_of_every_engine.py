"""DeepSpeed's overflow lines: dated by the step lines, not by a model-loading bar, and counted one by one where two
engines (a PPO's actor and critic) skip at the same step.

From gouqi666_deep-speed-chat (tests/realworld/PROVENANCE.md): DeepSpeed-Chat step 3 PPO in fp16, whose console
prints `Loading checkpoint shards`-like bars (`0/2` then `2/2`, drawn anew for each model) before training, and 13
`OVERFLOW! Rank 0 Skipping step` lines by step 100, where DeepSpeed's own progress lines count actor skipped=6 and
critic skipped=7. The tool said "1 update skipped ... at step 3" (every line dated by the bar's 2, + 1)."""
from __future__ import annotations

from pathlib import Path

from forensics.analyzers.metrics import metrics_from_rows
from forensics.analyzers.overflow import detect_loss_scale_overflow
from forensics.config import Thresholds
from forensics.ingest import stdout

CASE = Path(__file__).parent / "realworld" / "gouqi666_deep-speed-chat"
LOG = CASE / "training" / "step3_rlhf_finetuning" / "output" / "training.log"

_OVERFLOW = ("[2023-05-10 14:19:42,674] [INFO] [loss_scaler.py:181:update_scale] [deepspeed] OVERFLOW! Rank 0 "
             "Skipping step. Attempted loss scale: {old}, reducing to {new}\n")
_BARS = "  0%|          | 0/2 [00:00<?, ?it/s]100%|██████████| 2/2 [00:00<00:00, 448.64it/s]\n"


def _ppo_line(step: int) -> str:
    return (f"epoch: 0|step: {step}|ppo_ep: 1|act_loss: 1.5|cri_loss: 1.4|unsuper_loss: 0.0\n"
            "average reward score: 3.5\n" + "-" * 40 + "\n")


def _console(bars: str) -> str:
    """Bars before training, then steps 0-19 with two overflows (actor and critic) before step 0's line."""
    text = bars * 3 + "***** Running training *****\n"
    text += _OVERFLOW.format(old=65536, new=32768) + _OVERFLOW.format(old=65536, new=32768)
    return text + "".join(_ppo_line(step) for step in range(20))


def _overflow_points(text: str, tmp_path: Path):
    path = tmp_path / "training.log"
    path.write_text(text)
    frame = stdout.read(path).frame
    return metrics_from_rows(frame)["overflow"]


def test_overflows_after_loading_bars_are_dated_by_the_step_line_after_them(tmp_path):
    overflow = _overflow_points(_console(_BARS), tmp_path)
    assert list(overflow.index) == [0]


def test_two_overflows_at_one_step_are_counted_two(tmp_path):
    overflow = _overflow_points(_console(_BARS), tmp_path)
    assert overflow.loc[0] == 2.0


def test_a_training_bar_that_counts_on_still_dates_the_overflow(tmp_path):
    """The guard: a bar whose readings never go back is the training bar (n + 1 is the step being computed)."""
    text = ("***** Running training *****\n" + " 40%|████      | 4/10 [00:04<00:06, 1.00it/s]\n"
            + _OVERFLOW.format(old=65536, new=32768) + "{'loss': 1.5, 'learning_rate': 1e-05, 'epoch': 0.5}\n"
            + " 50%|█████     | 5/10 [00:05<00:05, 1.00it/s]\n")
    overflow = _overflow_points(text, tmp_path)
    assert list(overflow.index) == [5]


def test_the_real_ppo_console_says_every_skip_deepspeed_counts():
    frame = stdout.read(LOG).frame
    (found,) = detect_loss_scale_overflow(metrics_from_rows(frame), Thresholds())
    # DeepSpeed's last progress lines: actor skipped=6, critic skipped=7
    assert (found.kind, found.step, found.evidence["n_overflows"]) == ("skipped_steps", 0, 13)
    assert found.message.startswith("13 updates skipped by the fp16 loss scaler from step 0")


_PROGRESS = ("[2023-05-10 14:27:36,819] [INFO] [logging.py:96:log_dist] [Rank 0] step={step}, skipped={skipped}, "
             "lr=[6.7e-07], mom=[(0.9, 0.95)]\n")


def test_each_engines_own_count_is_kept_where_two_print_at_one_step():
    from forensics.ingest.stdout import engine_skips
    from forensics.ingest.console_scan import scan
    text = _PROGRESS.format(step=10, skipped=3) + _PROGRESS.format(step=10, skipped=7)
    assert engine_skips(scan(text)) == {"step": 10, "counts": [3, 7]}


def test_one_engines_progress_lines_give_no_engine_counts():
    """The guard: one engine printing on (steps 10, 20) is one count, which the timeline keeps."""
    from forensics.ingest.stdout import engine_skips
    from forensics.ingest.console_scan import scan
    text = _PROGRESS.format(step=10, skipped=3) + _PROGRESS.format(step=20, skipped=4)
    assert engine_skips(scan(text)) == {}


def test_the_cause_says_whose_skips_deepspeed_counted():
    import forensics
    evidence = [line for c in forensics.analyze(CASE).causes for line in c.evidence]
    assert any("DeepSpeed's own counts by step 100: actor 6, critic 7" in line for line in evidence)


def test_an_overflow_every_rank_prints_counts_once(tmp_path: Path):
    """Every rank prints the one skip (`OVERFLOW! Rank 0 ...` to `Rank 3 ...`): only the lowest rank's lines count
    (review 32d: four ranks at three steps read as 12 skips); a log of one rank only (Rank 3's) still counts its own."""
    def skips(ranks) -> float:
        text = "".join("".join(_OVERFLOW.replace("Rank 0", f"Rank {r}").format(old=65536, new=32768) for r in ranks)
                       + _ppo_line(step) for step in (1, 2, 3))
        (tmp_path / "train.log").write_text(text)
        frame = stdout.read(tmp_path / "train.log").frame
        per_step = frame[frame.metric == "overflow"].drop_duplicates("step")  # each point holds its step's count
        return float(per_step.value.sum())

    assert skips(range(4)) == 3.0 and skips([3]) == 3.0
