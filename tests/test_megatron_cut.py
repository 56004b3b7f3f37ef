"""A Megatron console cut part-way (analyzers.megatron_cut, ingest.megatron_end): its iteration lines stop below the
train_iters they state and no line says why. Real case: yueming-yuan_Megatron-DeepSpeed-X-MoE (tests/realworld),
'iteration 48/ 100' and nothing after, judged warning; liukeTT_Megatron-DeepSpeed-TT ends with Megatron's own line,
judged healthy."""
from __future__ import annotations

from pathlib import Path

import forensics
from forensics.ingest.megatron_end import end_line

CORPUS = Path(__file__).parent / "realworld"
_END_OF_TRAINING = "[after training is done] datetime: 2025-04-20 21:45:10"


def _line(iteration: int, total: int) -> str:
    """One line as Megatron-DeepSpeed's training_log prints it: a pre-training from scratch, its loss falling from
    about ln(50257) while the rate warms up."""
    loss = 7.6 + 3.4 * 0.97 ** iteration
    return (f" iteration {iteration:8d}/{total:8d} | consumed samples: {256 * iteration:12d} | elapsed time per "
            f"iteration (ms): 15871.9 | learning rate: {1.6e-7 * iteration:.3E} | global batch size:   256 | "
            f"lm loss: {loss:.6E} | loss scale: 2048.0 | number of skipped iterations:   0 | "
            "number of nan iterations:   0 |")


def _console(tmp_path: Path, last: int, total: int, tail: tuple[str, ...] = ()) -> Path:
    lines = [_line(i, total) for i in range(1, last + 1)] + list(tail)
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    return tmp_path


def _cut(analysis) -> list:
    return [f for f in analysis.findings if f.kind == "run_cut_short"]


def test_a_megatron_log_stopping_below_its_train_iters_without_an_end_line_is_a_cut_warning(tmp_path):
    a = forensics.analyze(_console(tmp_path, 48, 100))
    (found,) = _cut(a)
    assert (a.status, found.severity, found.step) == ("warning", "warning", 48)
    assert found.evidence["train_iters"] == 100 and "iteration 48 of its 100" in found.message


def test_megatrons_end_of_training_line_says_the_run_finished(tmp_path):
    a = forensics.analyze(_console(tmp_path, 48, 100, (_END_OF_TRAINING,)))
    assert (a.status, _cut(a)) == ("healthy", [])


def test_a_log_that_reached_its_train_iters_is_not_cut(tmp_path):
    a = forensics.analyze(_console(tmp_path, 100, 100))
    assert (a.status, _cut(a)) == ("healthy", [])


def test_the_start_of_a_long_plan_is_judged_on_what_it_did(tmp_path):
    # KungYork_Megatron-LM: 5,800 of 500,000 iterations, no end line, judged healthy
    a = forensics.analyze(_console(tmp_path, 48, 1000))
    assert (a.status, _cut(a)) == ("healthy", [])


def test_a_job_the_scheduler_cancelled_says_why_its_log_ends(tmp_path):
    # loubnabnl_nanotron-smol-cluster: SLURM cancelled the job at 10,930 of 25,533, judged healthy
    cancelled = "slurmstepd: error: *** STEP 2610.0 ON ip-26-0-147-189 CANCELLED AT 2023-03-10T09:46:31 ***"
    a = forensics.analyze(_console(tmp_path, 48, 100, (cancelled,)))
    assert (a.status, _cut(a)) == ("healthy", [])


def test_end_line_reads_megatrons_and_the_launchers_lines():
    launcher = "[2024-04-11 03:25:36,832] [INFO] [launch.py:348:main] Process 14869 exits successfully."
    assert end_line(f"{_line(10, 10)}\n{_END_OF_TRAINING}\n{launcher}\n") == launcher
    assert end_line(f"{_line(5, 10)}\n[2024-01-01 10:00:00] exiting program at iteration 5\n").endswith("iteration 5")
    assert end_line(_line(5, 10) + "\n") is None


def test_the_corpus_megatron_run_cut_at_iteration_48_of_100_is_a_warning():
    a = forensics.analyze(CORPUS / "yueming-yuan_Megatron-DeepSpeed-X-MoE")
    assert a.status == "warning" and [f.step for f in _cut(a)] == [48]


def test_the_corpus_megatron_run_that_ended_with_its_own_line_stays_healthy():
    a = forensics.analyze(CORPUS / "liukeTT_Megatron-DeepSpeed-TT")
    assert (a.status, _cut(a)) == ("healthy", [])


def test_end_line_words_inside_longer_words_before_the_real_line_are_no_end():
    # the regex's word bounds hold wherever its words first stand: `reexits successfully` is no launcher's line
    launcher = "[2024-04-11 03:25:36,832] [INFO] [launch.py:348:main] Process 14869 exits successfully."
    assert end_line(f"note: reexits successfully\n{_line(5, 10)}\n{launcher}\n") == launcher
    assert end_line(f"note: reexits successfully, xCANCELLED AT noon\n{_line(5, 10)}\n") is None
