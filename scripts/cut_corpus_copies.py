"""Cut and corrupted copies of real corpus runs: does every reader fail with one clear line, never a traceback?

A user's run is often half written (a console log cut mid-line, a trainer_state.json being saved) or damaged (a
bad sector, a log with bytes of another encoding). For a seeded sample of corpus cases (tests/realworld/<case>)
whose main file is a console log (.log .txt .out), a notebook (.ipynb), a trainer_state.json or a .jsonl, the
case folder is copied to a temp dir and its main file replaced by each variant:

    cut_random   cut at a random byte (mid-line, mid-number, mid-JSON)
    cut_third    cut at 1/3 of its size
    overwrite    200 random bytes overwritten in the middle
    empty        an empty file
    bad_utf8     bytes that are no UTF-8 spliced in at a few places

`forensics.analyze(copy)` runs in-process on each; an exception other than ForensicsError (the library's own
user-error class, which the CLI prints as one line) is a crash and is listed with the deepest forensics frame of
its traceback (the reader that raised). For --cli of the copies, `python -m forensics analyze COPY --json` runs as a
subprocess too: its exit code must be 0/1/2, stdout valid JSON (0/1) or stderr one line without a traceback (2).

    PYTHONPATH=. python scripts/cut_corpus_copies.py                    # ~250 cases x 5 variants, 20 by CLI
    PYTHONPATH=. python scripts/cut_corpus_copies.py --cases 40 --seed 3 --out /tmp/cuts.jsonl

Prints one line per crash, then counts per variant and per raising module. Exit code 1 if anything crashed.
One process (the corpus machine's cores are shared); about 10 minutes of CPU for the default sample.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import traceback
import warnings
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
import forensics  # noqa: E402
from forensics.errors import ForensicsError  # noqa: E402

CORPUS = REPO / "tests" / "realworld"
CONSOLE_SUFFIXES = {".log", ".txt", ".out"}
NOT_LOGS = {"requirements.txt", "license.txt", "readme.txt", "cmakelists.txt"}
VARIANTS = ("cut_random", "cut_third", "overwrite", "empty", "bad_utf8")
TIMEOUT_S = 120  # a damaged file must not make a reader loop: a variant past this is reported as a hang


def file_type(path: Path) -> str | None:
    """The sampled kind of a main-file candidate, or None for a file this check does not cut."""
    name = path.name.lower()
    if name == "trainer_state.json":
        return "trainer_state"
    if path.suffix == ".ipynb":
        return "notebook"
    if path.suffix == ".jsonl":
        return "jsonl"
    if path.suffix in CONSOLE_SUFFIXES and name not in NOT_LOGS:
        return "console"
    return None


def main_file(case: Path) -> tuple[Path, str] | None:
    """The case's largest file of a sampled kind (the one its verdict rests on, in nearly every case)."""
    found = [(p.stat().st_size, p) for p in case.rglob("*") if p.is_file() and file_type(p)]
    if not found:
        return None
    _, path = max(found, key=lambda sp: (sp[0], str(sp[1])))
    return path, file_type(path)


def sample(n: int, rng: random.Random) -> list[tuple[Path, Path, str]]:
    """About n (case, main file, kind) spread over the kinds: an equal share each, a small kind's rest to the others."""
    by_kind: dict[str, list] = {}
    for exp in sorted((CORPUS / "expected").glob("*.json")):
        case = CORPUS / exp.stem
        found = main_file(case) if case.is_dir() else None
        if found:
            by_kind.setdefault(found[1], []).append((case, found[0], found[1]))
    for items in by_kind.values():
        rng.shuffle(items)
    picked, kinds = [], sorted(by_kind, key=lambda k: len(by_kind[k]))
    for i, kind in enumerate(kinds):
        share = (n - len(picked)) // (len(kinds) - i)
        picked += by_kind[kind][:share]
    return picked


