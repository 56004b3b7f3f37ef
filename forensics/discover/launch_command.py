"""A launch command in a text: whether a text holds one, and its `--name value` arguments.

Shared by discovery (`run.py` tells a small command file from other text by it) and by the readers
of run settings (`ingest.command_line` turns the arguments into RunConfig keys), so it sits below both.

A launch command is a line that starts a training program: environment settings, then `python`,
`deepspeed`, `torchrun`, `accelerate launch`, or a framework's own CLI (`llamafactory-cli train`,
`swift sft|pt|rlhf`, `axolotl train`); `\\` continuations are joined.
"""
from __future__ import annotations

import re
import shlex
from typing import Any

COMMAND_FILE_BYTES = 16384  # a command file, or a launch script, is small: a bigger text is a log or a document
LAUNCHER_KEY = "_launcher"  # the launched program, where it names a framework
SCRIPT_KEY = "_script"  # the Python script the command runs (`train_pretrain.py`), where it names one
# The launched program or module -> the framework it is (the others say nothing of the framework).
LAUNCHER_FRAMEWORKS = {"llamafactory-cli": "llamafactory", "swift": "swift", "axolotl": "axolotl",
                       "axolotl.cli.train": "axolotl"}
# a line that starts a training command: environment settings, then the launcher or the framework's own CLI
_LAUNCH = re.compile(r"(?m)^[ \t]*(?:\$ )?(?:[A-Z_][A-Z0-9_]*=\S*[ \t]+)*(?:nohup[ \t]+)?"
                     r"(?P<program>python3?|deepspeed|torchrun|accelerate[ \t]+launch|llamafactory-cli[ \t]+train"
                     r"|swift[ \t]+(?:sft|pt|rlhf)|axolotl[ \t]+train)(?=[ \t])(?P<rest>(?:[^\n\\]|\\[^\n]|\\\n)*)")


def arguments(argv: list[str]) -> dict[str, Any]:
    """{name: value} of the `--name` arguments in `argv` (values as text; a bare flag is True).

    >>> arguments(["train.py", "--fp16", "--lr=1e-4", "--stage", "sft"])
    {'fp16': True, 'lr': '1e-4', 'stage': 'sft'}
    """
    out: dict[str, Any] = {}
    for i, token in enumerate(argv):
        if not token.startswith("--") or len(token) < 3:
            continue
        name, eq, value = token[2:].partition("=")
        if not eq:
            following = argv[i + 1] if i + 1 < len(argv) else None
            value = following if following is not None and not following.startswith("--") else True
        out.setdefault(name, value)
    return out


def words(command: str) -> list[str]:
    """A command line split as the shell would (an unclosed quote: split on spaces)."""
    try:
        return shlex.split(command)
    except ValueError:  # an unclosed quote: the words as they are
        return command.split()


def one_launch(text: str) -> dict[str, Any]:
    """The `--` arguments of the one launch command in a text (and `_launcher`, the framework's CLI or module it
    launched), or {} where it holds none or several (two are two runs, or a script's stages: which one ran is
    not said)."""
    found = []
    for m in _LAUNCH.finditer(text) if "--" in text else ():
        argv = words(m.group("rest").replace("\\\n", " "))
        args = {k: v for k, v in arguments(argv).items() if isinstance(v, (str, bool))}
        if not args:
            continue
        program = m.group("program").split()[0]
        module = next((argv[i + 1] for i, word in enumerate(argv[:-1]) if word == "-m"), None)
        launcher = program if program in LAUNCHER_FRAMEWORKS else module
        if launcher in LAUNCHER_FRAMEWORKS:
            args[LAUNCHER_KEY] = launcher
        script = launched_script(argv)
        if script is not None:
            args[SCRIPT_KEY] = script
        if args not in found:
            found.append(args)
    return found[0] if len(found) == 1 else {}


def launched_script(argv: list[str]) -> str | None:
    """The file name of the Python script a command runs: its first word ending in `.py` (after the launcher's own
    options: `torchrun --nproc_per_node 2 train_pretrain.py ...`), or None.

    >>> launched_script(["--nproc_per_node", "2", "trainer/train_pretrain.py", "--epochs", "1"])
    'train_pretrain.py'
    """
    script = next((word for word in argv if word.endswith(".py") and not word.startswith("-")), None)
    return None if script is None else script.replace("\\", "/").rsplit("/", 1)[-1]


def holds_one_launch(chunk: bytes) -> bool:
    """Whether the head of a file is a small text holding exactly one launch command.

    >>> holds_one_launch(b"CUDA_VISIBLE_DEVICES=0 python train.py --fp16 True\\n")
    True
    """
    return len(chunk) < COMMAND_FILE_BYTES and bool(one_launch(chunk.decode("utf-8", errors="replace")))
