"""A run's own generation score (ROUGE, BLEU, chrF, METEOR: higher is better) as evidence the loss alone cannot give.

The eval loss is measured with the reference tokens fed in (teacher forcing); a generation score is measured on what
the model decodes by itself (Seq2SeqTrainer's `predict_with_generate`, the card's Rouge1 / Bleu columns). The two can
part ways: exposure bias (Ranzato et al. 2016, "Sequence Level Training with Recurrent Neural Networks") lets the
per-token likelihood improve while free-running generation degrades into repeated, empty or cut-short outputs.
Two things only the score tells:

* `detect_generation_score_collapse`: a held-out score that ends under `_COLLAPSED_SHARE` of its own best for its last
  `_HELD` evaluations or more, while the eval loss does not show it (it did not rise since the score's best; where it
  rose, the overfitting detectors read the same turn from the loss; where none was logged, the memorization rules
  read the fall beside the training loss). A warning dated at the first of those
  evaluations. ROUGE and BLEU move between checkpoints and seeds by a few points (Clark et al. 2011, "Better
  Hypothesis Testing for Statistical Machine Translation": ~1 BLEU from optimizer instability alone); a fall to a
  third is no such noise. In the corpus the healthy seq2seq runs never go under 0.52 of their best (KyrieRui's
  ROUGE-2, bart-large-wsj's 0.54), the collapsed one ends at 0.18 (t5-vi-summ, nine evaluations under a third). A
  score merely frozen at one value is not enough: a small fraction printed to four places repeats in a healthy run
  (KyrieRui's ROUGE-2 0.0199 at four evaluations in a row).
* `never_learned_by_the_score`: a score near zero (`NEAR_ZERO`) at every one of `_HELD` evaluations or more, not
  rising, beside a loss `detect_no_learning_evidence` judged did not fall: the model's outputs share next to nothing
  with the references by the task's own measure, and the loss says it is not getting there: `never_learned`, dated
  where that loss finding is. Near zero is read on the value itself: 0.01 is 1% as a fraction and 0.01 points as a
  percentage (a score with any value above 1 is a percentage, sacrebleu's 0-100 scale), near zero either way.
"""
from __future__ import annotations

import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from ..metric_names import is_held_out
from .metrics import Metrics, finite, format_number
from .overfitting import EVAL_LOSS

# The words of a generation score's name (eval_rouge1, eval_rouge2_fmeasure, valid_bleu, eval_bleu-4, eval_chrF)
GENERATION_WORDS = ("rouge", "bleu", "chrf", "meteor")
NEAR_ZERO = 0.01  # never above this: next to nothing in common with the references, as a fraction or a percentage
_COLLAPSED_SHARE = 1 / 3  # under this share of its own best: far past checkpoint-to-checkpoint noise
_HELD = 3  # evaluations the score must hold there: one or two odd evaluations are a glitch, not a state


def generation_scores(metrics: Metrics) -> dict[str, pd.Series]:
    """The held-out generation scores of a log, by name, their finite points."""
    names = [name for name in metrics if is_held_out(name) and any(w in name.lower() for w in GENERATION_WORDS)]
    return {name: finite(metrics[name]) for name in sorted(names)}


