"""Metamorphic test driver: the same run, in a shape a real user's copy of it could plausibly have.

Each transform builds a COPY of a real case (tests/realworld/<case>, ../shared/realworld/<case>) under
/tmp/mt/<transform>/<case> and runs `forensics.analyze` on it in-process; the answer (status, first incident kind
and step, run profile less its evidence) is compared with the answer on the untouched case. A transform that has
nothing to act on in a case (no console log, no trainer_state.json ...) skips that case.

    PYTHONPATH=. python bench/metamorphic.py crlf bom_logs ansi_line ...   # named transforms
    PYTHONPATH=. python bench/metamorphic.py --cheap                        # every text transform, every case
    PYTHONPATH=. python bench/metamorphic.py --slow --every 3               # layout / container ones, a third of the cases
    PYTHONPATH=. python bench/metamorphic.py --notebook --shared no        # notebook shapes (nbformat 3, ...)
    PYTHONPATH=. python bench/metamorphic.py --list

Output: a table (tab separated) of case, transform, original answer, new answer, for every answer that changed
(--all: also the unchanged ones), then a count per transform; --out FILE also writes every row as JSON lines.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import signal
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
import forensics  # noqa: E402

CORPUS = REPO / "tests" / "realworld"
SHARED = REPO.parents[1] / "shared" / "realworld"
if not SHARED.is_dir():
    SHARED = Path("/work/shared/realworld")
WORK = Path("/tmp/mt")

TEXT_EXT = {".log", ".out", ".txt", ".jsonl", ".json", ".csv", ".yaml", ".yml", ".err"}
CONSOLE_EXT = {".log", ".out", ".txt", ".err", ""}
NOT_LOGS = {"README.md", "requirements.txt"}


def cases(every: int = 1, only: list[str] | None = None, first: str | None = None, last: str | None = None,
          shared: str = "yes") -> list[Path]:
    """The real cases, every `every`-th; `first` / `last` bound the corpus cases' names (case-insensitive,
    inclusive on the first letters given: --from O --to Z); `shared` 'yes' adds the shared cases, 'only' takes
    them alone, 'no' leaves them out."""
    out = [] if shared == "only" else [CORPUS / p.stem for p in sorted((CORPUS / "expected").glob("*.json"))]
    if first or last:
        lo, hi = (first or "").lower(), (last or "").lower()
        out = [c for c in out if c.name.lower()[:len(lo)] >= lo and (not hi or c.name.lower()[:len(hi)] <= hi)]
    if SHARED.is_dir() and shared != "no":
        out += [SHARED / p.stem for p in sorted((CORPUS / "expected_shared").glob("*.json"))]
    out = [c for c in out if c.is_dir()]
    if only:
        out = [c for c in out if c.name in only]
    return out[::every]


def _is_text(p: Path) -> bool:
    try:
        head = p.read_bytes()[:4096]
    except OSError:
        return False
    if b"\0" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:  # a cut multi-byte char at the end of the head is fine
        return e.start > len(head) - 4
    return True


def text_files(root: Path) -> list[Path]:
    return [p for p in sorted(root.rglob("*")) if p.is_file() and p.name not in NOT_LOGS
            and (p.suffix in TEXT_EXT or p.suffix == "") and _is_text(p)]


def console_files(root: Path) -> list[Path]:
    out = []
    for p in text_files(root):
        if p.suffix not in CONSOLE_EXT:
            continue
        if p.suffix == "" and not re.search(r"log|out|stdout|train", p.name, re.I):
            continue
        out.append(p)
    return out


def answer(path: Path, timeout: int = 120) -> dict:
    def _alarm(*_):
        raise TimeoutError(f"analyze took over {timeout}s")
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        a = forensics.analyze(path)
        fi = a.first_incident
        prof = a.run_profile.to_dict()
        prof.pop("evidence", None)
        return {"status": a.status, "kind": fi.kind if fi else None, "step": fi.step if fi else None, "profile": prof}
    except Exception as e:  # noqa: BLE001 -- an error is an answer too
        return {"status": "ERR", "error": f"{type(e).__name__}: {str(e)[:160]}"}
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def short(ans: dict) -> str:
    if ans["status"] == "ERR":
        return "ERR " + ans["error"]
    p = ans["profile"]
    prof = "/".join(str(p.get(k)) for k in ("method", "objective", "framework", "precision", "model_params", "algorithm"))
    return f"{ans['status']} {ans['kind']}@{ans['step']} [{prof}]"


def diff(a: dict, b: dict) -> list[str]:
    if a["status"] == "ERR" or b["status"] == "ERR":
        return [] if a["status"] == b["status"] == "ERR" else ["error"]
    out = [k for k in ("status", "kind", "step") if a[k] != b[k]]
    out += [f"profile.{k}" for k in a["profile"] if a["profile"].get(k) != b["profile"].get(k)]
    return out


# ---------------------------------------------------------------- helpers for transforms

def _copy(src: Path, dst: Path) -> Path:
    if dst.exists():
        shutil.rmtree(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dst, copy_function=shutil.copy2, symlinks=True)
    return dst


def _rewrite_text(files: list[Path], fn) -> bool:
    changed = False
    for p in files:
        raw = p.read_bytes()
        text = raw.decode("utf-8", errors="surrogateescape")
        new = fn(text)
        if new != text:
            st = p.stat()
            p.write_bytes(new.encode("utf-8", errors="surrogateescape"))
            import os
            os.utime(p, (st.st_atime, st.st_mtime))  # a copy keeps its times
            changed = True
    return changed


def _lines(fn):
    """Apply fn to each line (without its end) of a text; keeps the line ends."""
    def run(text: str) -> str:
        parts = re.split(r"(\r\n|\n)", text)
        out = []
        for i, part in enumerate(parts):
            out.append(fn(part) if i % 2 == 0 and part else part)
        return "".join(out)
    return run


TS1 = "[2024-05-01 12:00:00,123] [INFO] [trainer.py:123] "
TS2 = "2024-05-01 12:00:00 | INFO | "
BAR = "\r 10%|\u2588         | 10/100 [00:10<01:30,  1.00s/it]"


def _tqdm_line(line: str) -> str:
    if "{" in line or re.search(r"loss", line, re.I):
        return BAR + "\r" + " " * 60 + "\r" + line
    return line


def _wrap(width: int, at_cr: bool = False):
    """Lines hard-wrapped at `width` columns. `at_cr`: a carriage return starts a new screen line (what a terminal
    shows of tqdm's redrawn bar), so each \\r-piece is wrapped on its own; without it the \\r-joined pieces of a
    bar count as one long line and a wrap lands inside a bar, which no terminal does (the first pass's wrap200
    changes were all of that kind)."""
    def one(line: str) -> list[str]:
        out = []
        while len(line) > width:
            out.append(line[:width])
            line = line[width:]
        out.append(line)
        return out

    def run(text: str) -> str:
        out = []
        for line in text.split("\n"):
            if at_cr and "\r" in line:
                out.append("\r".join("\n".join(one(piece)) for piece in line.split("\r")))
            else:
                out += one(line)
        return "\n".join(out)
    return run


_BAR_LINE = re.compile(r"[^\r\n{}]*?\|\s*\d+/\d+\s*\[[^\]\r\n]*(?:it/s|s/it)[^\]\r\n]*\]")


def _tqdm_echo(text: str) -> str:
    """Before each dict / loss line, tqdm's redraw of the last bar the log printed before it and a \\r (the bar
    and the line on one screen line): the bar's counter is the log's own, no step is invented. A log with no bar is
    left alone."""
    out, last = [], None
    for line in re.split(r"(\n)", text):
        bars = _BAR_LINE.findall(line)
        if line != "\n" and last and ("{" in line or re.search(r"loss", line, re.I)) and not bars:
            line = "\r" + last.strip("\r") + "\r" + line
        if bars:
            last = bars[-1]
        out.append(line)
    return "".join(out)


def _trunc_last_line(text: str) -> str:
    body = text.rstrip("\r\n")
    cut = body.rfind("\n") + 1
    last = body[cut:]
    if len(last) < 4:
        return text
    return body[:cut] + last[: len(last) // 2]


def _drop_last_line(text: str) -> str:
    body = text.rstrip("\r\n")
    cut = body.rfind("\n") + 1
    return body[:cut]


def _trainer_states(root: Path) -> list[Path]:
    return [p for p in root.rglob("trainer_state.json")]


def _top_files(root: Path) -> list[Path]:
    return [p for p in root.iterdir()]


# ---------------------------------------------------------------- transforms: (src, dst) -> bool (applied?)

def t_copy(src, dst):
    _copy(src, dst)
    return True


def _text_transform(pick, fn):
    def t(src, dst):
        _copy(src, dst)
        return _rewrite_text(pick(dst), fn)
    return t


def _all_text(root):
    return text_files(root)


def _logs(root):
    """line-based logs: console logs and jsonl"""
    return [p for p in text_files(root) if p.suffix in CONSOLE_EXT | {".jsonl"} and p in set(console_files(root)) | {
        q for q in text_files(root) if q.suffix == ".jsonl"}]


def _json_files(root):
    return [p for p in text_files(root) if p.suffix == ".json"]


def _cut_last_entry(src, dst, mid_entry: bool) -> bool:
    """Each trainer_state.json of the copy cut at its last log_history entry: inside it (`mid_entry`) or just
    before its opening brace."""
    _copy(src, dst)
    done = False
    for p in _trainer_states(dst):
        text = p.read_text(errors="replace")
        i = text.find('"log_history"')
        if i < 0:
            continue
        j = text.find("]", i)
        k = text.rfind("{", i, j if j > 0 else len(text))  # the last entry's opening brace
        end = text.find("}", k)
        if k < 0 or (mid_entry and end < 0):
            continue
        p.write_text(text[:k + max(3, (end - k) // 2)] if mid_entry else text[:k])
        done = True
    return done


def t_trunc_json(src, dst):
    """trainer_state.json cut inside log_history, in the middle of an entry (a file still being written)"""
    return _cut_last_entry(src, dst, mid_entry=True)


def t_trunc_json_entry(src, dst):
    """the same as trunc_json but cut exactly after the comma that closes the previous entry"""
    return _cut_last_entry(src, dst, mid_entry=False)


def t_trunc_jsonl(src, dst):
    _copy(src, dst)
    return _rewrite_text([p for p in text_files(dst) if p.suffix == ".jsonl"], _trunc_last_line)


def t_drop_jsonl(src, dst):
    _copy(src, dst)
    return _rewrite_text([p for p in text_files(dst) if p.suffix == ".jsonl"], _drop_last_line)


def t_trunc_log(src, dst):
    _copy(src, dst)
    return _rewrite_text(console_files(dst), _trunc_last_line)


def t_drop_log(src, dst):
    _copy(src, dst)
    return _rewrite_text(console_files(dst), _drop_last_line)


def _nest(parts):
    def t(src, dst):
        if dst.exists():
            shutil.rmtree(dst)
        inner = dst.joinpath(*parts)
        inner.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(src, inner, copy_function=shutil.copy2, symlinks=True)
        return True
    return t


def _final_step(ts: Path) -> int | None:
    try:
        d = json.loads(ts.read_text())
    except Exception:  # noqa: BLE001
        return None
    step = d.get("global_step") or d.get("max_steps")
    if not step:
        steps = [e.get("step") for e in d.get("log_history", []) if isinstance(e.get("step"), int)]
        step = max(steps) if steps else None
    return step


def t_ckpt_only(src, dst):
    """everything inside checkpoint-N/ (the run's output folder held only its last checkpoint)"""
    ts = src / "trainer_state.json"
    if not ts.is_file() or any(p.name.startswith("checkpoint-") for p in src.iterdir()):
        return False
    step = _final_step(ts)
    if not step:
        return False
    return _nest([f"checkpoint-{step}"])(src, dst)


def _prefix_states(ts_text: str, n: int) -> list[tuple[int, str]]:
    d = json.loads(ts_text)
    hist = d.get("log_history") or []
    final = _final_step_d(d, hist)
    out = []
    for frac in [(i + 1) / (n + 1) for i in range(n)]:
        step = int(final * frac)
        if step <= 0:
            continue
        dd = dict(d)
        dd["log_history"] = [e for e in hist if (e.get("step") or 0) <= step]
        dd["global_step"] = step
        dd["epoch"] = dd["log_history"][-1].get("epoch", d.get("epoch")) if dd["log_history"] else 0
        out.append((step, json.dumps(dd, indent=2)))
    return out


def _final_step_d(d, hist):
    return d.get("global_step") or max([e.get("step") or 0 for e in hist] or [0])


def _prefix_checkpoints(src, dst, keep_top: bool) -> bool:
    """checkpoint-<k>/ folders holding prefixes of the top-level trainer_state.json; the top-level file kept beside
    them (`keep_top`) or moved into checkpoint-<last>/."""
    ts = src / "trainer_state.json"
    if not ts.is_file() or any(p.name.startswith("checkpoint-") for p in src.iterdir()):
        return False
    try:
        prefixes = _prefix_states(ts.read_text(), 2)
    except Exception:  # noqa: BLE001
        return False
    _copy(src, dst)
    final = None
    if not keep_top:
        final = _final_step(ts)
        (dst / f"checkpoint-{final}").mkdir()
        shutil.move(str(dst / "trainer_state.json"), str(dst / f"checkpoint-{final}" / "trainer_state.json"))
    for step, text in prefixes:
        if step == final:
            continue
        (dst / f"checkpoint-{step}").mkdir(exist_ok=True)
        (dst / f"checkpoint-{step}" / "trainer_state.json").write_text(text)
    return True


def t_multi_ckpt(src, dst):
    """top-level trainer_state.json moved into checkpoint-<last>/, with checkpoint-<k>/ holding its prefixes"""
    return _prefix_checkpoints(src, dst, keep_top=False)


def t_multi_ckpt_top(src, dst):
    """top-level trainer_state.json kept, and checkpoint-<k>/ folders holding its prefixes beside it"""
    return _prefix_checkpoints(src, dst, keep_top=True)


def _rename(new_name):
    def t(src, dst):
        logs = [p for p in console_files(src) if p.parent == src]
        if len(logs) != 1 or logs[0].name == new_name:
            return False
        _copy(src, dst)
        (dst / logs[0].name).rename(dst / new_name)
        return True
    return t


def _repr_num(v):
    return repr(v)


def _hf_print(entry: dict) -> str:
    e = {k: v for k, v in entry.items() if k not in ("step",)}
    return "{" + ", ".join(f"'{k}': {_repr_num(v)}" for k, v in e.items()) + "}"


def _lone_state(src):
    """The case's top-level trainer_state.json (with a non-empty log_history), where no checkpoint folder holds
    another; else None."""
    ts = src / "trainer_state.json"
    if not ts.is_file() or any(p.name.startswith("checkpoint-") for p in src.iterdir()):
        return None
    try:
        d = json.loads(ts.read_text())
    except Exception:  # noqa: BLE001
        return None
    return d if isinstance(d, dict) and d.get("log_history") else None


def t_ts2console(src, dst):
    """trainer_state.json's log_history printed as the HF Trainer prints it ({'loss': ..., 'epoch': ...} lines, no
    step), in train.log; trainer_state.json removed"""
    d = _lone_state(src)
    if d is None or console_files(src):
        return False
    hist = d["log_history"]
    _copy(src, dst)
    (dst / "trainer_state.json").unlink()
    lines = ["***** Running training *****", f"  Total optimization steps = {d.get('max_steps')}"]
    for e in hist:
        lines.append(_hf_print(e))
    (dst / "train.log").write_text("\n".join(lines) + "\n")
    return True


TB_TAGS = {"loss": "train/loss", "grad_norm": "train/grad_norm", "learning_rate": "train/learning_rate",
           "epoch": "train/epoch", "eval_loss": "eval/loss"}


def t_ts2tb(src, dst):
    """trainer_state.json's log_history written as TensorBoard scalars (HF's TensorBoardCallback tags)"""
    d = _lone_state(src)
    if d is None or any(p.name.startswith("events.out.tfevents") for p in src.rglob("*")):
        return False
    hist = d["log_history"]
    from torch.utils.tensorboard import SummaryWriter
    _copy(src, dst)
    (dst / "trainer_state.json").unlink()
    logdir = dst / "runs" / "May01_12-00-00_host"
    w = SummaryWriter(log_dir=str(logdir))
    for e in hist:
        step = e.get("step")
        if not isinstance(step, int):
            continue
        for k, v in e.items():
            if k == "step" or not isinstance(v, (int, float)) or isinstance(v, bool):
                continue
            if k.startswith("eval_"):
                tag = "eval/" + k[5:]
            elif k.startswith("train_") and "train_loss" in e and "train_runtime" in e:
                tag = "train/" + k
            else:
                tag = TB_TAGS.get(k, "train/" + k)
            w.add_scalar(tag, v, step)
    w.close()
    return True


TRANSFORMS = {
    "copy": (t_copy, "plain copy (control)"),
    # 1. text form
    "crlf": (_text_transform(_all_text, lambda t: re.sub(r"(?<!\r)\n", "\r\n", t)), "CRLF line ends, every text file"),
    "crlf_logs": (_text_transform(_logs, lambda t: re.sub(r"(?<!\r)\n", "\r\n", t)), "CRLF, console logs + jsonl only"),
    "bom_logs": (_text_transform(_logs, lambda t: "\ufeff" + t if not t.startswith("\ufeff") else t), "UTF-8 BOM, logs"),
    "bom_json": (_text_transform(_json_files, lambda t: "\ufeff" + t if not t.startswith("\ufeff") else t),
                 "UTF-8 BOM, .json files"),
    "trailing_ws": (_text_transform(_logs, _lines(lambda l: l + "  ")), "two trailing spaces on each line, logs"),
    "no_final_nl": (_text_transform(_logs, lambda t: t.rstrip("\r\n")), "no newline after the last line, logs"),
    # 2. console decorations
    "ansi_line": (_text_transform(console_files, _lines(lambda l: "\x1b[32m" + l + "\x1b[0m")), "ANSI colour per line"),
    "ansi_num": (_text_transform(console_files, _lines(
        lambda l: re.sub(r"(?<![\w.])(-?\d+\.\d+(?:e[-+]?\d+)?)", "\x1b[1;36m\\1\x1b[0m", l))),
        "ANSI colour around each decimal number (rich)"),
    "ts_prefix": (_text_transform(console_files, _lines(lambda l: TS1 + l)), "'[date] [INFO] [trainer.py:123] ' prefix"),
    "ts_prefix2": (_text_transform(console_files, _lines(lambda l: TS2 + l)), "'date | INFO | ' prefix"),
    "rank_prefix": (_text_transform(console_files, _lines(lambda l: "[rank0]: " + l)), "'[rank0]: ' prefix"),
    "rank_prefix2": (_text_transform(console_files, _lines(lambda l: "0: " + l)), "'0: ' prefix (srun --label)"),
    "tqdm_cr": (_text_transform(console_files, _lines(_tqdm_line)), "tqdm bar + \\r before each log line"),
    "wrap200": (_text_transform(console_files, _wrap(200)), "lines hard-wrapped at 200 columns"),
    "wrap200_cr": (_text_transform(console_files, _wrap(200, at_cr=True)),
                   "lines hard-wrapped at 200 columns, a \\r starting a new screen line (a terminal's copy)"),
    "tqdm_echo": (_text_transform(console_files, _tqdm_echo),
                  "the log's own last tqdm bar redrawn + \\r before each log line (no invented counter)"),
    # 3. still being written
    "trunc_json": (t_trunc_json, "trainer_state.json cut mid-entry inside log_history"),
    "trunc_json_entry": (t_trunc_json_entry, "trainer_state.json cut right before the last log_history entry"),
    "trunc_jsonl": (t_trunc_jsonl, "last jsonl line half written"),
    "drop_jsonl": (t_drop_jsonl, "last jsonl line removed (reference for trunc_jsonl)"),
    "trunc_log": (t_trunc_log, "last console line half written"),
    "drop_log": (t_drop_log, "last console line removed (reference for trunc_log)"),
    # 4. layout
    "deeper1": (_nest(["output"]), "files one folder deeper (output/)"),
    "deeper2": (_nest(["output", "run1"]), "files two folders deeper (output/run1/)"),
    "ckpt_only": (t_ckpt_only, "everything inside checkpoint-N/"),
    "multi_ckpt": (t_multi_ckpt, "trainer_state.json in checkpoint-<last>/ with prefix checkpoints beside it"),
    "multi_ckpt_top": (t_multi_ckpt_top, "prefix checkpoint-<k>/trainer_state.json beside the top-level one"),
    "rename_nohup": (_rename("nohup.out"), "the one console log renamed nohup.out"),
    "rename_stdout": (_rename("stdout.txt"), "the one console log renamed stdout.txt"),
    "rename_output": (_rename("output.log"), "the one console log renamed output.log"),
    # 5. another container
    "ts2console": (t_ts2console, "trainer_state log_history printed as HF dict lines in train.log"),
    "ts2tb": (t_ts2tb, "trainer_state log_history as TensorBoard scalars"),
}
CHEAP = ["copy", "crlf", "crlf_logs", "bom_logs", "bom_json", "trailing_ws", "no_final_nl", "ansi_line", "ansi_num",
         "ts_prefix", "ts_prefix2", "rank_prefix", "rank_prefix2", "tqdm_cr", "wrap200", "trunc_jsonl", "drop_jsonl",
         "trunc_log", "drop_log", "trunc_json", "trunc_json_entry", "rename_nohup", "rename_stdout", "rename_output"]
SLOW = ["deeper1", "deeper2", "ckpt_only", "multi_ckpt", "multi_ckpt_top", "ts2console", "ts2tb"]


# ---------------------------------------------------------------- second pass: restarts, JSON form, notebooks, zips

def _split_point(lines: list[str]) -> int | None:
    """A line index near the middle of a console to cut it at: before a line that logs a metric where there is one
    in the middle third (a restart comes between two log lines), else the middle."""
    n = len(lines)
    if n < 6:
        return None
    mid = n // 2
    for off in range(0, n // 6 + 1):
        for i in (mid + off, mid - off):
            if 0 < i < n and re.search(r"loss", lines[i], re.I):
                return i
    return mid


def _split_console(first_name, second_name):
    """The one top-level console log split in two at a log line near its middle, as a restart (or logrotate)
    leaves it: the older half in `first_name`, the newer in `second_name` (names may use {name} for the log's own
    name); the older half's file is older on disk."""
    def t(src, dst):
        logs = [p for p in console_files(src) if p.parent == src]
        if len(logs) != 1:
            return False
        text = logs[0].read_bytes().decode("utf-8", errors="surrogateescape")
        lines = text.splitlines(keepends=True)
        cut = _split_point(lines)
        if cut is None:
            return False
        _copy(src, dst)
        import os
        st = (dst / logs[0].name).stat()
        (dst / logs[0].name).unlink()
        a = dst / first_name.format(name=logs[0].name)
        b = dst / second_name.format(name=logs[0].name)
        a.write_bytes("".join(lines[:cut]).encode("utf-8", errors="surrogateescape"))
        b.write_bytes("".join(lines[cut:]).encode("utf-8", errors="surrogateescape"))
        os.utime(a, (st.st_atime - 3600, st.st_mtime - 3600))
        os.utime(b, (st.st_atime, st.st_mtime))
        return True
    return t


def _rewrite_states(dump):
    """Every trainer_state.json of the copy re-serialised by `dump(obj) -> str`."""
    def t(src, dst):
        if not _trainer_states(src):
            return False
        _copy(src, dst)
        done = False
        for p in _trainer_states(dst):
            try:
                d = json.loads(p.read_text())
            except Exception:  # noqa: BLE001
                continue
            p.write_text(dump(d))
            done = True
        return done
    return t


_HF_DICT = re.compile(r"\{'[A-Za-z_][^{}]*\}")


def _dq_line(line: str) -> str:
    """An HF dict line `{'loss': 1.2, ...}` printed with json.dumps instead (double quotes, NaN as NaN)."""

    def sub(m):
        body = m.group(0)
        try:
            d = eval(body, {"__builtins__": {}}, {"nan": float("nan"), "inf": float("inf")})  # noqa: S307
        except Exception:  # noqa: BLE001
            return body
        if not isinstance(d, dict):
            return body
        return json.dumps(d)
    return _HF_DICT.sub(sub, line)


def t_ts2console_dq(src, dst):
    """ts2console with the dict lines printed by json.dumps (double quotes)"""
    if not t_ts2console(src, dst):
        return False
    log = dst / "train.log"
    log.write_text("\n".join(_dq_line(l) for l in log.read_text().split("\n")))
    return True


def t_ipynb(src, dst):
    """the one top-level console log saved as a Jupyter notebook's cell output (stream stdout), the log removed"""
    logs = [p for p in console_files(src) if p.parent == src]
    if len(logs) != 1:
        return False
    text = logs[0].read_bytes().decode("utf-8", errors="replace")
    _copy(src, dst)
    (dst / logs[0].name).unlink()
    nb = {"cells": [
        {"cell_type": "code", "execution_count": 1, "metadata": {}, "source": ["trainer.train()\n"],
         "outputs": [{"output_type": "stream", "name": "stdout", "text": text.splitlines(keepends=True)}]}],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5}
    (dst / (Path(logs[0].name).stem + ".ipynb")).write_text(json.dumps(nb, indent=1))
    return True


def t_unzip_top(src, dst):
    """the run folder inside one extra folder of its own name (what unzipping <case>.zip adds)"""
    return _nest([src.name])(src, dst)


def t_unzip_main(src, dst):
    """the run folder inside <case>-main/ (a GitHub 'Download ZIP')"""
    return _nest([src.name + "-main"])(src, dst)


TS_DOCKER = "2024-05-01T12:00:00.123456789Z "  # `docker logs -t` / `kubectl logs --timestamps`: every line, stderr too

TRANSFORMS.update({
    "ts_docker": (_text_transform(console_files, _lines(lambda l: TS_DOCKER + l)),
                  "'2024-05-01T12:00:00.123456789Z ' before every line (docker logs -t, kubectl --timestamps)"),
    "split_rotate": (_split_console("{name}.1", "{name}"), "console split in two: older half {log}.1, newer {log}"),
    "split_nohup": (_split_console("nohup.out", "train_resume.log"),
                    "console split by a restart: older half nohup.out, newer train_resume.log"),
    "split_two": (_split_console("{name}", "resume_{name}"), "console split: older half {log}, newer resume_{log}"),
    "ts_indent4": (_rewrite_states(lambda d: json.dumps(d, indent=4)), "trainer_state.json with indent 4"),
    "ts_oneline": (_rewrite_states(lambda d: json.dumps(d)), "trainer_state.json on one line"),
    "ts_compact": (_rewrite_states(lambda d: json.dumps(d, separators=(",", ":"))), "trainer_state.json compact"),
    "dq_dicts": (_text_transform(console_files, _lines(_dq_line)), "HF dict lines printed by json.dumps"),
    "ts2console_dq": (t_ts2console_dq, "ts2console with double-quoted (json.dumps) dict lines"),
    "ipynb": (t_ipynb, "the console as a notebook cell's stream output (.ipynb), the log removed"),
    "unzip_top": (t_unzip_top, "run folder inside <case>/ (unzip)"),
    "unzip_main": (t_unzip_main, "run folder inside <case>-main/ (GitHub zip)"),
})
SECOND = ["ts_docker", "wrap200_cr", "tqdm_echo", "split_rotate", "split_nohup", "split_two", "ts_indent4", "ts_oneline", "ts_compact", "dq_dicts",
          "ts2console_dq", "ipynb", "unzip_top", "unzip_main"]



# ---------------------------------------------------------------- third pass: a notebook's other shapes

def _notebooks(root: Path) -> list[Path]:
    """The notebooks of a case (not an autosave copy under .ipynb_checkpoints/)."""
    return [p for p in sorted(root.rglob("*.ipynb")) if ".ipynb_checkpoints" not in p.parts]


def _nb_load(p: Path) -> dict:
    return json.loads(p.read_bytes().decode("utf-8-sig", errors="replace"))


def _nb_save(p: Path, nb: dict) -> None:
    st = p.stat() if p.exists() else None
    p.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if st:
        import os
        os.utime(p, (st.st_atime, st.st_mtime))


def _nb_cells(nb: dict) -> list:
    if isinstance(nb.get("cells"), list):
        return nb["cells"]
    return [c for w in nb.get("worksheets") or [] for c in w.get("cells") or []]


def _nb_transform(fn):
    """A transform editing each notebook's JSON in place: fn(nb, path) -> bool (changed?)."""
    def t(src, dst):
        if not _notebooks(src):
            return False
        _copy(src, dst)
        done = False
        for p in _notebooks(dst):
            nb = _nb_load(p)
            if fn(nb, p):
                _nb_save(p, nb)
                done = True
        return done
    return t


def _joined_text(v) -> str:
    return "".join(v) if isinstance(v, list) else (v if isinstance(v, str) else "")


def _src_lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _judged_cells(nb: dict, path: Path) -> list[int]:
    """The indices (in the cell list) of the cells of the training the tool judges (its last), by the reader's own
    split of the notebook into trainings; [] where it finds none."""
    from forensics.ingest import notebook, notebook_outputs, notebook_trainings
    cells = [c for c in _nb_cells(nb) if isinstance(c, dict)]
    shown = [[notebook_outputs.output_text(o) for o in notebook_outputs.cell_outputs(c)] for c in cells]
    # the reader's own arguments: a training function's closing held-out losses split trainings too
    runs = notebook_trainings.trainings(shown, path, notebook._closing_evals(cells), cells)
    return runs[-1] if runs else []


def t_nb3(src, dst):
    """each notebook converted to nbformat 3 (worksheets, input/prompt_number, pyout, pyerr, stream key, bare mime
    keys), by nbformat's own downgrade (what an old IPython saved)"""
    import nbformat
    if not _notebooks(src):
        return False
    _copy(src, dst)
    for p in _notebooks(dst):
        nb = nbformat.reads(p.read_text(encoding="utf-8", errors="replace"), as_version=4)
        v3 = nbformat.convert(nb, 3)
        p.write_text(nbformat.writes(v3), encoding="utf-8")
    return True


def _ec_clear(nb, path):
    for c in _nb_cells(nb):
        if c.get("cell_type") == "code":
            c["execution_count"] = None
            for o in c.get("outputs") or []:
                if "execution_count" in o:
                    o["execution_count"] = None
    return True


def _ec_all(nb, path):
    n = 0
    for c in _nb_cells(nb):
        if c.get("cell_type") == "code":
            n += 1
            c["execution_count"] = n
            for o in c.get("outputs") or []:
                if "execution_count" in o:
                    o["execution_count"] = n
    return True


def _keep_outputs(train: bool):
    def fn(nb, path):
        judged = set(_judged_cells(nb, path))
        if not judged:
            return False
        for i, c in enumerate(_nb_cells(nb)):
            if c.get("cell_type") == "code" and (i in judged) != train:
                c["outputs"] = []
        return True
    return fn


def _table_html_edit(edit):
    """Every HTML display holding the Trainer's table (`Loss</th>`) rewritten by edit(html) -> html."""
    def fn(nb, path):
        done = False
        for c in _nb_cells(nb):
            for o in c.get("outputs") or []:
                data = o.get("data")
                if not isinstance(data, dict):
                    continue
                html = _joined_text(data.get("text/html"))
                if "Loss</th>" not in html:
                    continue
                new = edit(html)
                if new != html:
                    data["text/html"] = new if isinstance(data.get("text/html"), str) else _src_lines(new)
                    done = True
        return done
    return fn


def _html_oneline(html):
    return "".join(line.strip() for line in html.split("\n"))


def _html_th_attr(html):
    return re.sub(r"<th>", '<th style="text-align: left;" scope="col">', html)


def _html_nbsp(html):
    def cell(m):
        return m.group(1) + m.group(2).replace(" ", "&nbsp;") + m.group(3)
    return re.sub(r"(<t[hd][^>]*>)([^<]*)(</t[hd]>)", cell, html)


def _html_div(html):
    return '<div class="output_subarea output_html rendered_html"><div style="overflow-x:auto">' + html + "</div></div>"


def _stream_split(interleave: bool):
    def fn(nb, path):
        done = False
        for c in _nb_cells(nb):
            outs = c.get("outputs")
            if not outs:
                continue
            new = []
            for o in outs:
                if o.get("output_type") != "stream":
                    new.append(o)
                    continue
                lines = _joined_text(o.get("text")).splitlines(keepends=True)
                if len(lines) < 2:
                    new.append(o)
                    continue
                for k, line in enumerate(lines):
                    name = ("stdout" if k % 2 == 0 else "stderr") if interleave else o.get("name", "stdout")
                    new.append({"name": name, "output_type": "stream", "text": [line]})
                done = True
            c["outputs"] = new
        return done
    return fn


def _table_rows(nb: dict, path: Path):
    """The rows of the judged training's last Trainer table, as (header, rows, progress plan) via the reader's
    HTML-to-text; None where there is none with a Step column."""
    from forensics.ingest.results_table import trainer_tables
    cells = _nb_cells(nb)
    judged = _judged_cells(nb, path)
    text = ""
    for i in judged:
        for o in cells[i].get("outputs") or []:
            data = o.get("data") if isinstance(o.get("data"), dict) else {}
            html = _joined_text(data.get("text/html"))
            if "Loss</th>" in html:
                text = trainer_tables(html) or text
    if not text:
        return None
    lines = text.strip("\n").split("\n")
    progress = lines[0] if not "\t" in lines[0] else ""
    rows = [l.split("\t") for l in lines if "\t" in l]
    if not rows or rows[0][0] != "Step":
        return None
    m = re.search(r"\[\s*(\d+)/(\d+)", progress)
    return rows[0], rows[1:], (int(m.group(1)), int(m.group(2))) if m else None


def _num(s):
    try:
        return float(s)
    except ValueError:
        return None


def _state_from_table(header, rows, plan) -> dict | None:
    hist = []
    for row in rows:
        d = dict(zip(header, row))
        try:
            step = int(float(d["Step"]))
        except (KeyError, ValueError):
            continue
        ep = _num(d.get("Epoch", ""))
        tl = _num(d.get("Training Loss", ""))
        if tl is not None:
            e = {"loss": tl, "step": step}
            if ep is not None:
                e["epoch"] = ep
            hist.append(e)
        ev = {}
        for k, v in d.items():
            if k in ("Step", "Epoch", "Training Loss"):
                continue
            x = _num(v)
            if x is None:
                continue
            key = "eval_loss" if k == "Validation Loss" else "eval_" + re.sub(r"\W+", "_", k.strip().lower())
            ev[key] = x
        if ev:
            ev["step"] = step
            if ep is not None:
                ev["epoch"] = ep
            hist.append(ev)
    if not hist:
        return None
    last = max(e["step"] for e in hist)
    return {"best_metric": None, "best_model_checkpoint": None, "epoch": hist[-1].get("epoch", 0), "eval_steps": None,
            "global_step": plan[0] if plan else last, "is_hyper_param_search": False, "is_local_process_zero": True,
            "is_world_process_zero": True, "log_history": hist, "logging_steps": None,
            "max_steps": plan[1] if plan else last, "num_train_epochs": None, "total_flos": 0,
            "train_batch_size": None, "trial_name": None, "trial_params": None}


def _beside_run(in_checkpoint: bool):
    """the notebook with its own run's output folder beside it: a trainer_state.json built from the judged table's
    rows (outputs/checkpoint-N/ or outputs/)"""
    def t(src, dst):
        nbs = _notebooks(src)
        if len(nbs) != 1:
            return False
        got = _table_rows(_nb_load(nbs[0]), nbs[0])
        if not got:
            return False
        state = _state_from_table(*got)
        if not state:
            return False
        _copy(src, dst)
        where = dst / "outputs" / (f"checkpoint-{state['global_step']}" if in_checkpoint else "")
        where.mkdir(parents=True, exist_ok=True)
        (where / "trainer_state.json").write_text(json.dumps(state, indent=2))
        return True
    return t


def t_nb_autosave(src, dst):
    """an identical autosave copy in .ipynb_checkpoints/<name>-checkpoint.ipynb beside the notebook"""
    nbs = _notebooks(src)
    if not nbs:
        return False
    _copy(src, dst)
    for p in _notebooks(dst):
        (p.parent / ".ipynb_checkpoints").mkdir(exist_ok=True)
        shutil.copy2(p, p.parent / ".ipynb_checkpoints" / (p.stem + "-checkpoint.ipynb"))
    return True


_EDA_NB = {"cells": [
    {"cell_type": "markdown", "metadata": {}, "source": ["# Data exploration\n"]},
    {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [{"name": "stdout", "output_type": "stream",
     "text": ["DatasetDict({\n", "    train: Dataset({\n", "        features: ['instruction', 'output'],\n",
              "        num_rows: 5000\n", "    })\n", "    test: Dataset({\n",
              "        features: ['instruction', 'output'],\n", "        num_rows: 500\n", "    })\n", "})\n"]}],
     "source": ["from datasets import load_dataset\n", "ds = load_dataset('json', data_files='data.json')\n", "print(ds)"]},
    {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [{"data": {"text/html": [
        "<div>\n<table border=\"1\" class=\"dataframe\">\n  <thead>\n    <tr style=\"text-align: right;\">\n",
        "      <th></th>\n      <th>instruction</th>\n      <th>output</th>\n    </tr>\n  </thead>\n  <tbody>\n",
        "    <tr>\n      <th>0</th>\n      <td>Summarize the report</td>\n      <td>The report says...</td>\n    </tr>\n",
        "  </tbody>\n</table>\n</div>"], "text/plain": ["            instruction              output\n",
        "0  Summarize the report  The report says..."]}, "execution_count": 2, "metadata": {},
        "output_type": "execute_result"}], "source": ["df = ds['train'].to_pandas()\n", "df.head(1)"]},
    {"cell_type": "code", "execution_count": 3, "metadata": {}, "outputs": [{"name": "stdout", "output_type": "stream",
     "text": ["mean tokens: 212.4\n", "max tokens: 1024\n", "share over 512: 0.031\n"]}],
     "source": ["lens = [len(tok(x).input_ids) for x in df.output]\n", "print(...)"]},
    {"cell_type": "code", "execution_count": 4, "metadata": {}, "outputs": [{"data": {"image/png": "iVBORw0KGgo=",
     "text/plain": ["<Figure size 640x480 with 1 Axes>"]}, "metadata": {}, "output_type": "display_data"}],
     "source": ["plt.hist(lens, bins=50); plt.show()"]}],
    "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
    "nbformat": 4, "nbformat_minor": 5}


def t_nb_eda(src, dst):
    """an unrelated notebook (a look at the data: the dataset, a DataFrame, token lengths, a histogram) beside"""
    if not _notebooks(src):
        return False
    _copy(src, dst)
    (dst / "data_exploration.ipynb").write_text(json.dumps(_EDA_NB, indent=1))
    return True


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _indent(text: str) -> str:
    return "    " + text.replace("\n", "\n    ")


def _export_md(nb: dict, stem: str) -> str:
    """nbconvert --to markdown's template: code in ```python fences, streams / plain results / tracebacks as
    4-space indented blocks, text/html raw, images as links."""
    out = []
    for ci, c in enumerate(_nb_cells(nb)):
        src = _joined_text(c.get("source"))
        if c.get("cell_type") == "markdown":
            out.append(src + "\n")
            continue
        if c.get("cell_type") != "code":
            out.append(src + "\n")
            continue
        out.append("```python\n" + src + "\n```\n")
        for oi, o in enumerate(c.get("outputs") or []):
            k = o.get("output_type")
            if k == "stream":
                out.append(_indent(_joined_text(o.get("text"))) + "\n")
            elif k == "error":
                out.append("\n".join(_indent(_ANSI.sub("", l)) for l in o.get("traceback") or []) + "\n")
            else:
                data = o.get("data") or {}
                if "text/html" in data:
                    out.append(_joined_text(data["text/html"]) + "\n")
                elif "image/png" in data:
                    out.append(f"![png]({stem}_files/{stem}_{ci}_{oi}.png)\n")
                elif "text/plain" in data:
                    out.append(_indent(_joined_text(data["text/plain"])) + "\n")
    return "\n".join(out)


def _export_script(nb: dict) -> str:
    out = ["#!/usr/bin/env python\n# coding: utf-8\n"]
    for c in _nb_cells(nb):
        src = _joined_text(c.get("source"))
        if c.get("cell_type") == "code":
            ec = c.get("execution_count")
            out.append(f"# In[{ec if ec is not None else ' '}]:\n\n\n" + src + "\n\n")
        else:
            out.append("\n".join("# " + l for l in src.split("\n")) + "\n\n")
    return "\n".join(out)


def _export_html(nb: dict) -> str:
    import html as H
    out = ["<!DOCTYPE html>\n<html>\n<head><meta charset=\"utf-8\" /><title>Notebook</title></head>\n<body>\n"]
    for c in _nb_cells(nb):
        src = _joined_text(c.get("source"))
        out.append(f'<div class="jp-Cell jp-{"CodeCell" if c.get("cell_type") == "code" else "MarkdownCell"}">'
                   f'<pre>{H.escape(src)}</pre>\n')
        for o in c.get("outputs") or []:
            k = o.get("output_type")
            if k == "stream":
                out.append(f'<div class="jp-RenderedText" data-mime-type="application/vnd.jupyter.{o.get("name")}">'
                           f'<pre>{H.escape(_joined_text(o.get("text")))}</pre></div>\n')
            elif k == "error":
                out.append('<div class="jp-RenderedText" data-mime-type="application/vnd.jupyter.stderr"><pre>'
                           + H.escape("\n".join(_ANSI.sub("", l) for l in o.get("traceback") or [])) + "</pre></div>\n")
            else:
                data = o.get("data") or {}
                if "text/html" in data:
                    out.append('<div class="jp-RenderedHTMLCommon">' + _joined_text(data["text/html"]) + "</div>\n")
                elif "text/plain" in data:
                    out.append("<pre>" + H.escape(_joined_text(data["text/plain"])) + "</pre>\n")
        out.append("</div>\n")
    out.append("</body>\n</html>\n")
    return "".join(out)


def _exported(suffix: str, render):
    """each notebook replaced by its `jupyter nbconvert --to ...` export (the notebook removed)"""
    def t(src, dst):
        if not _notebooks(src):
            return False
        _copy(src, dst)
        for p in _notebooks(dst):
            nb = _nb_load(p)
            p.with_suffix(suffix).write_text(render(nb, p.stem), encoding="utf-8")
            p.unlink()
        return True
    return t


TRANSFORMS.update({
    "nb3": (t_nb3, "notebook converted to nbformat 3 by nbformat (worksheets, pyout, pyerr, bare mime keys)"),
    "nb_ec_clear": (_nb_transform(_ec_clear), "execution counts cleared (nbstripout --keep-output)"),
    "nb_ec_all": (_nb_transform(_ec_all), "every code cell given an execution count (Run All)"),
    "nb_keep_train": (_nb_transform(_keep_outputs(True)), "outputs cleared except the judged training's cells"),
    "nb_drop_train": (_nb_transform(_keep_outputs(False)), "the judged training's cells' outputs cleared (reverse)"),
    "nb_html_oneline": (_nb_transform(_table_html_edit(_html_oneline)), "Trainer table HTML on one line"),
    "nb_html_th_attr": (_nb_transform(_table_html_edit(_html_th_attr)), "Trainer table <th> with attributes"),
    "nb_html_nbsp": (_nb_transform(_table_html_edit(_html_nbsp)), "Trainer table cells' spaces as &nbsp;"),
    "nb_html_div": (_nb_transform(_table_html_edit(_html_div)), "Trainer table HTML inside two more divs"),
    "nb_stream_split": (_nb_transform(_stream_split(False)), "each stream line its own output"),
    "nb_stream_mix": (_nb_transform(_stream_split(True)), "each stream line its own output, stdout/stderr alternating"),
    "nb_ckpt": (_beside_run(True), "beside outputs/checkpoint-N/trainer_state.json built from the table's rows"),
    "nb_outdir": (_beside_run(False), "beside outputs/trainer_state.json built from the table's rows"),
    "nb_autosave": (t_nb_autosave, "beside an identical .ipynb_checkpoints/<name>-checkpoint.ipynb"),
    "nb_eda": (t_nb_eda, "beside an unrelated data-exploration notebook"),
    "nb_md": (_exported(".md", _export_md), "nbconvert --to markdown (outputs as indented blocks)"),
    "nb_script": (_exported(".py", lambda nb, stem: _export_script(nb)), "nbconvert --to script (code only)"),
    "nb_html": (_exported(".html", lambda nb, stem: _export_html(nb)), "nbconvert --to html"),
})
NOTEBOOK = ["nb3", "nb_ec_clear", "nb_ec_all", "nb_keep_train", "nb_drop_train", "nb_html_oneline", "nb_html_th_attr",
            "nb_html_nbsp", "nb_html_div", "nb_stream_split", "nb_stream_mix", "nb_ckpt", "nb_outdir", "nb_autosave",
            "nb_eda", "nb_md", "nb_script", "nb_html"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("transforms", nargs="*")
    ap.add_argument("--cheap", action="store_true")
    ap.add_argument("--slow", action="store_true")
    ap.add_argument("--second", action="store_true", help="the second pass's transforms (SECOND)")
    ap.add_argument("--notebook", action="store_true", help="the notebook transforms (NOTEBOOK)")
    ap.add_argument("--every", type=int, default=1, help="take every Nth case")
    ap.add_argument("--case", action="append", help="only this case (repeatable)")
    ap.add_argument("--skip", action="append", default=[], help="leave this case out (repeatable; a slow one)")
    ap.add_argument("--from", dest="first", help="first corpus case name (prefix, case-insensitive)")
    ap.add_argument("--to", dest="last", help="last corpus case name (prefix, case-insensitive, inclusive)")
    ap.add_argument("--shared", choices=("yes", "no", "only"), default="yes", help="the shared cases too / not / alone")
    ap.add_argument("--work", default=str(WORK), help=f"where the copies go (default {WORK})")
    ap.add_argument("--all", action="store_true", help="print unchanged rows too")
    ap.add_argument("--out", help="write every row as JSON lines here")
    ap.add_argument("--baseline", help="cache of original answers (JSON), read if there, written if not")
    ap.add_argument("--keep", action="store_true", help="keep the transformed copies under --work")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    if args.list:
        for name, (_, doc) in TRANSFORMS.items():
            print(f"{name:18} {doc}")
        return 0
    names = list(args.transforms) + (CHEAP if args.cheap else []) + (SLOW if args.slow else []) + (
        SECOND if args.second else []) + (NOTEBOOK if args.notebook else [])
    names = list(dict.fromkeys(names))
    unknown = [n for n in names if n not in TRANSFORMS]
    if unknown or not names:
        ap.error(f"unknown transforms {unknown}; --list names them")
    base: dict = {}
    if args.baseline and Path(args.baseline).is_file():
        base = json.loads(Path(args.baseline).read_text())
    out = open(args.out, "w") if args.out else None
    counts: dict[str, list[int]] = {n: [0, 0] for n in names}
    print("case\ttransform\tchanged\toriginal\tnew", flush=True)
    work = Path(args.work)
    for case in cases(args.every, args.case, args.first, args.last, args.shared):
        if case.name in args.skip:
            continue
        if case.name not in base:
            base[case.name] = answer(case)
        orig = base[case.name]
        for name in names:
            fn = TRANSFORMS[name][0]
            dst = work / name / case.name
            t0 = time.time()
            try:
                applied = fn(case, dst)
            except Exception as e:  # noqa: BLE001
                print(f"{case.name}\t{name}\tTRANSFORM-ERROR\t{e}", flush=True)
                continue
            if not applied:
                shutil.rmtree(dst, ignore_errors=True)
                continue
            new = answer(dst)
            changed = diff(orig, new)
            counts[name][0] += 1
            counts[name][1] += bool(changed)
            if changed or args.all:
                print(f"{case.name}\t{name}\t{','.join(changed) or '-'}\t{short(orig)}\t{short(new)}", flush=True)
            if out:
                out.write(json.dumps({"case": case.name, "transform": name, "changed": changed, "original": orig,
                                      "new": new, "secs": round(time.time() - t0, 2)}) + "\n")
                out.flush()
            if not args.keep:
                shutil.rmtree(dst, ignore_errors=True)
    if args.baseline:
        Path(args.baseline).write_text(json.dumps(base))
    print("\n# transform\tcases run\tanswers changed")
    for n, (ran, ch) in counts.items():
        print(f"# {n}\t{ran}\t{ch}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