def variant_bytes(raw: bytes, variant: str, rng: random.Random) -> bytes:
    """The main file's bytes as `variant` makes them."""
    if variant == "cut_random":
        return raw[:rng.randrange(1, len(raw))] if len(raw) > 1 else b""
    if variant == "cut_third":
        return raw[:len(raw) // 3]
    if variant == "overwrite":
        at = max(0, len(raw) // 2 - 100)
        return raw[:at] + rng.randbytes(200) + raw[at + 200:]
    if variant == "empty":
        return b""
    if variant == "bad_utf8":
        out = raw
        for junk in (b"\xff\xfe", b"\xc3\x28", b"\x80\x81\xfe", b"\xed\xa0\x80"):
            at = rng.randrange(0, len(out) + 1)
            out = out[:at] + junk + out[at:]
        return out
    raise ValueError(variant)


def deepest_forensics_frame(tb) -> str:
    """`module.py:line in function` of the last traceback frame inside forensics/ (the code that raised)."""
    frames = traceback.extract_tb(tb)
    ours = [f for f in frames if f"{os.sep}forensics{os.sep}" in f.filename] or frames
    f = ours[-1]
    rel = f.filename.split(f"{os.sep}forensics{os.sep}", 1)[-1]
    return f"forensics/{rel}:{f.lineno} in {f.name}"


def _alarm(*_):
    raise TimeoutError(f"analyze ran past {TIMEOUT_S} s")


def analyze_copy(folder: Path) -> dict:
    """One analyze of a copy: 'ok' with its status, 'user_error' (ForensicsError), or 'crash' / 'hang' with where."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIMEOUT_S)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = forensics.analyze(folder)
        return {"outcome": "ok", "status": a.status, "skipped": [str(s) for s in a.skipped][:5]}
    except ForensicsError as err:
        return {"outcome": "user_error", "message": str(err)[:300]}
    except TimeoutError as err:
        return {"outcome": "hang", "error": str(err), "frame": deepest_forensics_frame(err.__traceback__)}
    except Exception as err:  # noqa: BLE001 - finding these is the point of this script
        return {"outcome": "crash", "error": f"{type(err).__name__}: {str(err)[:200]}",
                "frame": deepest_forensics_frame(err.__traceback__)}
    finally:
        signal.alarm(0)


def cli_copy(folder: Path) -> dict:
    """The CLI on a copy: the exit code, and whether its output keeps the contract (JSON, or one error line)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    try:
        done = subprocess.run([sys.executable, "-m", "forensics", "analyze", str(folder), "--json"], env=env,
                              capture_output=True, text=True, timeout=TIMEOUT_S * 2)
    except subprocess.TimeoutExpired:
        return {"cli_ok": False, "cli_problem": "hang"}
    problem = None
    if done.returncode not in (0, 1, 2):
        problem = f"exit code {done.returncode}"
    elif "Traceback" in done.stderr:
        problem = "traceback on stderr"
    elif done.returncode == 2:
        errors = [ln for ln in done.stderr.splitlines() if ln.startswith("forensics:") and "skipped" not in ln]
        problem = None if len(errors) == 1 else f"{len(errors)} error lines on stderr"
    else:
        try:
            json.loads(done.stdout)
        except ValueError:
            problem = "stdout is not JSON"
    return {"cli_ok": problem is None, "cli_problem": problem, "cli_rc": done.returncode,
            "cli_stderr_tail": done.stderr.strip().splitlines()[-1:] if problem else []}


def run_case(case: Path, main: Path, kind: str, rng: random.Random, cli_variants: set, work: Path) -> list[dict]:
    """Every variant of one case: a fresh copy each time, the main file replaced, the copy analysed."""
    raw = main.read_bytes()
    rel = main.relative_to(case)
    rows = []
    for variant in VARIANTS:
        dst = work / case.name
        if dst.exists():
            shutil.rmtree(dst)
        shutil.copytree(case, dst, symlinks=True)
        (dst / rel).write_bytes(variant_bytes(raw, variant, rng))
        row = {"case": case.name, "file": str(rel), "kind": kind, "variant": variant, **analyze_copy(dst)}
        if (case.name, variant) in cli_variants:
            row.update(cli_copy(dst))
        rows.append(row)
        shutil.rmtree(dst)
    return rows


def summary(rows: list[dict]) -> None:
    """One line per crash or CLI breach, then counts per variant and per raising frame."""
    for r in rows:
        if r["outcome"] in ("crash", "hang"):
            print(f"CRASH\t{r['case']}\t{r['variant']}\t{r['kind']}\t{r['frame']}\t{r['error']}")
        if r.get("cli_ok") is False:
            print(f"CLI\t{r['case']}\t{r['variant']}\t{r['cli_problem']}\t{r.get('cli_stderr_tail')}")
    print(f"\n{len(rows)} variants of {len({r['case'] for r in rows})} cases")
    for variant in VARIANTS:
        counts = Counter(r["outcome"] for r in rows if r["variant"] == variant)
        print(f"  {variant:11s} " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print("  kinds: " + ", ".join(f"{k} {v}" for k, v in sorted(Counter(r["kind"] for r in rows).items())))
    frames = Counter(r["frame"].split(":")[0] for r in rows if r["outcome"] in ("crash", "hang"))
    print("crashes by module: " + (", ".join(f"{k} {v}" for k, v in frames.most_common()) or "none"))
    cli = [r for r in rows if "cli_ok" in r]
    print(f"CLI runs: {len(cli)}, contract kept {sum(r['cli_ok'] for r in cli)}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=250, help="how many corpus cases (spread over the file kinds)")
    ap.add_argument("--cli", type=int, default=20, help="how many of the variants also run through the CLI")
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--only", nargs="*", help="just these cases (by folder name)")
    ap.add_argument("--out", type=Path, help="write every row as JSON lines here")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    picked = sample(args.cases, rng) if not args.only else \
        [(CORPUS / c, *main_file(CORPUS / c)) for c in args.only if main_file(CORPUS / c)]
    pairs = [(case.name, v) for case, _, _ in picked for v in VARIANTS]
    cli_variants = set(rng.sample(pairs, min(args.cli, len(pairs))))
    rows = []
    with tempfile.TemporaryDirectory(prefix="cut_corpus_") as tmp:
        for i, (case, main_path, kind) in enumerate(picked, 1):
            print(f"[{i}/{len(picked)}] {case.name} ({kind})", file=sys.stderr, flush=True)
            rows += run_case(case, main_path, kind, rng, cli_variants, Path(tmp))
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    summary(rows)
    return 1 if any(r["outcome"] in ("crash", "hang") or r.get("cli_ok") is False for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
