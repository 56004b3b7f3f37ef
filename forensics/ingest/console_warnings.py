"""What a console says went wrong or which trainer ran, in its warnings and errors (`console_warnings`).

The crash that ended the run (a CUDA out-of-memory error, a CUDA fault, NCCL, or the shell's report of a job it saw
killed), after the log's last loss; how often tensorboardX warned that a value handed to its writer was NaN or Inf
after the first loss; TRL's trainer and transformers' Seq2SeqTrainer named by warnings raised from their own code; the
oldest transformers release that prints a deprecation message the console shows, or that pip or Unsloth's banner
names.
"""
from __future__ import annotations

import re

from .console_text import line_at, line_end

# A warning raised from the code of one of TRL's trainers (`.../site-packages/trl/trainer/sft_trainer.py:158:
# UserWarning: You passed ... to the SFTTrainer`): that trainer ran. Its class, by the module's name.
_TRL_TRAINERS = {"sft": "SFTTrainer", "dpo": "DPOTrainer", "kto": "KTOTrainer", "orpo": "ORPOTrainer",
                 "cpo": "CPOTrainer", "grpo": "GRPOTrainer", "rloo": "RLOOTrainer", "ppo": "PPOTrainer",
                 "reward": "RewardTrainer"}
# ... or a traceback's frame in that module (`File ".../trl/trainer/sft_trainer.py", line 361, in train`): the trainer's
# own code ran, in a launch that crashed; a console relaunches the same script, so it names the run's trainer as well
# (namwoam_dl-final: two CUDA out-of-memory tracebacks through SFTTrainer.train, then the launch that finished)
_TRL_TRAINER_WARNING = re.compile(
    r"[\\/]trl[\\/]trainer[\\/](" + "|".join(_TRL_TRAINERS) + r")_trainer\.py(?::\d+: \w*Warning\b"
    r"|\", line \d+, in \w+)")
# transformers' Seq2SeqTrainer named as the run builds it: its own deprecation warning (`... will be removed in version
# 5.0.0 for `Seq2SeqTrainer.__init__``) or the source line a warning quotes (`  trainer = Seq2SeqTrainer(`)
_SEQ2SEQ_TRAINER = re.compile(
    r"`Seq2SeqTrainer\.__init__`|^[ \t]*\w+[ \t]*=[ \t]*Seq2SeqTrainer\([ \t]*\r?$", re.MULTILINE)
# transformers' own deprecation messages, by the release that first prints them: a console that shows one ran that
# release or a later one (`torch_dtype` became `dtype` in 4.56, huggingface/transformers#39782). Such a release logs the
# training loss as a mean over the accumulation steps, not the 4.46-4.47 sum (BDH-teacher_Deep_Learning_Audit_code's
# bloom-560m LoRA, 18.39 at its first window, is no sum of 4 micro-batches).
_RELEASE_MESSAGES = (("4.56", re.compile(r"`torch_dtype` is deprecated! Use `dtype` instead!")),)
# The release a console names outright: pip's report of the transformers it found or installed (`Requirement already
# satisfied: transformers in .../dist-packages (4.51.3)`, with `>=4.46.0 ... (from trl)` where another package asked
# for it; `Successfully installed ... transformers-4.46.3`) and Unsloth's banner (`Fast Qwen2 patching. Transformers:
# 5.5.0.`). A notebook may show several: the oldest of them is the lower bound (hoa-10_RLHF's pip output, 4.51.3, dates
# its ORPO QLoRA's loss a mean over 4 accumulation steps, not a 4.46-4.47 sum).
_RELEASE_STATED = re.compile(r"^Requirement already satisfied: transformers(?:\[[\w,]+\])?(?:[<>=!~][^ ]*)? in \S.*?"
                             r"\((\d+\.\d+)(?:\.\d+)*\)[ \t]*$"
                             r"|^Successfully installed (?:.* )?transformers-(\d+\.\d+)"
                             r"|\bUnsloth [\w.]+: Fast \w+ patching\. Transformers: (\d+\.\d+)", re.MULTILINE)


def console_warnings(text: str) -> dict:
    """The crash that ended the run, transformers' Seq2SeqTrainer or TRL's trainer by a warning about its building,
    and how often tensorboardX warned of a NaN or Inf value after the first loss."""
    out: dict = {}
    crash = _final_crash(text) if "rror" in text or "Killed" in text or _LAUNCHER_MARK in text else None
    if crash:
        out["console_crash"] = crash
    m = _SEQ2SEQ_TRAINER.search(text) if "Seq2SeqTrainer" in text else None
    if m:
        out["console_seq2seq_trainer"] = line_end(line_at(text, m.start()))
    m = _TRL_TRAINER_WARNING.search(text) if "_trainer.py" in text else None
    if m:
        out["console_trl_trainer"] = _TRL_TRAINERS[m.group(1)]
        line = line_at(text, m.start())
        out["console_trl_trainer_line"] = line[line.find(m.group(0)) + 1:].strip()[:200]  # from trl/trainer/ on
    written = _nonfinite_written_after_the_first_loss(text) if "found in input tensor" in text else 0
    if written:
        out["console_nonfinite_written"] = written
    out.update(_transformers_release_at_least(text))
    return out


