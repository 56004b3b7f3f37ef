"""A paste of Trainer dict lines that carry no step, numbered 1, 2, 3 ... by the reader, is not the run's first step
because it is the paste's first line: "non-finite before any update" (the first step's loss computed on the weights as
loaded) is said only where the lines themselves show their first one at the run's start (a learning rate of 0, a
warm-up that climbs from 0 to it in one of its own steps, an epoch within one of its own spacings of 0).

Audit of the causes against the runs' own data (session 30): SY-Xuan_Pink_issue6 (the learning rate 1.214e-4 at the
first line, rising 7.14e-6 a line: about 17 lines into its warm-up) and Time-MoE_issue31 (the first line at epoch
0.54, 0.013 a line) were told "Non-finite before any update: ... the first step's loss and gradient are computed on
the weights as loaded" and "It was NaN from the start"."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

import forensics
from tests.test_causes import by_id

CORPUS = Path(__file__).parent / "realworld"


def _console(folder: Path, lines: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    text = "\n".join("{" + ", ".join(f"'{k}': {v!r}" if not isinstance(v, float) or v == v else f"'{k}': nan"
                                     for k, v in line.items()) + "}" for line in lines)
    (folder / "train.log").write_text(text + "\n")
    return folder


def _causes(folder: Path) -> dict:
    return by_id(forensics.analyze(folder, check_checkpoints=False).causes)


def _before_any_update(found: dict) -> bool:
    return "sudden_break" in found and "before any update" in found["sudden_break"].title


NAN = float("nan")


def test_a_paste_whose_warm_up_began_lines_before_it_is_not_said_to_break_before_any_update(tmp_path):
    """SY-Xuan's shape: loss 0.0 and grad_norm NaN at every line, the rate climbing 7.14e-6 a line from 1.214e-4."""
    lines = [{"loss": 0.0, "grad_norm": NAN, "learning_rate": 1.2142857e-4 + i * 7.142857e-6, "epoch": 0.0}
             for i in range(13)]
    found = _causes(_console(tmp_path / "run", lines))
    assert not _before_any_update(found), found.get("sudden_break")
    assert "NaN from the start" not in found["masked_nan_loss"].suggestion, found["masked_nan_loss"].suggestion
    assert "no_warmup" not in found, found["no_warmup"].evidence
    # the NaN began before the paste did, at a rate it does not show: its first line's rate is not the one judged
    assert "lr_too_high" not in found, found["lr_too_high"].title


def test_a_paste_that_starts_past_half_an_epoch_is_not_said_to_break_before_any_update(tmp_path):
    """Time-MoE issue 31's shape: a constant rate, the first line at epoch 0.54 and 0.013 of an epoch a line."""
    lines = [{"loss": 0.0, "grad_norm": NAN, "learning_rate": 5e-05, "epoch": round(0.54 + 0.013 * i, 2)}
             for i in range(10)]
    found = _causes(_console(tmp_path / "run", lines))
    assert not _before_any_update(found), found.get("sudden_break")
    assert "NaN from the start" not in found["masked_nan_loss"].suggestion, found["masked_nan_loss"].suggestion
    assert "lr_too_high" not in found, found["lr_too_high"].title


def test_a_paste_whose_rate_stands_still_is_not_told_it_had_no_warm_up(tmp_path):
    """shibing624 MedicalGPT issue 252's shape: a paste of lines at the rate 1.05e-7 (a warm-up's first value the
    scheduler never moved from) and epoch 0.01 at every line: nothing shows its first line at the run's start."""
    lines = [{"loss": 0.0, "learning_rate": 1.0533e-07, "epoch": 0.01} for _ in range(11)]
    lines.insert(5, {"eval_loss": NAN, "eval_runtime": 2366.0, "epoch": 0.01})
    found = _causes(_console(tmp_path / "run", lines))
    assert "no_warmup" not in found, found["no_warmup"].evidence


def test_a_paste_whose_first_line_has_the_rate_at_0_still_breaks_before_any_update(tmp_path):
    """Guard, OpenBMB MiniCPM-V issue 212's shape: the first line at learning rate 0.0 is the run's first step."""
    lines = [{"loss": 1.0778 if i == 0 else 0.0, "grad_norm": NAN, "learning_rate": 0.0 if i == 0 else 1.3e-7 * i,
              "epoch": 0.0} for i in range(11)]
    assert _before_any_update(_causes(_console(tmp_path / "run", lines)))


def test_a_paste_whose_warm_up_climbs_from_0_to_its_first_line_still_breaks_before_any_update(tmp_path):
    """Guard, hiyouga LlamaFactory issue 4031's shape: the rate 6.67e-8 at the first line, 6.67e-8 more a line."""
    lines = [{"loss": 2.6257 if i == 0 else 0.0, "grad_norm": NAN, "learning_rate": 6.6666667e-8 * (i + 1),
              "epoch": round(0.07 * (i + 1), 2)} for i in range(6)]
    assert _before_any_update(_causes(_console(tmp_path / "run", lines)))


def test_a_log_shaped_warm_up_from_0_is_not_traced_back_past_the_start(tmp_path):
    """Guard, DeepSpeed WarmupLR's default (warmup_type "log"): the rate max x log(step + 1) / log(warmup_num_steps)
    from 0, 1.00e-5, 1.59e-5, 2.01e-5 ... rises less each line; read as a straight line back from its first two it
    would begin 1.7 lines before the first, so the run's first lines were told they were a paste from mid-run."""
    rates = [1e-4 * math.log(i + 2) / math.log(1000) for i in range(10)]
    lines = [{"loss": 2.61 if i == 0 else 0.0, "grad_norm": NAN, "learning_rate": rate,
              "epoch": round(0.01 * (i + 1), 2)} for i, rate in enumerate(rates)]
    assert _before_any_update(_causes(_console(tmp_path / "run", lines)))


def test_a_log_whose_steps_are_its_own_is_read_at_its_word(tmp_path):
    """Guard: a log that prints its steps (here a trainer_state.json) starting at step 1 starts with the run."""
    import json
    rows = [{"loss": 0.0, "grad_norm": NAN, "learning_rate": 1.2e-4 + s * 7e-6, "epoch": 0.0, "step": s}
            for s in range(1, 14)]
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": rows, "global_step": 13}))
    assert _before_any_update(_causes(folder))


@pytest.mark.parametrize("case, before", [("SY-Xuan_Pink_issue6", False), ("Time-MoE_Time-MoE_issue31", False),
                                          ("OpenBMB_MiniCPM-V_issue212", True),
                                          ("hiyouga_LlamaFactory_issue4031", True)])
def test_the_corpus_pastes_say_before_any_update_only_where_their_lines_show_the_start(case, before):
    assert _before_any_update(_causes(CORPUS / case)) is before


def test_a_log_is_numbered_by_order_only_where_every_part_of_it_was():
    """The one reading of a reader's `step_inferred` text that stdout's note and log_start's check both use."""
    from forensics.ingest.console_steps import BY_ORDER, numbered_by_order
    assert numbered_by_order(f"{BY_ORDER}from the first dict") and numbered_by_order(f"{BY_ORDER}a; {BY_ORDER}b")
    assert not numbered_by_order(f"{BY_ORDER}a; position x logging_steps (10), as stated")
    assert not numbered_by_order("") and not numbered_by_order(None)
