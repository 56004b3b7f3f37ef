"""A near-zero loss within the first epoch, dated where its descent levelled off (before the loss reached the
near-zero bar): the message names both steps, so its date and its text agree (a bert-tiny summariser: dated 1320,
near 0 from 16810, at epoch 0.69)."""
from __future__ import annotations

import pandas as pd

from forensics.analyzers.zero_in_first_epoch import unless_first_epoch
from forensics.findings import Finding


def test_the_message_names_where_the_descent_levelled_off_and_where_it_reached_zero():
    found = Finding("memorization", "warning", 1320, "...", evidence={"near_zero_step": 16810})
    metrics = {"epoch": pd.Series([0.05, 0.69, 0.99], index=[1320, 16810, 24000])}
    told = unless_first_epoch(found, metrics)
    assert told.kind == "zero_loss_unexplained"
    assert "from step 16810 (its descent levelled off from step 1320)" in told.message


def test_one_dated_where_it_reached_zero_names_that_step_alone():
    found = Finding("memorization", "warning", 16810, "...", evidence={"near_zero_step": 16810})
    metrics = {"epoch": pd.Series([0.05, 0.69, 0.99], index=[1320, 16810, 24000])}
    assert "levelled off" not in unless_first_epoch(found, metrics).message
