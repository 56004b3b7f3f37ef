"""Audit the advice forensics gives on every real corpus case (issue 11).

Runs `forensics.analyze` over tests/realworld/<case> (every expected/<case>.json) and /work/shared/realworld/<case>
(every expected_shared/<case>.json) in 2 worker processes, and checks the rules of tests/support/advice_invariants.py
over each run's causes and its rendered text report (`forensics.report.text.analysis_text`, verbose): no full
fine-tuning range alone to an adapter run, both ranges or "unknown" where the method is unknown, a preference or RL
range named with its objective, a precursor behind every "likely" learning-rate cause (and no sudden break beside
it), no resume advice to a run that recovered by itself, advice worded for the run's objective and method, no setting
named that the run did not have, the last good checkpoint before the incident, HF's NaN filter never leading.
Prints every violation as `case  rule: text`, then a count per rule. A rule that holds on every case is asserted by
tests/test_realworld_advice.py; a violation here is a map to a bug (fix the code, with a unit test) or to a rule that
was wrong (fix the rule).

Usage: python scripts/audit_advice.py [--only CASE ...] [--procs N]    (run from the repository root)
"""
from __future__ import annotations

import argparse
import collections
import sys
import warnings
from multiprocessing import Pool
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

CORPUS = ROOT / "tests" / "realworld"
SHARED = Path("/work/shared/realworld")


def cases() -> list[tuple[str, Path]]:
    out = [(p.stem, CORPUS / p.stem) for p in sorted((CORPUS / "expected").glob("*.json"))]
    if SHARED.is_dir():
        out += [(f"shared-{p.stem}", SHARED / p.stem) for p in sorted((CORPUS / "expected_shared").glob("*.json"))]
    return out


def audit(case: tuple[str, Path]) -> tuple[str, list[tuple[str, str]]]:
    import forensics
    from support.advice_invariants import violations
    name, folder = case
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return name, violations(forensics.analyze(folder))
    except Exception as e:  # an analysis that fails is a finding of the audit too
        return name, [("analyze", repr(e)[:300])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="case names to audit (default: all)")
    parser.add_argument("--procs", type=int, default=2)
    args = parser.parse_args()
    todo = [c for c in cases() if not args.only or c[0] in args.only]
    counts = collections.Counter()
    with Pool(args.procs, maxtasksperchild=50) as pool:
        for name, found in sorted(pool.imap_unordered(audit, todo, chunksize=4)):
            for rule, text in found:
                counts[rule] += 1
                print(f"{name}  {rule}: {text}")
    print(f"\n{len(todo)} cases; violations per rule: {dict(counts) or 'none'}")


if __name__ == "__main__":
    main()
