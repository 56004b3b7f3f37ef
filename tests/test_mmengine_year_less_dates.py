"""Tests of MMEngine lines with a year-less date: their steps.

From review day 9 (batches AP and AQ): each test fails on the code before its change; each change also has a test
where its rule must not fire. Folder names avoid the words the profile reads in a run's names."""
from __future__ import annotations

import forensics
from support.console_files import _mlx_console


# ---- change 3: mmengine's year-less date is no step count; its Epoch(train) [E][i/N] counter is ---------------------


def test_mmengine_epoch_lines_with_a_year_less_date_are_numbered_by_their_own_counter(tmp_path):
    rows = [f"10/30 22:{18 + i}:02 - mmengine - INFO - Epoch(train) [{1 + i // 5}][{(i % 5) * 100 + 100}/500]  "
            f"lr: 1.9870e-04  eta: 2:46:39  time: 2.8906  data_time: 0.0042  memory: 10762  loss: {2.7 - 0.05 * i:.4f}"
            f"  grad_norm: 3.0608" for i in range(10)]
    loss = forensics.analyze(_mlx_console(tmp_path / "run", [], rows)).timeline.series("loss")
    assert loss.index.tolist() == [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]


def test_a_count_before_a_time_is_not_read_as_a_step_but_a_count_after_one_is(tmp_path):
    rows = [f"10/30 22:18:0{i} step {i + 1}/30 loss {2.7 - 0.05 * i:.4f}" for i in range(8)]
    loss = forensics.analyze(_mlx_console(tmp_path / "run", [], rows)).timeline.series("loss")
    assert loss.index.tolist() == list(range(1, 9))


def test_mmengine_iter_lines_with_a_year_less_date_are_numbered_by_the_iteration(tmp_path):
    rows = [f"10/30 22:{18 + i}:02 - mmengine - INFO - Iter(train) [ {10 * i + 10}/2046]  lr: 1.7590e-04  "
            f"eta: 1:25:37  time: 2.9  data_time: 0.02  memory: 15266  loss: {0.7 - 0.01 * i:.4f}  grad_norm: 1.2"
            for i in range(8)]
    loss = forensics.analyze(_mlx_console(tmp_path / "run", [], rows)).timeline.series("loss")
    assert loss.index.tolist() == list(range(10, 90, 10))
