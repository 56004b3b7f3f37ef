"""The timeline merge: vocabulary, attempts, abandoned rows, de-duplication across sources."""
import math

import numpy as np
import pandas as pd
import pytest

from forensics.timeline import LogRecords, build_timeline, canonical_metric, step_from_name


def frame(steps, metric, values, wall=None):
    n = len(steps)
    return pd.DataFrame({
        "step": np.asarray(steps, dtype="int64"),
        "metric": [metric] * n,
        "value": np.asarray(values, dtype="float64"),
        "wall_time": np.asarray(wall if wall is not None else [math.nan] * n, dtype="float64"),
    })


@pytest.mark.parametrize("raw, expected", [
    ("train/loss", "loss"), ("loss", "loss"), ("eval/loss", "eval_loss"), ("eval_loss", "eval_loss"),
    ("lr", "learning_rate"), ("train/learning_rate", "learning_rate"), ("train/grad_norm", "grad_norm"),
    ("train/train_loss", "train_loss"), ("test/accuracy", "test_accuracy"), ("rewards/chosen", "rewards/chosen"),
])
def test_canonical_metric_maps_every_source_to_one_vocabulary(raw, expected):
    assert canonical_metric(raw) == expected


def test_float32_tensorboard_copy_of_a_trainer_state_point_is_one_point():
    values = [3.4, 2e-05, math.nan, math.inf]
    ts = LogRecords("ts.json", "trainer_state", frame([1, 2, 3, 4], "loss", values), mtime=0.0)
    tb32 = np.asarray(values, dtype="float32").astype("float64")  # what SummaryWriter stores
    tb = LogRecords("tb", "tensorboard", frame([1, 2, 3, 4], "loss", tb32, wall=[1.0, 2, 3, 4]))
    tl = build_timeline([ts, tb])
    assert len(tl.frame) == 4
    assert set(tl.frame["format"]) == {"trainer_state"}  # the full-precision copy wins
    assert tl.series("loss").loc[1] == 3.4


def test_nan_and_inf_are_kept_in_the_wide_view():
    tl = build_timeline([LogRecords("ts", "trainer_state", frame([1, 2, 3], "grad_norm", [1.0, math.nan, -math.inf]))])
    wide = tl.wide()
    assert math.isnan(wide.loc[2, "grad_norm"])
    assert wide.loc[3, "grad_norm"] == -math.inf
    assert list(wide.index) == [1, 2, 3]


@pytest.mark.parametrize("first_listed", ["later attempt", "earlier attempt"])
def test_a_resume_in_tensorboard_marks_the_replaced_steps_of_the_first_attempt_abandoned(first_listed):
    # attempt 1 logs steps 10..70 and goes NaN at 50; attempt 2 resumes from checkpoint-40 and logs 50..100.
    a1 = LogRecords("runs/a/events", "tensorboard",
                    frame([10, 20, 30, 40, 50, 60, 70], "loss", [3, 2.5, 2, 1.8, math.nan, math.nan, math.nan],
                          wall=[100, 101, 102, 103, 104, 105, 106]))
    a2 = LogRecords("runs/b/events", "tensorboard",
                    frame([50, 60, 70, 80, 90, 100], "loss", [1.7, 1.6, 1.5, 1.4, 1.3, 1.2],
                          wall=[200, 201, 202, 203, 204, 205]))
    tl = build_timeline([a2, a1] if first_listed == "later attempt" else [a1, a2])  # wall time decides
    final = tl.series("loss")
    assert list(final.index) == [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
    assert not final.isna().any()
    abandoned = tl.abandoned()
    assert sorted(abandoned["step"]) == [50, 60, 70]
    assert abandoned["value"].isna().all()
    seg = [s for s in tl.segments if s.source == "runs/a/events"][0]
    assert seg.abandoned and seg.abandoned_from_step == 50


def test_a_step_going_backwards_inside_one_file_starts_a_new_segment():
    rec = LogRecords("log", "stdout", frame([1, 2, 3, 4, 3, 4, 5], "loss", [5, 4, 3, 9, 2.9, 2.8, 2.7]))
    tl = build_timeline([rec])
    assert len(tl.segments) == 2
    assert tl.series("loss").loc[4] == 2.8
    assert tl.abandoned()["step"].tolist() == [3, 4]


def test_checkpoint_copies_of_log_history_collapse_into_the_newest_file():
    hist = [4.0, 3.0, 2.0, 1.5, 1.2, 1.1]
    ck2 = LogRecords("checkpoint-2/trainer_state.json", "trainer_state", frame([1, 2], "loss", hist[:2]),
                     meta={"global_step": 2}, mtime=1000.0)
    ck4 = LogRecords("checkpoint-4/trainer_state.json", "trainer_state", frame([1, 2, 3, 4], "loss", hist[:4]),
                     meta={"global_step": 4}, mtime=1000.5)
    root = LogRecords("trainer_state.json", "trainer_state", frame([1, 2, 3, 4, 5, 6], "loss", hist),
                      meta={"global_step": 6}, mtime=1001.0)
    tl = build_timeline([ck2, ck4, root])
    assert len(tl.frame) == 6
    assert not tl.frame["abandoned"].any()
    assert set(tl.frame["source"]) == {"trainer_state.json"}


def test_a_checkpoint_from_an_abandoned_attempt_keeps_its_divergent_rows_as_abandoned():
    # attempt 1 saved checkpoint-6 (NaN from step 5) and crashed; attempt 2 resumed from step 4, saved checkpoint-5.
    old = LogRecords("checkpoint-6/trainer_state.json", "trainer_state",
                     frame([1, 2, 3, 4, 5, 6], "loss", [4, 3, 2, 1.5, 0.0, 0.0]), meta={"global_step": 6}, mtime=100.0)
    new = LogRecords("checkpoint-5/trainer_state.json", "trainer_state",
                     frame([1, 2, 3, 4, 5], "loss", [4, 3, 2, 1.5, 1.4]), meta={"global_step": 5}, mtime=900.0)
    tl = build_timeline([old, new])
    assert tl.series("loss").tolist() == [4, 3, 2, 1.5, 1.4]
    assert sorted(tl.abandoned()["step"]) == [5, 6]


def test_empty_input_gives_an_empty_timeline():
    tl = build_timeline([])
    assert len(tl) == 0 and tl.wide().empty and tl.segments == []


@pytest.mark.parametrize("name, step", [
    ("checkpoint-3600", 3600), ("ckpt-12", 12), ("ckpt_12", 12), ("global_step500", 500), ("step_7", 7),
    ("checkpoint-10.safetensors", 10), ("final", None), ("model.safetensors", None),
])
def test_step_from_name(name, step):
    assert step_from_name(name) == step