def detect_generation_score_collapse(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `generation_score_collapse` warning for the log (the score whose collapse starts first), or []."""
    eval_loss = finite(metrics[EVAL_LOSS]) if EVAL_LOSS in metrics else None
    if eval_loss is None or not len(eval_loss):
        # No held-out loss to part ways with: a score falling while the training loss falls is the memorization
        # rules' witness (a from-scratch translator trained to 0.1 nats whose BLEU peaked early is memorization).
        return []
    scores = generation_scores(metrics)
    collapsed = {name: start for name, score in scores.items()
                 if (start := _collapse_start(score)) is not None and not _loss_rose_since_best(eval_loss, score)}
    if not collapsed:
        return []
    name = min(collapsed, key=lambda n: (collapsed[n], n))
    return [_collapse_finding(name, scores[name], collapsed[name], eval_loss, sorted(collapsed))]


def _collapse_start(score: pd.Series) -> int | None:
    """The first of the last evaluations (`_HELD` or more) that are all under `_COLLAPSED_SHARE` of the score's best,
    or None. A best at near zero is no level to fall from."""
    best = float(score.max()) if len(score) else 0.0
    if best <= NEAR_ZERO:
        return None
    under = 0
    for value in reversed(score.to_numpy(dtype="float64")):
        if value >= _COLLAPSED_SHARE * best:
            break
        under += 1
    return int(score.index[-under]) if under >= _HELD else None


def _loss_rose_since_best(eval_loss: pd.Series, score: pd.Series) -> bool:
    """Whether the eval loss at its last evaluation is above where it was at the score's best (the loss shows it)."""
    at_best = eval_loss[eval_loss.index <= int(score.idxmax())]
    return len(at_best) > 0 and float(eval_loss.iloc[-1]) > float(at_best.iloc[-1])


def _frozen_at_the_end(score: pd.Series) -> int:
    """How many of the last evaluations read exactly the last value."""
    values = score.to_numpy(dtype="float64")
    same = 1
    while same < len(values) and values[-same - 1] == values[-1]:
        same += 1
    return same


def _collapse_finding(name: str, score: pd.Series, start: int, eval_loss: pd.Series,
                      names: list[str]) -> Finding:
    best, best_step, last = float(score.max()), int(score.idxmax()), float(score.iloc[-1])
    held = int((score.index >= start).sum())
    frozen = _frozen_at_the_end(score)
    froze = f"; the last {frozen} exactly {format_number(last)}" if frozen >= _HELD else ""
    others = [n for n in names if n != name]
    also = f"; {', '.join(others)} fell so too" if others else ""
    message = (f"{name} fell from its best, {format_number(best)} at step {best_step}, to {format_number(last)}: under "
               f"a third of it at each of the last {held} evaluations (steps {start} to {int(score.index[-1])}"
               f"{froze}{also}), while {_loss_said(eval_loss, best_step)}. The loss, measured with the reference "
               "tokens fed in, and the score of what the model generates by itself part ways: look at the decoded "
               "generations (empty, repeated or cut-short outputs), the generation config (max_length / "
               "max_new_tokens, num_beams, the decoder start token) and whether the tokenizer fits the language.")
    return Finding("generation_score_collapse", "warning", start, message, end_step=int(score.index[-1]), metric=name,
                   evidence={"best": best, "best_step": best_step, "last": last, "evaluations_collapsed": held,
                             "frozen_at_the_end": frozen, "scores_collapsed": names})


def _loss_said(eval_loss: pd.Series, best_step: int) -> str:
    at_best = eval_loss[eval_loss.index <= best_step]
    start = at_best if len(at_best) else eval_loss
    return (f"the eval loss did not rise ({format_number(float(start.iloc[-1]))} at step {int(start.index[-1])}, "
            f"{format_number(float(eval_loss.iloc[-1]))} at the last evaluation)")


def never_learned_by_the_score(metrics: Metrics, doubts: list[Finding]) -> list[Finding]:
    """One `never_learned` error where a generation score stayed near zero at every evaluation (`_HELD` or more) and
    did not rise, beside a `no_learning_evidence` finding that judged the loss over its points (its `head`: the
    loss did not fall, or the held-out loss never improved), dated where that finding is; else []."""
    flat = next((f for f in doubts if f.kind == "no_learning_evidence" and "head" in f.evidence), None)
    if flat is None:
        return []
    for name, score in generation_scores(metrics).items():
        if len(score) >= _HELD and float(score.abs().max()) <= NEAR_ZERO and score.iloc[-1] <= score.iloc[0]:
            return [_never_scored(name, score, flat)]
    return []


def _never_scored(name: str, score: pd.Series, flat: Finding) -> Finding:
    top = float(score.abs().max())
    message = (f"{name} was never above {format_number(top)} at any of its {len(score)} evaluations (steps "
               f"{int(score.index[0])} to {int(score.index[-1])}; {format_number(float(score.iloc[-1]))} at the last): "
               "the model's generations share next to nothing with the references by the run's own measure, and "
               f"the loss did not fall (from about {format_number(flat.evidence['head'])} to "
               f"{format_number(flat.evidence['tail'])}): it never learned the task. Check the learning "
               "rate, the tokenizer and the labels fed to the decoder, and a few decoded outputs.")
    return Finding("never_learned", "error", flat.step, message, end_step=flat.end_step, metric=name,
                   evidence={"score_max": top, "score_last": float(score.iloc[-1]), "evaluations": int(len(score)),
                             "loss_head": flat.evidence["head"], "loss_tail": flat.evidence["tail"]})
