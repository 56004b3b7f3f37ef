"""A Megatron console cut part-way: one `run_cut_short` warning at its last iteration where the log stops below the
`train_iters` its iteration lines state (`iteration 48/ 100`) and holds no line that says why it ends (Megatron's
`[after training is done]`, an exit line, the launcher's `exits successfully`, the scheduler's cancel: ingest
`megatron_end`). The run, or its capture, stopped and the log cannot say why; what it would have reached is unknown
(VERDICTS.md: warning). yueming-yuan_Megatron-DeepSpeed-X-MoE: 'iteration 48/ 100' and nothing after, the loss
10.96 -> 7.64 in the warm-up, judged warning. Unlike `cut_short` this needs no begun decay: Megatron's own end line
says whether the run finished.

Silent where the log holds under `_A_SHARE_OF_THE_PLAN` of its plan: the start of a long run, which the corpus judges
on what it did (KungYork_Megatron-LM: 5,800 of 500,000, Megatron's example-script train_iters, healthy;
zainsarwar865_gpt-neox: 270 of 11,000, stopped by hand as its stderr says, healthy).
The Megatron consoles of the corpus (those the iteration-line reader reads as Megatron's) it leaves alone, with their
end: liukeTT_Megatron-DeepSpeed-TT ('[after training is done]', 'exits successfully'),
stark-sim_megatron-deepspeed-lock-clock and liguodongiot_llm-action (train_iters reached, '[after training is done]'),
elena-lyulina_Megatron-LM-Attention-Benchmark-sink-nan (15 of 15, '[after training is done]'),
loubnabnl_nanotron-smol-cluster and bigscience-workshop_bigscience_meg-gpt2-base-n4 (SLURM's 'CANCELLED AT'),
KungYork_Megatron-LM, zainsarwar865_gpt-neox and bigscience-workshop_bigscience_meg-ds-3d-ds-on / -ds-off (49 and 62
of 1000: the start of the plan). It fires after an earlier incident that stays the first on
elena-lyulina_Megatron-LM-Attention-Benchmark-fineweb / -mock (344 and 343 of 500, judged warning for a grad-norm
spike) and THUDM_Chinese-Transformer-XL_issue7 (1200 of 3000, judged warning for loss-scale overflows).
"""
from __future__ import annotations

import numpy as np

from ..findings import Finding
from ..ingest.megatron_end import BY_HAND_KEY, KEY
from ..timeline import Timeline

_A_SHARE_OF_THE_PLAN = 0.1  # a log holding less of its planned iterations is the start of a long run, not a cut


def detect_megatron_cut(timeline: Timeline) -> list[Finding]:
    """One `run_cut_short` warning per Megatron console cut part-way (module docstring), or []."""
    findings = []
    for source, meta in timeline.meta.items():
        planned = meta.get("max_steps")
        steps = timeline.frame.loc[timeline.frame["source"] == source, "step"].to_numpy(dtype="int64")
        if KEY not in meta or meta[KEY] is not None or not isinstance(planned, int) or steps.size < 2:
            continue
        last = int(steps.max())
        if not _A_SHARE_OF_THE_PLAN * planned <= last <= planned - _log_interval(steps):
            continue
        by_hand = meta.get(BY_HAND_KEY)
        share = f"{100 * last / planned:.0f}%"
        message = (f"the Megatron log ends at iteration {last} of its {planned} (train_iters), {share} of its plan: it "
                   f"was stopped by hand (the console ends in KeyboardInterrupt and '{by_hand}'); nothing in the log "
                   "says the training itself failed (a hang looks the same). What it learned since its last saved "
                   "checkpoint is lost; resume from that checkpoint to finish the plan." if by_hand else
                   f"the Megatron log ends at iteration {last} of its {planned} (train_iters) with no line saying "
                   f"why: no '[after training is done]', exit line or error. The run stopped, crashed or its log was "
                   f"cut at {100 * last / planned:.0f}% of its plan; what it reached after is unknown. Resume from its "
                   "last checkpoint, or find the rest of its log.")
        findings.append(Finding("run_cut_short", "warning", last, message,
                                evidence={"source": source, "last_step": last, "train_iters": planned,
                                          "stopped_by_hand": by_hand}))
    return findings


def _log_interval(steps: np.ndarray) -> int:
    """The iterations between two logged lines (Megatron's log_interval): a finished run's last line is within one."""
    return max(1, int(np.median(np.diff(np.unique(steps)))))
