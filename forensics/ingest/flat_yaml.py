"""The plain YAML that training front ends write (LLaMA-Factory's `yaml.dump` of a flat dict, axolotl and
torchtune configs, Lightning's hparams.yaml), read without PyYAML, which is not a dependency."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from ..errors import UnreadableFile

_KEY_LINE = re.compile(r"^([A-Za-z_][\w.\-]*)\s*:(?:\s+(.*))?$")


def read_flat_yaml(path) -> dict[str, Any]:
    """A flat `key: value` YAML file (plus `- item` lists and one nested level) as a dict.

    PyYAML is not a dependency; LLaMA-Factory's `training_args.yaml` is a `yaml.dump` of a
    flat dict, which this reads exactly. Raises UnreadableFile on anything else.
    """
    try:
        text = Path(path).read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UnreadableFile(path, "not UTF-8 text") from None
    return parse_flat_yaml(text, path)


def parse_flat_yaml(text: str, path) -> dict[str, Any]:
    """`read_flat_yaml` of a text already read (a YAML block embedded in another file, such as a model card's axolotl
    config); `path` names where it came from in the UnreadableFile it raises."""
    out: dict[str, Any] = {}
    current: str | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = _strip_comment(raw).rstrip()
        if not line.strip() or line.strip() == "---":
            continue
        if raw[0] in " \t-" and current is not None:
            _add_nested(out, current, line.strip(), path, number)
            continue
        match = _KEY_LINE.match(line)
        if not match:
            raise UnreadableFile(path, f"line {number} is not 'key: value' YAML: {raw.strip()[:60]!r}")
        current = match.group(1)
        out[current] = None if match.group(2) is None else yaml_scalar(match.group(2).strip())
    return out


def _add_nested(out: dict, key: str, line: str, path, number: int) -> None:
    if line.startswith("- ") or line == "-":
        if not isinstance(out.get(key), list):
            out[key] = []
        out[key].append(yaml_scalar(line[1:].strip()))
        return
    match = _KEY_LINE.match(line)
    if not match:
        raise UnreadableFile(path, f"line {number} is not 'key: value' YAML: {line[:60]!r}")
    if not isinstance(out.get(key), dict):
        out[key] = {}
    out[key][match.group(1)] = None if match.group(2) is None else yaml_scalar(match.group(2).strip())


def _strip_comment(line: str) -> str:
    if line.lstrip().startswith("#"):
        return ""
    if "'" in line or '"' in line:
        return line  # a quoted value may hold '#'; yaml.dump never adds comments anyway
    return re.sub(r"\s+#.*$", "", line)


_BOOLS = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}


def yaml_scalar(text: str) -> Any:
    """One YAML 1.1 plain or quoted scalar (PyYAML's resolution rules for the common cases)."""
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    if len(text) >= 2 and text[0] == text[-1] == '"':
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text[1:-1]
    if text.startswith("[") and text.endswith("]"):
        return [yaml_scalar(t.strip()) for t in text[1:-1].split(",") if t.strip()]
    lowered = text.lower()
    if lowered in ("null", "~", ""):
        return None
    if lowered in _BOOLS:
        return _BOOLS[lowered]
    if lowered in (".inf", "+.inf", "-.inf", ".nan"):
        return {".nan": math.nan, "-.inf": -math.inf}.get(lowered, math.inf)
    for kind in (int, float):
        try:
            return kind(text.replace("_", ""))
        except ValueError:
            pass
    return text


def yaml_leaves(path) -> dict[str, Any]:
    """Every `key: scalar` of an indented YAML mapping, by its own (leaf) name, the first of each name; list items
    and lines that are no `key: value` are passed over. {} where the file is not UTF-8 text."""
    out: dict[str, Any] = {}
    for key, value in yaml_key_values(path):
        out.setdefault(key, value)
    return out


def yaml_key_values(path) -> list[tuple[str, Any]]:
    """Every `key: scalar` of an indented YAML mapping in file order, by its own (leaf) name, each as often as it is
    written (`yaml_leaves` keeps the first). [] where the file is not UTF-8 text."""
    return [(key, value) for _, key, value in yaml_sectioned_values(path)]


def yaml_sectioned_values(path) -> list[tuple[tuple[str, ...], str, Any]]:
    """`yaml_key_values` with the sections each key is written under, outermost first, by indentation (a list item's
    `- ` counts as indentation): `(("train",), "bf16", True)`. [] where the file is not UTF-8 text."""
    try:
        text = Path(path).read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        return []
    out, open_sections = [], []  # open_sections: (indentation, name) of the section headers still open
    for raw in text.splitlines():
        line = _strip_comment(raw).rstrip()
        m = _KEY_LINE.match(line.strip())
        if not m:
            continue
        indent = len(line) - len(line.lstrip(" -"))
        while open_sections and open_sections[-1][0] >= indent:
            open_sections.pop()
        if m.group(2) is None:
            open_sections.append((indent, m.group(1)))
        else:
            out.append((tuple(name for _, name in open_sections), m.group(1), yaml_scalar(m.group(2).strip())))
    return out
