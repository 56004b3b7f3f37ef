"""A hand-written loop's record under a `|`-separated step header, its values indented further down with other lines
between (karanravindra_omni's GRPO loop: `Step 1/50 | gold='72'`, four `  sample i/4: '...'` lines, tqdm's bar, then
`  rewards: [0.1, 0.1, 0.1, 0.1]` and `  loss:    -0.0000`): read as the step's records, a list of rewards as their
mean and spread; equal rewards at every step beside a loss of exactly 0 are a GRPO run with no learning signal."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics
from forensics.errors import NotARunDirectory
from forensics.ingest.console_lines.bare_epochs import has_bare_epoch_records
from forensics.discover.log_hints import log_hinted

CORPUS = Path(__file__).parent / "realworld"


def _step(n: int, total: int, rewards: list[float], loss: float) -> str:
    samples = "".join(f"  sample {i}/4: 'The answer is {i}...'\n" for i in range(1, 5))
    return (f"\nStep {n}/{total} | gold='{n * 7}'\n{samples}Training: {n}it [00:04,  4.62s/it]\n"
            f"  rewards: {rewards}\n  loss:    {loss:.4f}\n")


def test_piped_step_records_are_read_with_the_rewards_mean_and_spread(tmp_path):
    text = "Using device: cuda\n" + "".join(_step(n, 20, [0.0, 0.5, 1.0, 0.5], 0.3 - n / 100) for n in range(1, 6))
    (tmp_path / "output.txt").write_text(text)
    frame = forensics.load_timeline(tmp_path).frame
    by = {m: frame[frame["metric"] == m].sort_values("step") for m in ("loss", "reward", "step_reward_std")}
    assert list(by["loss"]["step"]) == [1, 2, 3, 4, 5]
    assert list(by["loss"]["value"]) == pytest.approx([0.29, 0.28, 0.27, 0.26, 0.25])
    assert list(by["reward"]["value"]) == pytest.approx([0.5] * 5)
    assert list(by["step_reward_std"]["value"]) == pytest.approx([0.4082483] * 5)


def test_two_piped_records_of_equal_rewards_and_a_zero_loss_are_no_learning_signal(tmp_path):
    text = "".join(_step(n, 50, [0.1, 0.1, 0.1, 0.1], -0.0) for n in (1, 2)) + "\nStep 3/50 | gold='5'\n"
    (tmp_path / "output.txt").write_text(text)
    a = forensics.analyze(tmp_path)
    assert a.status == "broken"
    assert (a.first_incident.kind, a.first_incident.step) == ("no_learning_signal", 1)


def test_rewards_that_differ_or_a_loss_that_moves_give_no_learning_signal_alarm(tmp_path):
    for rewards, loss in (([0.0, 1.0, 0.1, 0.1], -0.0), ([0.1, 0.1, 0.1, 0.1], 0.0123)):
        (tmp_path / "output.txt").write_text("".join(_step(n, 50, rewards, loss) for n in (1, 2)))
        a = forensics.analyze(tmp_path)
        assert not [f for f in a.findings if f.kind == "no_learning_signal"], (rewards, loss)


def test_one_piped_record_or_a_loss_on_the_header_is_no_such_shape(tmp_path):
    assert not has_bare_epoch_records(_step(1, 50, [0.1, 0.2], 0.5))
    one_line = "".join(f"Step {n}/50 | loss 0.5 | lr 1e-4\n  grad: 0.1\n  loss: 0.4\n" for n in range(1, 4))
    assert not has_bare_epoch_records(one_line)
    assert not log_hinted(_step(1, 50, [0.1, 0.2], 0.5).encode())
    (tmp_path / "output.txt").write_text(_step(1, 50, [0.1, 0.2], 0.5))
    with pytest.raises(NotARunDirectory):
        forensics.analyze(tmp_path)


def test_the_run_finder_finds_a_console_of_piped_step_records():
    assert log_hinted("".join(_step(n, 50, [0.1, 0.5, 0.1, 0.1], 0.01) for n in (1, 2)).encode())


def test_the_corpus_grpo_loop_that_died_sampling_is_broken_with_no_learning_signal():
    """karanravindra_omni: two steps of four equal rewards, loss -0.0000, then torch.multinomial could not sample."""
    a = forensics.analyze(CORPUS / "karanravindra_omni")
    assert a.status == "broken"
    assert (a.first_incident.kind, a.first_incident.step) == ("no_learning_signal", 1)
    (crash,) = [f for f in a.findings if f.kind == "run_crashed"]
    assert crash.step == 2 and "probability tensor" in crash.message


def test_a_list_is_read_under_its_singular_name(tmp_path):
    text = "".join(f"\nStep {n}/9 | batch {n}\n  losses: [0.5, 0.7]\n  loss: 0.6\n  accuracies: [0.5, 1.0]\n"
                   for n in (1, 2, 3))
    (tmp_path / "output.txt").write_text(text)
    metrics = set(forensics.load_timeline(tmp_path).frame["metric"])
    assert {"loss", "accuracy", "step_loss_std", "step_accuracy_std"} <= metrics and "losse" not in metrics