def _transformers_release_at_least(text: str) -> dict:
    """`console_transformers_at_least` (the release, "4.56") with its `_line`: the newest release whose first
    deprecation message (`_RELEASE_MESSAGES`) the console shows; {} where it shows none."""
    for release, message in reversed(_RELEASE_MESSAGES) if "deprecated" in text else ():
        m = message.search(text)
        if m:
            return {"console_transformers_at_least": release,
                    "console_transformers_at_least_line": line_end(line_at(text, m.start()))}
    return _release_stated(text) if "ransformers" in text else {}


def _release_stated(text: str) -> dict:
    """`console_transformers_at_least` with its `_line` from the oldest release the console names outright
    (`_RELEASE_STATED`: pip's report, Unsloth's banner); {} where it names none."""
    stated = [(tuple(int(p) for p in next(g for g in m.groups() if g).split(".")), m)
              for m in _RELEASE_STATED.finditer(text)]
    if not stated:
        return {}
    release, m = min(stated, key=lambda pair: pair[0])
    return {"console_transformers_at_least": ".".join(str(p) for p in release),
            "console_transformers_at_least_line": line_end(line_at(text, m.start()))}


def _nonfinite_written_after_the_first_loss(text: str) -> int:
    """How many of tensorboardX's NaN-or-Inf warnings come after the console's first logged loss: those before it
    are an fp16 scaler's first overflowing steps (their grad_norm inf), which it logs before any loss line."""
    first = _LOGGED_LOSS.search(text)
    return sum(1 for m in _TENSORBOARD_NONFINITE.finditer(text) if first is None or m.start() > first.start())


_LOGGED_LOSS = re.compile(r"(?i)\bloss['\"]?\s*[:=]")


# tensorboardX's check_nan (x2num.py), on a value handed to its writer: `logging.warning('NaN or Inf found in input
# tensor.')`, printed as `WARNING:root:NaN or Inf found in input tensor.` or bare in a notebook's stream
_TENSORBOARD_NONFINITE = re.compile(r"^(?:WARNING:root:|Warning: )?NaN or Inf found in input tensor\.?\s*$",
                                    re.MULTILINE | re.IGNORECASE)


# timed out, a rank died). An error of the script itself, an interrupt or a logger's own failure is not this.
# (a notebook's error output names the exception's class alone: `OutOfMemoryError: CUDA out of memory`)
# Sampling from a model whose next-token probabilities are no longer finite is the model's failure, not the script's:
# torch.multinomial's `probability tensor contains either `inf`, `nan` or element < 0` (karanravindra_omni's GRPO loop
# could not sample its third step's completions after two updates in bf16).
_CRASH = re.compile(
    r"^(?:(?:torch\.(?:cuda\.)?)?OutOfMemoryError: .*|RuntimeError: (?:CUDA out of memory|CUDA error|NCCL"
    r"|probability tensor contains either).*|torch\.distributed\.DistBackendError: .*)$", re.MULTILINE)


# The shell's word on a job a signal ended (bash's job status, `./train.sh: line 33: 136834 Killed   python3 main.py
# ...`, or a bare `Killed` where the job ran in the foreground): SIGKILL, most often the kernel's out-of-memory killer
# (host RAM), or a scheduler's limit. Written by the shell after the script's last output, often on the same line as
# the progress bar it cut (tqdm leaves no newline), so not anchored at a line's start.
_SHELL_KILLED = re.compile(r"(?:: (line \d+: +\d+ (?:Killed|Segmentation fault|Aborted|Bus error)\b)[ \t]*([^\n]*)"
                           r"|^(Killed)[ \t]*$)", re.MULTILINE)


_LOSS_WORD = re.compile(r"(?i)loss")
# The Trainer's closing summary (`{'train_runtime': ...}`, TrainOutput(...)): the training ended before what came after
_TRAINING_CLOSED = re.compile(r"['\"]train_runtime['\"]\s*:|\bTrainOutput\(global_step=")


def _final_crash(text: str) -> str | None:
    """The exception line of a crash (`_CRASH`), or the shell's or DeepSpeed's launcher's report of a job it saw
    killed (`_last_kill`), after the log's last loss: the run stopped there; None elsewhere (an out-of-memory error of
    an earlier attempt, or one an evaluation caught, comes before a later loss)."""
    last = None
    for last in _CRASH.finditer(text):
        pass
    killed = _last_kill(text)
    if killed is not None and (last is None or killed[0] > last.start()):
        if _LOSS_WORD.search(text, killed[1]) or _TRAINING_CLOSED.search(text, 0, killed[0]) \
                or _launched_after_the_last_loss(text, killed[0]):
            return None  # (a later command of the script, a merge or an export, was killed: not the training)
        return killed[2]
    if last is None or _LOSS_WORD.search(text, last.end()):  # (a results table's header says `Training Loss`)
        return None
    return last.group(0).strip()[:200]


