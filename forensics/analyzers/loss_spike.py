"""Loss spikes: the training loss jumping well above its recent robust baseline (see `spikes`).

A spike is a warning, whether or not it settles (a rise that never comes back is the
`divergence` detector's to call an error); several in a row are one storm finding. A jump at
a learning-rate restart is a new training phase on new data, not an incident: info. So are, in a
log of every step, spikes at most three points long that settle at once (single hard batches), and, in a log whose
loss throws short jumps again and again over the run (one micro-batch's loss printed every N steps, or a loss
near 0 that a hard example lifts now and then), spikes over a level that stayed put, however tall. A rise
of less than `loss_spike_min_rise` nats, or that fraction of where the log started when that is above
1, is no spike at all, however many times its baseline it is; out of a loss that held steady before it (its
point noise under `_STEADY_NOISE` of its level) `loss_spike_min_rise` nats alone: a steady loss has no hard
batches whose noise the start-scaled bar is there to pass over.

A loss with little per-step noise (big batches: under `_STEADY_NOISE` of its level from one step to the next, read
per step where a point is the mean of several (see `_relative_noise`), as
pre-training on hundreds of thousands of tokens a step logs it) has no hard single batches to excuse a jump: there a
spike is a jump of `spike_mad_z` times that noise, and at least `_STEADY_FACTOR` x the baseline (modded-nanogpt's 1.5B
run: 5.6% noise, 34 single-step jumps of 1.5-1.9x on 491,520-token batches), whether or not it settles at once.
Preference/RL logs are skipped: their loss is not a fit measure and sits near zero by design. Only a GRPO/PPO log's
blow-up is read there (`_policy_blow_ups`): the loss and the KL to the reference both jumping `_BLOW_UP_FACTOR` x over
their medians in one step, the loss by a whole nat or more (a GRPO loss is beta x KL, about 0 by construction; the
policy's log-probabilities leaving the reference's by thousands of nats in one update is an instability however
quickly it settles).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from .metrics import LOSS, Metrics, format_number, is_preference_log, point_noise, real_loss, true_runs
from .spike_findings import spike_findings
from .spikes import Spike, SpikeRule, find_spikes, group_evidence, largest


def loss_spike_rule(thresholds: Thresholds) -> SpikeRule:
    return SpikeRule(window=thresholds.spike_window, min_history=thresholds.spike_min_history,
                     factor=thresholds.loss_spike_factor, mad_z=thresholds.spike_mad_z,
                     recover_factor=thresholds.loss_spike_recover_factor,
                     recover_points=thresholds.spike_recover_points,
                     early_factor=thresholds.loss_spike_early_factor)


def detect_loss_spikes(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """`loss_spike` findings over the real (unmasked, finite) training loss: one per spike or storm."""
    if LOSS not in metrics:
        return []
    if is_preference_log(metrics):
        return _policy_blow_ups(metrics)
    loss = real_loss(metrics)
    start = float(loss.iloc[:5].median()) if len(loss) else 0.0
    min_rise = thresholds.loss_spike_min_rise * max(1.0, start)
    rule, noise = loss_spike_rule(thresholds), _relative_noise(loss)
    steady = noise < _STEADY_NOISE
    if steady:
        rule = replace(rule, factor=max(_STEADY_FACTOR, 1 + thresholds.spike_mad_z * noise))
    spikes = [s for s in find_spikes(loss, rule)
              if s.peak - s.baseline >= (thresholds.loss_spike_min_rise if _steady_before(loss, s, thresholds)
                                         else min_rise) and not _over_a_low_first_print(loss, s, thresholds)]
    jumps = 0 if steady else _recurring_jumps(loss.to_numpy(dtype="float64"), thresholds, min_rise)
    batches = [] if steady else _single_batches(loss, spikes, thresholds, min_rise, jumps, noise)
    rest = [s for s in spikes if s not in batches]
    findings = spike_findings("loss_spike", LOSS, metrics[LOSS], rest, metrics, thresholds)
    return findings + ([_batch_noise(batches, jumps)] if batches else [])


def _steady_before(loss, spike: Spike, thresholds: Thresholds) -> bool:
    """Whether the `spike_window` points before the spike (`spike_min_history` at least) held steady: their point
    noise under `_STEADY_NOISE` of their median. A jump out of a steady loss is no hard batch's noise, so it needs only
    `loss_spike_min_rise` nats, not that fraction of a start many times higher that the loss has long left."""
    before = loss.to_numpy(dtype="float64")[max(0, spike.position - thresholds.spike_window):spike.position]
    if len(before) < thresholds.spike_min_history or not spike.baseline > 0:
        return False
    return point_noise(before) < _STEADY_NOISE * spike.baseline


def _over_a_low_first_print(loss, spike: Spike, thresholds: Thresholds) -> bool:
    """Whether the spike's baseline is a start artefact: fewer than `spike_min_history` points before it, all
    `loss_spike_factor` x under the lowest the loss reached from the spike on, and the loss falling away from the spike
    to under half its peak by the end. That first print is no level the loss ever came back near, so nothing rose
    from it (gracemyqiao's flan-t5 loop prints log_loss / 150 at idx 0, one loss over 150: 0.032, then 150-step means
    2.17, 0.81 ... 0.12). A jump that stays up, or falls back near the first points, is still read."""
    values = loss.to_numpy(dtype="float64")
    before, after = values[:spike.position], values[spike.position:]
    if len(before) >= thresholds.spike_min_history or not len(before):
        return False
    return bool(thresholds.loss_spike_factor * before.max() < after.min()
                and np.median(after[-max(1, len(after) // 10):]) < 0.5 * spike.peak)


_STEADY_NOISE = 0.08  # a per-step loss this steady (its point-to-point spread over its level) has big batches ...
_STEADY_FACTOR = 1.5  # ... and a jump of this x its baseline is no batch's noise
_STEADY_MIN_POINTS = 200  # the spread is read over this many points or more


def _relative_noise(loss) -> float:
    """The loss's spread from one training step to the next as a share of its level (inf on a short log: no reading).

    A point logged every k steps is, as the HF Trainer, Megatron and most loops log it, the mean of those k steps'
    losses, whose spread is the single step's over sqrt(k): read per point, a small-batch fine-tune logged every 5
    steps looks as steady as pre-training's big batches. The point-to-point spread is scaled back to one step; a log
    of the loss at every k-th step alone is then called less steady than it is, which leaves it the general rule."""
    if len(loss) < _STEADY_MIN_POINTS:
        return float("inf")
    values = loss.to_numpy(dtype="float64")
    level = float(np.median(values))
    spacing = max(1.0, float(np.median(np.diff(loss.index.to_numpy(dtype="float64")))))
    return point_noise(values) * np.sqrt(spacing) / level if level > 0 else float("inf")


_BATCH_STEPS = 2  # a hard batch may leave the next step or two a little high too


def _single_batches(loss, spikes: list[Spike], thresholds: Thresholds, min_rise: float, jumps: int,
                    noise: float) -> list[Spike]:
    """Spikes made of hard batches. In a log of every step each point is one batch, and a heavy-tailed per-step loss
    throws such batches often: there a spike under `spike_warn_factor` that settles with no more than three high
    points in a row is one. In a log whose short jumps recur (`jumps` of them, `_recurring_jumps`) the loss's own
    noise throws them however the points were sampled (one micro-batch's loss printed every N steps), at any factor
    over a median that may sit near 0, where the level under the spike stayed put (`_jumps_on_an_unmoved_level`) and
    the log shows that noise apart from the spikes judged: its jumps outside their episodes many more than they are
    (`_jumps_apart_from_the_spikes`) and the spike no higher than the loss had been before it, or the spike within
    the loss's own spread (`_within_its_own_spread`), or, in a log of every step, the spike under where the loss
    started (one batch no worse than the untrained model: the hard examples of a run that memorizes lifting a loss
    near 0 to 0.3-1.8 for a step). The spikes themselves are no evidence of the noise that would
    excuse them (four 3x jumps of a loss with 4% noise are four incidents). An unstable model stays high
    (VERDICTS.md). A spike of an every-step log with fewer than `spike_min_history` points before it is no such
    batch: the log has not yet shown what its per-step noise is (a six-step paste of a long run, the loss 0.66,
    0.80, then 4.27, then 0.77)."""
    if len(loss) < 2:
        return []
    values = loss.to_numpy(dtype="float64")  # real_loss: finite, the positions find_spikes counts in
    every_step = float(np.median(np.diff(loss.index.to_numpy()))) == 1
    limit = thresholds.loss_spike_recover_factor
    one_step_batches = [s for s in spikes if every_step and s.recovered
                        and s.peak / s.baseline < thresholds.spike_warn_factor
                        and s.position >= thresholds.spike_min_history
                        and _longest_high_run(values[s.position:s.end_position + 1], limit * s.baseline)
                        <= _BATCH_STEPS + 1]
    one_step_batches += [s for s in spikes if every_step and s not in one_step_batches
                         and noise >= _NOISY and _hard_batch_in_a_noisy_log(values, s, thresholds)]
    if not jumps:
        return one_step_batches
    ordinary = _outside_the_spikes(len(values), spikes)
    noisy_apart = _jumps_apart_from_the_spikes(values, ordinary, len(spikes), thresholds, min_rise)
    start = float(np.median(values[:5]))
    return [s for s in spikes if s in one_step_batches
            or (_jumps_on_an_unmoved_level(values, s, thresholds, min_rise)
                and ((noisy_apart and _no_higher_than_before(values, s, thresholds))
                     or (every_step and s.position >= thresholds.spike_min_history and s.peak < start)
                     or _within_its_own_spread(values, s, ordinary, thresholds)))]


_NOISY = 0.5  # a log of every step whose loss swings by this share of its level from one batch to the next ...


def _hard_batch_in_a_noisy_log(values: np.ndarray, spike: Spike, thresholds: Thresholds) -> bool:
    """Whether, in a log of every step whose loss swings by `_NOISY` of its level or more from one batch to the next
    (a hand-written loop printing each batch of a small-batch fine-tune: 0.03-1.2 around a median of 0.2), the spike
    is one hard batch: at most `_BATCH_STEPS` + 1 points in a row `loss_spike_factor` x over its baseline, after the
    log's first `spike_min_history` points, and under where the loss started (one batch no worse than the untrained
    model). There such a batch 17x the median is as ordinary as one 4.7x; the jumps need not recur over the log's
    quarters (a loss that fell 400-fold throws its late jumps under the nats a recurring jump must rise). A quiet log
    (`_relative_noise` under `_NOISY`: the caller's part) has no such batches, and a jump that stays up for more points
    is an incident."""
    if spike.position < thresholds.spike_min_history or not spike.peak < float(np.median(values[:5])):
        return False
    span = values[spike.position:spike.end_position + 1]
    return _longest_high_run(span, thresholds.loss_spike_factor * spike.baseline) <= _BATCH_STEPS + 1


def _no_higher_than_before(values: np.ndarray, spike: Spike, thresholds: Thresholds) -> bool:
    """Whether the spike's peak is no higher than the loss had been before it; a spike in the log's first
    `spike_window` points has no before to read, and is taken as the noisy start of a log whose noise throws
    jumps many times over apart from its spikes (the only place this is asked)."""
    return spike.position < thresholds.spike_window or spike.peak <= float(np.max(values[:spike.position]))


def _outside_the_spikes(length: int, spikes: list[Spike]) -> np.ndarray:
    """A mask of the log's points that lie in no spike's episode: the loss as it runs apart from what is judged."""
    ordinary = np.ones(length, dtype=bool)
    for spike in spikes:
        ordinary[spike.position:spike.end_position + 1] = False
    return ordinary


_JUMPS_PER_SPIKE = 2  # a log whose jumps outside the spikes' episodes number this many per spike or more ...


def _jumps_apart_from_the_spikes(values: np.ndarray, ordinary: np.ndarray, spikes: int, thresholds: Thresholds,
                                 min_rise: float) -> bool:
    """Whether the loss throws short jumps (`_short_jumps`) outside the episodes of the spikes judged,
    `_JUMPS_PER_SPIKE` per spike or more and `_RECURRING_JUMPS` at least, in `_JUMP_QUARTERS` quarters of the log:
    there the spikes are a few of many jumps the spike rule itself passed over as the loss's noise (one
    micro-batch's loss printed every 10 steps: 569 jumps outside 141 spikes' episodes). Where the spikes are the
    log's jumps, they are incidents, however many."""
    apart = [start for start, stop in _short_jumps(values, thresholds, min_rise) if ordinary[start:stop].all()]
    quarters = {4 * p // len(values) for p in apart}
    return len(apart) >= max(_RECURRING_JUMPS, _JUMPS_PER_SPIKE * spikes) and len(quarters) >= _JUMP_QUARTERS


_SPREADS = 4.0  # a peak within this many of the loss's upper spreads over its median is its own noise


def _within_its_own_spread(values: np.ndarray, spike: Spike, ordinary: np.ndarray, thresholds: Thresholds) -> bool:
    """Whether the spike's peak stands within `_SPREADS` x the loss's own upper spread (its `_UPPER`th percentile
    less its median) over its median, read over the points before it outside every spike's episode and past the
    log's first `spike_window` (the warm-up descent, whose height says nothing of the noise): a noisy loss (a LoRA
    on batches of 2, its median 0.5 and one point in ten over 1.1) reaching 1.6-1.8 from a calm dip. A
    spike far above that spread (a loss with 4% noise jumping 3x), or one with too few settled points before it
    to tell (`spike_window`), is no such noise."""
    settled = slice(thresholds.spike_window, spike.position)
    before = values[settled][ordinary[settled]]
    if len(before) < thresholds.spike_window:
        return False
    median = float(np.median(before))
    return spike.peak <= median + _SPREADS * (float(np.percentile(before, _UPPER)) - median)


def _jumps_on_an_unmoved_level(values: np.ndarray, spike: Spike, thresholds: Thresholds, min_rise: float) -> bool:
    """Whether the spike's episode is jumps of single batches over a level that stayed put: its median no higher than
    the loss's own upper range before it (`_upper_range`: a cluster of hard batches, as an unshuffled stretch of hard
    examples gives), or no more than `_BATCH_STEPS` + 1 points in a row that are jumps (`loss_spike_factor` x and
    `min_rise` nats over its baseline) and the episode settled, or the loss's median over it stayed within
    `loss_spike_recover_factor` x or `min_rise` nats of the baseline. A noisy loss seldom has three calm points in a
    row to end an episode by, so an episode still open is read by its level; a loss that moved up stays up in it."""
    span = values[spike.position:spike.end_position + 1]
    level = float(np.median(span))
    if level <= _upper_range(values, spike.position, thresholds):
        return True  # a stretch of hard batches no higher, in its median, than one batch in ten of the loss before it
    jumps = (span > thresholds.loss_spike_factor * spike.baseline) & (span - spike.baseline >= min_rise)
    unmoved = spike.recovered or level <= thresholds.loss_spike_recover_factor * spike.baseline \
        or level - spike.baseline < min_rise
    return unmoved and max((j - i for i, j in true_runs(jumps)), default=0) <= _BATCH_STEPS + 1


_UPPER = 90  # the percentile of the loss's points that is its own upper range ...
_UPPER_WINDOWS = 10  # ... read over this many `spike_window`s of points before a spike


def _upper_range(values: np.ndarray, position: int, thresholds: Thresholds) -> float:
    """The loss's own upper range before `position`: the `_UPPER`th percentile of the `_UPPER_WINDOWS` x
    `spike_window` points before it, past the log's first `spike_window` (a warm-up descent from a high start
    would make any later stretch look low); -inf where fewer than `spike_window` such points come before."""
    span = _UPPER_WINDOWS * thresholds.spike_window
    before = values[max(thresholds.spike_window, position - span):position]
    return float(np.percentile(before, _UPPER)) if len(before) >= thresholds.spike_window else -np.inf


_RECURRING_JUMPS = 4  # this many short jumps over a log ...
_JUMP_QUARTERS = 3  # ... in this many of its quarters or more (most of the run) are the loss's own noise


def _recurring_jumps(values: np.ndarray, thresholds: Thresholds, min_rise: float) -> int:
    """How many short jumps the loss throws over the run where it throws them again and again, else 0: runs of at
    most `_BATCH_STEPS` + 1 points `loss_spike_factor` x over the median of the `spike_window` points before each
    and `min_rise` nats above it, the next point back under that bar, `_RECURRING_JUMPS` of them or more in
    `_JUMP_QUARTERS` quarters of the log or more. The nats keep a loss near 0 (rounded to 0.0001, 0.0003) from
    counting its rounding as jumps. A lone jump in a quiet log, or a stretch of jumps in one part of it, is no such
    noise."""
    jumps = [start for start, _ in _short_jumps(values, thresholds, min_rise)]
    quarters = {4 * p // len(values) for p in jumps}
    return len(jumps) if len(jumps) >= _RECURRING_JUMPS and len(quarters) >= _JUMP_QUARTERS else 0


def _short_jumps(values: np.ndarray, thresholds: Thresholds, min_rise: float) -> list[tuple[int, int]]:
    """(start, stop) of each run of at most `_BATCH_STEPS` + 1 points `loss_spike_factor` x over the median of the
    `spike_window` points before each and `min_rise` nats above it, the next point back under that bar."""
    before = pd.Series(values).rolling(thresholds.spike_window, min_periods=thresholds.spike_min_history) \
        .median().shift(1).to_numpy()
    with np.errstate(invalid="ignore"):
        over = (values > thresholds.loss_spike_factor * before) & (values - before >= min_rise)
    return [(start, stop) for start, stop in true_runs(over)
            if stop - start <= _BATCH_STEPS + 1 and stop < len(values)]


def _longest_high_run(values: np.ndarray, limit: float) -> int:
    """The most consecutive points above `limit`."""
    return max((j - i for i, j in true_runs(values > limit)), default=0)


def _batch_noise(batches: list[Spike], jumps: int) -> Finding:
    big = largest(batches)
    where = (f"in a log whose loss jumps and comes straight back again and again ({jumps} short jumps over the run)"
             if jumps else "in a log of every step")
    how = ("each over a level that stayed where it was" if jumps
           else f"none high for more than {_BATCH_STEPS + 1} steps in a row")
    # a point of a log of every N steps is (mostly) a mean of N steps: its noise is the batches', not one step's
    noise = "the loss's own batch-to-batch noise" if jumps else "the per-step noise of small batches"
    message = (f"{len(batches)} single-batch loss {'spike' if len(batches) == 1 else 'spikes'} {where}, the "
               f"largest to {format_number(big.peak)} at step {big.peak_step} ({big.peak / big.baseline:.1f}x its "
               f"recent median {format_number(big.baseline)}), {how}: {noise}.")
    return Finding("loss_spike", "info", batches[0].step, message, end_step=batches[-1].step, metric=LOSS,
                   evidence=dict(group_evidence(batches), single_batches=True))


_BLOW_UP_FACTOR = 100.0  # an RL loss and its KL this many times their medians at one step ...
_BLOW_UP_RISE = 1.0  # ... the loss up by at least this many nats
_KL_NAMES = ("kl", "objective/kl")


def _policy_blow_ups(metrics: Metrics) -> list[Finding]:
    """`loss_spike` warnings where an RL log's loss and KL to the reference jump together far over their medians
    (siddhartth04's Unsloth GRPO: loss 234.5 and kl 5,864 at step 97 between 0.002 / 0.045 and 0.001 / 0.025)."""
    kl_name = next((name for name in _KL_NAMES if name in metrics), None)
    loss = real_loss(metrics)
    if kl_name is None or len(loss) < 10:
        return []
    kl = metrics[kl_name].reindex(loss.index)
    loss_level, kl_level = float(np.median(np.abs(loss.to_numpy()))), float(np.nanmedian(np.abs(kl.to_numpy())))
    if not kl_level > 0:
        return []
    high = (loss.to_numpy() - loss_level >= _BLOW_UP_RISE) & (loss.to_numpy() > _BLOW_UP_FACTOR * loss_level) \
        & (kl.to_numpy() > _BLOW_UP_FACTOR * kl_level)
    steps = [int(s) for s in loss.index[high]]
    if not steps:
        return []
    first, top = steps[0], int(loss.idxmax()) if float(loss.max()) > 0 else steps[0]
    shown = ", ".join(f"{format_number(float(loss.loc[s]))} (kl {format_number(float(kl.loc[s]))}) at step {s}"
                      for s in steps[:4])
    message = (f"the policy blew up against its reference: loss {shown}{' ...' if len(steps) > 4 else ''}, where the "
               f"loss's median is {format_number(loss_level)} and the KL's {format_number(kl_level)}. An update moved "
               "the policy's log-probabilities far from the reference's at once; check the learning rate, "
               "max_grad_norm and the precision (fp16 overflows in the log-probabilities), and look at the "
               "completions of that step.")
    return [Finding("loss_spike", "warning", first, message, end_step=steps[-1] if len(steps) > 1 else None,
                    metric=LOSS, evidence={"steps": steps, "peak_step": top, "loss_median": loss_level,
                                           "kl_median": kl_level, "kl_metric": kl_name})]
