"""Do a ZeRO checkpoint's two copies of a weight agree on being finite? Judged from names only.

A ZeRO-1/2 save keeps each parameter twice: the 16-bit module weight (`layers.1.weight`) and the
fp32 master copy, split across the data-parallel ranks (`layers.1.weight.fp32` in each rank's
optim_states file, zero.py). When only one copy holds NaN/Inf the damage happened between them:
in the optimizer step on the master copy, or in the 16-bit copy made from it. ZeRO-3 saves no
16-bit weights, so there is nothing to compare there.
"""
from __future__ import annotations

from .zero import param_of, rank_of


def copy_disagreements(nonfinite_files: dict[str, list[str]], names: set[str]) -> list[str]:
    """One sentence per parameter whose fp32 master and 16-bit copies disagree about being finite.

    Args:
        nonfinite_files: file -> names of its non-finite tensors (CheckpointInfo.nonfinite_files).
        names: every tensor name of the checkpoint (to know whether a 16-bit copy was saved).

    >>> copy_disagreements({"g/bf16_zero_pp_rank_1_mp_rank_00_optim_states.pt": ["l.1.w.fp32"]},
    ...                    {"l.1.w", "l.1.w.fp32"})
    ['l.1.w: the fp32 master copy holds NaN/Inf (rank 1) while the 16-bit weights are finite']
    """
    master_ranks: dict[str, set[int]] = {}
    sixteen_bit: set[str] = set()
    for file, tensors in nonfinite_files.items():
        for name in tensors:
            param, role = param_of(name)
            if role == "fp32":
                master_ranks.setdefault(param, set()).add(rank_of(file))
            elif role == "16-bit" and name in names:
                sixteen_bit.add(param)
    out = []
    for param in sorted(set(master_ranks) | sixteen_bit):
        has_both = param in names and param + ".fp32" in names
        if not has_both or (param in master_ranks) == (param in sixteen_bit):
            continue
        if param in master_ranks:
            ranks = ", ".join(str(r) for r in sorted(r for r in master_ranks[param] if r is not None))
            out.append(f"{param}: the fp32 master copy holds NaN/Inf (rank {ranks}) "
                       "while the 16-bit weights are finite")
        else:
            out.append(f"{param}: the 16-bit weights hold NaN/Inf while the fp32 master copy is finite")
    return out
