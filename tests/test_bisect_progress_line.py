"""Tests of bisect's progress line (checkpoints/bisection.py, cli.py).

From the day-14 review of the report's text. The bisect search runs over CheckpointRefs with a probe that answers
from a list."""
from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from forensics.checkpoints.bisection import BinarySearch
from forensics.checkpoints.types import CheckpointInfo, CheckpointRef
from forensics.cli import cli


SAMPLE_RUNS = Path(__file__).resolve().parents[1] / "sample_runs"


def _refs(n: int) -> list[CheckpointRef]:
    return [CheckpointRef(f"checkpoint-{10 * i}", 10 * i, Path(f"/run/checkpoint-{10 * i}"), ())
            for i in range(1, n + 1)]


def _search(verdicts: dict[int, str], n: int) -> list[str]:
    """The progress messages of a search over n checkpoints whose status by step is `verdicts` (default ok)."""
    messages: list[str] = []

    def check(ref: CheckpointRef) -> CheckpointInfo:
        return CheckpointInfo(ref, verdicts.get(ref.step, "ok"))

    BinarySearch(_refs(n), check, messages.append).run()
    return messages


def test_each_bisect_probe_says_which_of_how_many_at_most():
    messages = _search({s: "nonfinite" for s in range(130, 330, 10)}, 32)  # first bad: checkpoint-130
    assert messages[0] == "probe 1 of 7 at most: checkpoint-320 (step 320): bad"  # 2 ends + ceil(log2(31)) halvings
    assert messages[1] == "probe 2 of 7 at most: checkpoint-10 (step 10): ok"
    assert [int(m.split()[1]) for m in messages] == list(range(1, len(messages) + 1)) and len(messages) <= 7


def test_an_unreadable_checkpoint_raises_the_most_probes_by_one():
    messages = _search({40: "unreadable", 30: "unreadable", 20: "nonfinite", 10: "ok"}, 4)
    assert [m.split(":")[0] for m in messages] == ["probe 1 of 4 at most", "probe 2 of 4 at most",
                                                   "probe 3 of 4 at most", "probe 4 of 4 at most"]


def test_bisect_says_no_progress_when_stderr_is_not_a_terminal():
    run = SAMPLE_RUNS / "qwen1_names"
    result = CliRunner().invoke(cli, ["bisect", str(run / "ckpt-15"), str(run / "ckpt-30")])
    assert result.exit_code == 1 and "probe" not in result.stderr