# DeepSpeed's runner / launcher starting a command (`[runner.py:568:main] cmd = ...`, `[launch.py:145:main] WORLD INFO
# DICT: ...`): a launch that comes after the last loss is a later command's (an evaluation's), whose kill is its own
_LAUNCH_STARTED = re.compile(r"\[(?:runner\.py:\d+:main\] cmd = |launch\.py:\d+:main\] )")


def _launched_after_the_last_loss(text: str, kill_at: int) -> bool:
    """Whether a DeepSpeed launch starts between the last loss before `kill_at` and the kill (`_LAUNCH_STARTED`)."""
    launch = None
    for launch in _LAUNCH_STARTED.finditer(text, 0, kill_at):
        pass
    return launch is not None and not _LOSS_WORD.search(text, launch.end(), kill_at)


def _last_kill(text: str) -> tuple[int, int, str] | None:
    """(start, end, what it says) of the last report of a job killed by a signal: the shell's (`_SHELL_KILLED`) or
    DeepSpeed's launcher's (`_LAUNCHER_KILLED`), whichever comes later; None where there is none."""
    shell = None
    for shell in _SHELL_KILLED.finditer(text):
        pass
    launcher = None
    for launcher in _LAUNCHER_KILLED.finditer(text) if _LAUNCHER_MARK in text else ():
        pass
    if launcher is not None and (shell is None or launcher.start() > shell.start()):
        return launcher.start(), launcher.end(), _LAUNCHER_SAID
    if shell is None:
        return None
    said, command = shell.group(1) or shell.group(3), " ".join(shell.group(2).split()) if shell.group(2) else ""
    return shell.start(), shell.end(), (f"the shell: {' '.join(said.split())}"
                                        + (f" ({_words_up_to(command, 60)})" if command else ""))


# DeepSpeed's launcher (deepspeed/launcher/launch.py, `sigkill_handler`): once a worker ends with a non-zero code it
# logs `Killing subprocess <pid>` for each worker, then `<cmd> exits with return code = <code>`, the worker's
# `Popen.returncode`, negative where a signal ended it (-9: SIGKILL, which the worker could neither catch nor print:
# most often the kernel's out-of-memory killer, or a scheduler). Only -9 is read: -2 (SIGINT) is the owner's Ctrl-C
# and -15 (SIGTERM) a stop asked for (the owner's `kill`, a scheduler's time limit, which warns first), no crash. A
# positive code is the worker's own error exit, whose traceback says what it was: not read here.
_LAUNCHER_MARK = "sigkill_handler"
_LAUNCHER_KILLED = re.compile(
    r"\[launch\.py:\d+:sigkill_handler\] .* exits with return code = (?P<code>-9)[ \t]*$", re.MULTILINE)
LAUNCHER_KILLED = "DeepSpeed's launcher:"
_LAUNCHER_SAID = (f"{LAUNCHER_KILLED} its training process exits with return code = -9 (killed by SIGKILL; "
                  "launch.py's sigkill_handler)")  # the only code `_LAUNCHER_KILLED` reads


def _words_up_to(text: str, size: int) -> str:
    """`text` whole where it is short, else its words up to `size` characters, marked as cut ("...")."""
    if len(text) <= size:
        return text
    cut = text[:size]
    return (cut[:cut.rfind(" ")] if " " in cut else cut) + " ..."


# A traceback of a training step (the Trainer's, or a TRL trainer's, training_step / compute_loss) whose forward goes
# through PEFT's PeftModel (`File ".../peft/peft_model.py", line 1430, in forward`): the model the trainer trains is a
# PeftModel, whose base PEFT freezes, so what it trains is the adapter (namwoam_dl-final's out-of-memory tracebacks, the
# same script relaunched to the end)
_PEFT_IN_TRAINING_STEP = re.compile(r"[\\/]\w*trainer\.py\", line \d+, in (?:training_step|compute_loss)[ \t]*\r?\n"
                                    r"(?:[^\n]*\n){0,40}?[^\n]*[\\/](?P<peft>peft[\\/]peft_model\.py)\", "
                                    r"(?P<line>line \d+), in forward")


def peft_in_training_step(text: str) -> str | None:
    """What says a training step ran the model through PEFT's PeftModel (`_PEFT_IN_TRAINING_STEP`), or None."""
    m = _PEFT_IN_TRAINING_STEP.search(text)
    return f"a training step's traceback runs the model through PEFT's {m['peft']}, {m['line']}, in forward" if m \
        else None


# transformers' flash-attention layers (Llama, Mistral, ...) warn where the hidden states reach them upcast to float32
# (`... in float32. We will cast back the input in torch.bfloat16.`): the dtype named is autocast's where mixed
# precision is on, else the one the weights were loaded in before quantization, else the projection's own: the dtype
# the model computes in (namwoam_dl-final's 8-bit Breeze-7B under bf16=True)
CAST_BACK = re.compile(r"^[^\n]*We will cast back the input in torch\.(bfloat16|float16|float32)\b[^\n]*$",
                       re.MULTILINE)
