"""What a console of several launches appended one after another (`nohup python train.py >> train.log`) says about
the run: the launch it ended with, as the timeline judges it (`launch_banners`).

A launch prints facts about itself as it starts: its model's parameter count, PEFT's or Unsloth's trainable-parameter
banner, its precision, its printed arguments (TrainingArguments, an argparse Namespace, DeepSpeed's launch line: the
model's path among them). Read over the whole file, the first or the largest of them wins, whichever launch printed it
(jtaylor-eng_attention_experiments: 52 sessions, the largest count 134,183,936 printed by one at 00:25, the last one
printing 109,607,936). Each such fact is taken from the last launch that printed one of its kind; one that only an
earlier launch printed still stands (a relaunch often prints less: a resume skips the start-up a fresh run printed).
The evidence names the launch (`launch 52 of 52`).

`last_launch_facts(whole, by_launch)`: console facts (`console_facts`) of the whole file, its own facts from the last
launch that printed them; `last_launch_texts(whole, by_launch)`: the printed argument texts likewise, with the launch
each came from; `banners_last_launch_first(by_launch)`: the banners, the last launch's first (the profile reads the
first banner that says what it asks).
"""
from __future__ import annotations

from dataclasses import replace

from ..timeline import Banner

# console_facts' groups a launch prints about itself: the key, its `_line` (the evidence) and any `_model` beside it
OWN_FACTS = ("console_n_params", "console_params_said", "console_precision")
# stdout meta key: {argument text key: "launch k of n"} for the printed arguments read from one launch of several
TEXT_LAUNCHES = "argument_text_launches"


def launch_label(index: int, count: int) -> str:
    return f"launch {index + 1} of {count}"


def last_launch_facts(whole: dict, by_launch: list[dict]) -> dict:
    """`whole` (the facts of the whole file) with each group of `OWN_FACTS` taken from the last launch of `by_launch`
    (each launch's facts, in file order) that states it, its line naming the launch; as it was where none does."""
    out = dict(whole)
    for key in OWN_FACTS:
        last = next((i for i in reversed(range(len(by_launch))) if key in by_launch[i]), None)
        if last is None:
            continue
        for name in [name for name in out if _in_group(name, key)]:
            del out[name]
        out.update({name: value for name, value in by_launch[last].items() if _in_group(name, key)})
        out[key + "_line"] = f"{out.get(key + '_line', '')} ({launch_label(last, len(by_launch))})"
    return out


def _in_group(name: str, key: str) -> bool:
    return name == key or name.startswith(key + "_")


def last_launch_texts(whole: dict[str, str], by_launch: list[dict[str, str]]) -> tuple[dict[str, str], dict]:
    """The argument texts of the whole file with each kind taken from the last launch that printed one, and
    {kind: "launch k of n"} for those so taken."""
    out, launches = dict(whole), {}
    for i, texts in enumerate(by_launch):
        for key, text in texts.items():
            out[key], launches[key] = text, launch_label(i, len(by_launch))
    return out, launches


def banners_last_launch_first(by_launch: list[tuple[Banner, ...]]) -> tuple[Banner, ...]:
    """The banners of each launch (in file order), the last launch's first, each naming its launch."""
    count = len(by_launch)
    return tuple(replace(b, launch=launch_label(i, count)) for i in reversed(range(count)) for b in by_launch[i])
