"""Whether the head of a file is one of the JSON shapes a run keeps: a JSON-lines metrics log, a history dumped as
JSON (or printed as one list of log dicts into a text file), LLaMA-Factory's arguments. Pure functions of the bytes.

`run.discover` reads a file's head (and tail, `SNIFF_BYTES` each) and asks these, and `log_hints`' of a text log,
where the file's name does not say what it is.
"""
from __future__ import annotations

import json
import re

from ..metric_names import JSON_LINE_EPOCH_KEY, JSON_LINE_STEP_KEYS

SNIFF_BYTES = 1 << 16  # how much of a file's head (and of its tail) is sniffed

# A JSON list of log entries with a loss, bare or under a history key (ingest.json_history): its head holds both.
DUMPED_HISTORY = re.compile(
    rb'^(?:\xef\xbb\xbf)?\s*(?:(?:\[|\{[^\[]{0,4000}"(?:log_history|history|logs|train_history|'
    rb'training_history|metrics)"\s*:\s*\[)\s*\{[^\[\]]{0,2000}?"(?:loss|eval_loss)"\s*:\s*[-\d.NI]'
    rb'|\{\s*"train_step_loss"\s*:\s*\['  # (llama-cookbook's metrics_data_*.json)
    # per-epoch records under `epochs`, each with its training loss (Diabloansh_headlineclassifier's results/
    # training_log.json: {"config": {...}, "epochs": [{"epoch": 1, ..., "train_loss": 0.72, "val_metrics": {...}}]})
    rb'|\{[^\[]{0,4000}"epochs"\s*:\s*\[\s*\{[^\[\]]{0,2000}?"(?:train_|training_)?loss"\s*:\s*[-\d.NI]'
    # a dict of parallel lists opening with the training loss's (a fraction, not a split's
    # indices): {"train": [2.7057, ...], "val": [...]} (ConnorLathrop_Pytorch_with_tinyshakespeare...)
    # (or the loss list after other number lists: a Keras history.history dict, {"val_loss": [...], "val_acc": [...],
    # "loss": [...]}, AlexBella365_FrenchTextGenerator; {"accuracy": [...], "loss": [...]}, JoncyKeda_LSTM_TEXT_...)
    rb'|\{\s*(?:"(?:val_[^"\n]{1,96}|[^"\n]{0,40}(?:acc|lr|learning_rate|auc|mae|mse|f1|ppl|perplexity|step|epoch|iter)'
    rb'[^"\n]{0,40})"\s*:\s*\[[-+\d.eE,\sNaInfity]*\]\s*,\s*){0,50}'
    rb'"(?:loss|losses|train|train_loss(?:es)?|training_loss(?:es)?)"\s*:\s*\[\s*\d*\.\d'
    # a run's summary whose training loss list follows scalars, named for losses (kasiranaweera_EduLM-Gemma4's
    # training_metrics.json: {"final_train_loss": 0.013, "total_steps": 60, "train_losses": [...], ...}); a bare
    # `train` list after scalars is as likely a split's fractions, and a bare `losses` list a test's per-sample losses
    # (an eval_results.json: {"perplexity": ..., "avg_loss": ..., "num_samples": 5, "losses": [...]})
    rb'|\{\s*(?:"[^"\n]{1,96}"\s*:\s*(?:-?[\d.eE+-]+|"[^"\n]{0,400}"|true|false|null)\s*,\s*){1,50}'
    rb'"(?:train_loss(?:es)?|training_loss(?:es)?)"\s*:\s*\[\s*\d*\.\d'
    # a dict of row lists by split, the training rows first: {"train": [{"step": 100, "loss": 1.49, ...}], "val":
    # [...]} (adityatiwari049_Kaya-SLM)
    rb'|\{\s*"(?:train|training)"\s*:\s*\[\s*\{[^\[\]{}]{0,2000}?"\w*loss"\s*:\s*[-\d.NI]'
    # a list of entries, each holding its training records in a list named for losses: AlphaZero iterations with
    # "training_losses": [{"policy_loss": 0.0, "value_loss": NaN, "total_loss": NaN}] (DidulaThavisha_alpha_llm)
    rb'|^(?:\xef\xbb\xbf)?\s*\[\s*\{[^\[\]]{0,4000}"\w*loss(?:es)?"\s*:\s*\[\s*\{[^\[\]{}]{0,2000}?"\w*loss"\s*:\s*'
    rb'[-\d.NI]'
    # an own logger's {metric: [{"step": 0, "value": 3.07, ...}]} (Shivay00001_shivacon-ai)
    rb'|\{\s*"[^"\n]{1,200}"\s*:\s*\[\s*\{\s*"step"\s*:\s*\d+\s*,\s*"value"\s*:)')
