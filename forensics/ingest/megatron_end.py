"""How a Megatron console ends: the line that says its training ended, or was ended on purpose, where it has one.

Megatron-LM and Megatron-DeepSpeed print `[after training is done] datetime: ...` once `train()` returns
(megatron/training.py `pretrain`; liukeTT_Megatron-DeepSpeed-TT), older releases their `validation loss at the end of
training ...`; a run stopped by its own `--exit-interval`, `--exit-duration-in-mins` or `--exit-signal-handler` says
`exiting program at iteration N`, `exiting program after N minutes`, `exiting program after receiving SIGTERM.`;
DeepSpeed's launcher says `Process N exits successfully.` when a rank returns; SLURM says `*** STEP N ON host CANCELLED
AT ...` where the job was cancelled by its owner or its time limit (loubnabnl_nanotron-smol-cluster, judged healthy:
not a training failure). A console with none of them ends without saying why: the run, or its capture, was cut
(yueming-yuan_Megatron-DeepSpeed-X-MoE: the file ends on 'iteration 48/ 100'). A console whose last traceback ends in
`KeyboardInterrupt` (Ctrl-C in the terminal it was captured from; DeepSpeed's launcher then logs `sigkill_handler`
killing the ranks: inkcherry_Megatron-DeepSpeed) was stopped by its owner: `stopped_by_hand` quotes that line.
"""
from __future__ import annotations

import re

from .console_text import line_at
from ..discover.run_signs import final_exception, first_exception_after

KEY = "megatron_end_line"  # LogRecords.meta key of a Megatron console: its end line, or None where it has none
BY_HAND_KEY = "megatron_stopped_by_hand"  # ... and the line saying its owner stopped it, where it says so

_END = re.compile(r"\[after training is done\]|loss at the end of training|exiting program (?:at|after)\b"
                  r"|\bexits successfully\b|\bCANCELLED AT\b")


# The words each of those lines holds where its match begins: found by a plain substring scan, they gate the regex and
# say where it may first match (a console with none of them, a cut run's, is not scanned by the regex at all)
_END_WORDS = ("[after training is done]", "loss at the end of training", "exiting program ", "exits successfully",
              "CANCELLED AT")


def end_line(text: str) -> str | None:
    """The console's last line that says its training ended or was ended on purpose (module docstring), or None."""
    found = [at for at in (text.find(word) for word in _END_WORDS) if at >= 0]
    last = None
    for last in _END.finditer(text, min(found)) if found else ():
        pass
    return line_at(text, last.start()).strip()[:200] if last else None


def stopped_by_hand(text: str) -> str | None:
    """`KeyboardInterrupt`, where the console's first and last tracebacks after its last iteration line end with it; the
    launcher's `sigkill_handler` line where one follows (module docstring); else None."""
    ended = final_exception(text)
    last_step = text.rfind(" iteration ")
    if not ended or not ended.startswith("KeyboardInterrupt") or text.rfind("KeyboardInterrupt") < last_step:
        return None
    if not (first_exception_after(text, last_step) or "").startswith("KeyboardInterrupt"):
        return None  # an error came first: ^C ended a run that had already failed (a rank's crash, the rest hung)
    killed = text.rfind("sigkill_handler")
    return line_at(text, killed).strip()[:200] if killed > last_step else ended
