"""How often does flat noise pass `fall_measure`'s falling-line tests? The false rate behind `LOWEST_END_POINTS`.

    python bench/lowest_end_trend.py                  # 4..20 points, 20,000 seeded logs each
    python bench/lowest_end_trend.py --trials 100000 --lengths 6 10 14

Each log is independent Gaussian noise about a flat level of 1 (sd 0.03, a few percent: what a loss's batches move
by), so any "fall" read from it is false. For each length it prints the share of logs whose least-squares line falls
3 standard errors (`falling_trend`, the line alone), the share that pass the lowest-end rule as it would read at that
length (a line falling `LOWEST_END_Z` units to a last point that is the lowest), and the share either gives, with the
noise read as `fell_clearly` reads it (`point_noise`, robust). Seeded (numpy default_rng(0)): the same numbers each run.
"""
from __future__ import annotations

import argparse

import numpy as np

from forensics.analyzers.fall_measure import LOWEST_END_POINTS, LOWEST_END_Z, falling_trend
from forensics.analyzers.metrics import point_noise
from forensics.config import Thresholds


def false_rates(n: int, trials: int, rng: np.random.Generator) -> tuple[float, float, float]:
    """(the 3-unit line's rate, the lowest-end rule's, either's) over `trials` flat logs of `n` points."""
    thresholds, line, lowest, either = Thresholds(), 0, 0, 0
    for _ in range(trials):
        values = 1.0 + rng.normal(0.0, 0.03, n)
        sigma = point_noise(values)
        by_line = falling_trend(values, sigma, thresholds, 3.0)
        by_lowest = float(values[-1]) <= float(values.min()) and falling_trend(values, sigma, thresholds,
                                                                                 LOWEST_END_Z)
        line, lowest, either = line + by_line, lowest + by_lowest, either + (by_line or by_lowest)
    return line / trials, lowest / trials, either / trials


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20_000)
    parser.add_argument("--lengths", type=int, nargs="+", default=list(range(4, 21)))
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"points  line 3 SE  lowest end {LOWEST_END_Z} SE  either   (the rule reads from {LOWEST_END_POINTS} points)")
    for n in args.lengths:
        line, lowest, either = false_rates(n, args.trials, rng)
        print(f"{n:6d}  {line:9.2%}  {lowest:17.2%}  {either:6.2%}")


if __name__ == "__main__":
    main()