# A bare JSON list of log rows whose losses are named by their split, not `loss` (Lukas1121_LogSentinel's
# checkpoints/training_log.json: `[{"epoch": 1, "train_loss": 3.12, "val_loss": 1.15, ...}, ...]`; json_history
# renames them): its first row holds a step or an epoch as well, so a sweep's list of results is not taken for one
_LIST_OPENS = re.compile(rb'^(?:\xef\xbb\xbf)?\s*\[\s*\{')
_SPLIT_LOSS_KEYS = frozenset({"train_loss", "training_loss", "val_loss", "valid_loss", "validation_loss", "dev_loss",
                              "test_loss"})


def split_loss_rows(head: bytes) -> bool:
    """Whether a JSON file opens a list of log rows with a step (or epoch) and a split's loss in its first row."""
    opens = _LIST_OPENS.match(head)
    try:  # the first row read whole, nested dicts and all (Amara-ch_dialogue-bug-localization's ranking scores)
        row = json.JSONDecoder().raw_decode(head[opens.end() - 1:].decode("utf-8"))[0] if opens else None
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False  # (a first row longer than the head sniffed, or no JSON)
    steps = set(JSON_LINE_STEP_KEYS) | {JSON_LINE_EPOCH_KEY}
    return isinstance(row, dict) and bool(steps & set(row)) and any(
        isinstance(row.get(k), (int, float)) for k in _SPLIT_LOSS_KEYS)


def dumped_history(head: bytes) -> bool:
    """Whether a JSON file's head is a dumped history that ingest.json_history reads (either shape above)."""
    return bool(DUMPED_HISTORY.search(head)) or split_loss_rows(head)


# The same list of log dicts printed into a text file (`pprint(trainer.state.log_history)` saved as experiments/log.txt,
# NguyenTuoc2807_Financial-Numerical-Reasoning): the file opens with its first dict, loss key and all, and ends with
# the list's close (sniffed on the head and tail joined)
_PRINTED_HISTORY_HEAD = re.compile(
    rb"""\A(?:\xef\xbb\xbf)?\s*\[\s*\{[^\[\]]{0,2000}?['"](?:loss|eval_loss)['"]\s*:\s*"""
    rb"""[-\d.nNiI]""")
_PRINTED_HISTORY_END = re.compile(rb"\}\s*\]\s*\Z")


def printed_history(chunk: bytes) -> bool:
    """Whether a text file is, as a whole, one list of log dicts with a loss (ingest.json_history reads it)."""
    return bool(_PRINTED_HISTORY_HEAD.search(chunk)) and bool(_PRINTED_HISTORY_END.search(chunk))


def is_llamafactory_args(head: bytes) -> bool:
    """Whether a JSON file's head is LLaMA-Factory's arguments (`llamafactory-cli train args.json` takes them so, and a
    script calling its run_exp(args) may save that dict beside the run): an object with its FinetuningArguments'
    `stage` and `finetuning_type`, a pair no other trainer's arguments hold."""
    return (head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{") and b'"finetuning_type"' in head
            and b'"stage"' in head)


_JSON_LINES_SNIFFED = 20  # lines of a file's head that must each be a JSON object with a step (or epoch)
_LOSS_KEY = re.compile(r"(?i)loss")


def json_lines_log(chunk: bytes) -> bool:
    """A file that is a JSON-lines metrics log whatever its name (`log.txt`, `train.log`): each of the first
    `_JSON_LINES_SNIFFED` lines of its head (a cut last line aside) a JSON object holding a step key (or an epoch),
    one of them a loss. A console with a JSON line among its prints is not one."""
    lines = [line for line in chunk.split(b"\n") if line.strip()]
    if len(chunk) >= SNIFF_BYTES and lines:
        lines = lines[:-1]  # the head may end mid-line
    if not lines or not lines[0].lstrip().startswith((b"{", b"\xef\xbb\xbf{")):
        return False
    steps = set(JSON_LINE_STEP_KEYS) | {JSON_LINE_EPOCH_KEY}
    loss = False
    for line in lines[:_JSON_LINES_SNIFFED]:
        try:
            obj = json.loads(line.decode("utf-8-sig"))
        except (ValueError, RecursionError):
            return False
        if not isinstance(obj, dict) or not steps & set(obj):
            return False
        loss = loss or any(_LOSS_KEY.search(str(key)) for key in obj)
    return loss
