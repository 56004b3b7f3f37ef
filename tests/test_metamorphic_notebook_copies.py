"""Tests that notebook copies (nbformat 3, Trainer tables' HTML variants, a Markdown export) keep the run's answer.

Metamorphic failures found by bench/metamorphic.py's notebook pass (`--notebook`): a real notebook case in a shape
a user's copy of the same run could plausibly have -- saved by an old IPython (nbformat 3), the Trainer's table
rendered with `<th>` attributes or `&nbsp;` entities, the notebook exported by `jupyter nbconvert --to markdown` --
where the tool's answer changes though the run did not. Each builds the transformed copy in tmp_path from the real
case file and asserts the answer the tool gives on the untouched notebook. Each fails on the code it was found on."""
from __future__ import annotations


import json
import re
from pathlib import Path

import forensics
from support.metamorphic_cases import answer, case_copy


def _notebook(run: Path) -> Path:
    (nb,) = [p for p in run.glob("*.ipynb")]
    return nb


def _joined(value) -> str:
    return "".join(value) if isinstance(value, list) else (value or "")


# --- 1. nbformat 3 (an old IPython's save): the code cells' `input` / `prompt_number` are not read ------------------

_MIME_V3 = {"text/plain": "text", "text/html": "html", "image/png": "png", "image/jpeg": "jpeg",
            "image/svg+xml": "svg", "text/latex": "latex", "application/json": "json",
            "application/javascript": "javascript"}


def _to_v3(nb: dict) -> dict:
    """nbformat's own v4 -> v3 downgrade: one worksheet; a code cell's source as `input`, its execution count as
    `prompt_number`; execute_result as `pyout`, error as `pyerr`, a stream's `name` as `stream`; mime types as bare
    keys of the output."""
    cells = []
    for c in nb["cells"]:
        if c.get("cell_type") != "code":
            cells.append({"cell_type": c["cell_type"], "metadata": c.get("metadata", {}), "source": c.get("source", "")})
            continue
        outs = []
        for o in c.get("outputs") or []:
            kind = o.get("output_type")
            if kind == "stream":
                outs.append({"output_type": "stream", "stream": o.get("name", "stdout"), "text": o.get("text", "")})
            elif kind == "error":
                outs.append({"output_type": "pyerr", "ename": o.get("ename"), "evalue": o.get("evalue"),
                             "traceback": o.get("traceback", [])})
            else:
                v3 = {"output_type": "pyout" if kind == "execute_result" else "display_data",
                      "metadata": o.get("metadata", {})}
                if kind == "execute_result":
                    v3["prompt_number"] = o.get("execution_count")
                for mime, value in (o.get("data") or {}).items():
                    v3[_MIME_V3.get(mime, mime)] = value
                outs.append(v3)
        cell = {"cell_type": "code", "collapsed": False, "input": c.get("source", ""), "language": "python",
                "metadata": c.get("metadata", {}), "outputs": outs}
        if c.get("execution_count") is not None:
            cell["prompt_number"] = c["execution_count"]
        cells.append(cell)
    return {"metadata": {**nb.get("metadata", {}), "name": ""}, "nbformat": 3, "nbformat_minor": 0,
            "worksheets": [{"cells": cells, "metadata": {}}]}


def _downgrade(run: Path) -> None:
    nb = _notebook(run)
    nb.write_text(json.dumps(_to_v3(json.loads(nb.read_text(encoding="utf-8"))), indent=1), encoding="utf-8")


def test_nbformat3_umang_notebook_keeps_its_code_profile(tmp_path):
    """notebook_code reads a code cell's `source` and `execution_count` (_parsed_cells, _cells_that_ran,
    _trains_whole_model); nbformat 3 names them `input` and `prompt_number`, so no code is read: the
    BitsAndBytesConfig(load_in_4bit) and fp16=True the untouched notebook's code gives are lost (qlora/sft/fp16 ->
    lora/unknown/unknown), though notebook.py reads the v3 outputs (worksheets, pyout, bare keys) as it documents."""
    run = case_copy(tmp_path, "Umang-Shikarvar_QLORA")
    _downgrade(run)
    p = forensics.analyze(run).run_profile
    assert answer(run) == ("healthy", None, None)
    assert (p.method, p.objective, p.precision) == ("qlora", "sft", "fp16")


def test_nbformat3_gpt2_notebook_method_kept(tmp_path):
    """(Test names avoid method words: the tool reads hints from tmp_path's folder names.) The same cause:
    _trains_whole_model joins the code cells' `source`, absent in v3, and code_values finds no
    `from_pretrained` / Trainer in cells that ran (no `execution_count`): method full -> unknown."""
    run = case_copy(tmp_path, "ozguozkan_DI725_Assignment_1")
    _downgrade(run)
    assert answer(run) == ("warning", "overfitting", 291)
    assert forensics.analyze(run).run_profile.method == "full"


def test_nbformat3_glslmaker_notebook_keeps_adapter_and_precision(tmp_path):
    """Unsloth GRPO notebook: get_peft_model(r=16), GRPOConfig(bf16=is_bfloat16_supported()) -- lora/bf16/3B on the
    untouched notebook, unknown/unknown/None in its nbformat 3 copy."""
    run = case_copy(tmp_path, "onlyjokers_unsloth-training-GLSLMaker_New")
    _downgrade(run)
    p = forensics.analyze(run).run_profile
    assert answer(run) == ("warning", "no_learning_evidence", 1)
    assert (p.method, p.precision) == ("lora", "bf16")


# --- 2. the Trainer's table rendered with other markup: run._TRAINER_TABLE_HTML wants a bare `<th>X Loss</th>` -----

def _edit_table(run: Path, edit) -> None:
    nb_path = _notebook(run)
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        for out in cell.get("outputs") or []:
            data = out.get("data") or {}
            html = _joined(data.get("text/html"))
            if "Loss</th>" in html:
                data["text/html"] = edit(html)
    nb_path.write_text(json.dumps(nb, indent=1), encoding="utf-8")


def test_trainer_table_th_with_attributes_is_found(tmp_path):
    """`<th style="text-align: left;" scope="col">Training Loss</th>`: notebook.py's reader reads the table (the
    .ipynb given by name gives overfitting at 291), but the folder's sniff (run._notebook_hinted:
    _TRAINER_TABLE_HTML `<th>(?:Training|Validation) Loss</th>`, then _hinted on the outputs' text, which knows no
    HTML table) passes the notebook over: NotARunDirectory 'no training logs'."""
    run = case_copy(tmp_path, "ozguozkan_DI725_Assignment_1")
    _edit_table(run, lambda h: h.replace("<th>", '<th style="text-align: left;" scope="col">'))
    assert answer(run) == ("warning", "overfitting", 291)


def test_trainer_table_nbsp_header_is_found(tmp_path):
    """`<th>Training&nbsp;Loss</th>` (cells' spaces as entities): the reader's HTMLParser turns &nbsp; into a space
    it splits on, but run._TRAINER_TABLE_HTML matches raw bytes: the notebook is not sniffed as a log."""
    run = case_copy(tmp_path, "ozguozkan_DI725_Assignment_1")
    _edit_table(run, lambda h: re.sub(r"(<t[hd][^>]*>)([^<]*)(</t[hd]>)",
                                      lambda m: m.group(1) + m.group(2).replace(" ", "&nbsp;") + m.group(3), h))
    assert answer(run) == ("warning", "overfitting", 291)


# --- 3. `jupyter nbconvert --to markdown`: streams as 4-space indented blocks, text/html kept raw -------------------

def _to_markdown(run: Path) -> Path:
    """nbconvert's markdown template: markdown cells as they are, code in ```python fences, a stream / plain result
    / traceback indented 4 spaces, a text/html display raw (the Trainer's table stays an HTML table), the notebook
    removed (only its export kept)."""
    nb_path = _notebook(run)
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    ind = lambda t: "    " + t.replace("\n", "\n    ")  # noqa: E731
    out = []
    for c in nb["cells"]:
        src = _joined(c.get("source"))
        if c.get("cell_type") != "code":
            out.append(src + "\n")
            continue
        out.append("```python\n" + src + "\n```\n")
        for o in c.get("outputs") or []:
            if o.get("output_type") == "stream":
                out.append(ind(_joined(o.get("text"))) + "\n")
            elif o.get("output_type") == "error":
                out.append("\n".join(ind(re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", l)) for l in o.get("traceback", [])) + "\n")
            else:
                data = o.get("data") or {}
                if "text/html" in data:
                    out.append(_joined(data["text/html"]) + "\n")
                elif "image/png" in data:
                    out.append("![png](output_files/output.png)\n")
                elif "text/plain" in data:
                    out.append(ind(_joined(data["text/plain"])) + "\n")
    md = nb_path.with_suffix(".md")
    md.write_text("\n".join(out), encoding="utf-8")
    nb_path.unlink()
    return md


def test_markdown_export_with_html_table_is_read(tmp_path):
    """The .md export is taken as a text log (run._TEXT_LOG_SUFFIXES) and read by the console reader, which reads no
    HTML table (notebook.trainer_tables is the notebook reader's alone): the Trainer's table, the run's only record,
    is lost -- 'nothing readable' where the notebook gives overfitting at 291. 12 of the 14 table notebooks' exports
    are not found at all."""
    run = case_copy(tmp_path, "ozguozkan_DI725_Assignment_1")
    _to_markdown(run)
    assert answer(run) == ("warning", "overfitting", 291)


def test_markdown_export_agallardom_tables_not_judged_unlearned(tmp_path):
    """An Unsloth GRPO notebook's markdown export: its console lines are read, its Trainer tables (reward columns)
    are not, so the healthy run becomes warning no_learning_evidence at step 1 -- a misleading answer, not a miss."""
    run = case_copy(tmp_path, "agallardom_gen_ai")
    _to_markdown(run)
    assert answer(run) == ("healthy", None, None)


# --- 4. (bench `ipynb`, over every console case) a `step<TAB>loss` table printed in a cell ---------------------------

def test_step_table_printed_in_a_cell_is_read(tmp_path):
    """Jayant's train.log is a bare `step\\tloss` table, read as a metrics table (run._is_metrics_table) where it is
    a .log; printed as a notebook cell's stdout (`print(df.to_csv(sep="\\t", index=False))`) it once read as 'no
    training logs' (the sniff wanted a Training/Validation Loss header, and no console reader took the rows). A
    DataFrame-shaped history table (a header naming a loss and a step or epoch, a row of numbers a line:
    ingest.dataframe_table, run._HISTORY_TABLE) is now read from a console too: memorization at 4170 as from the .log."""
    run = case_copy(tmp_path, "Jayant-Guru-Shrivastava_ERAV4-Session11-shakespeare-gpt2-124M")
    log = run / "train.log"
    nb = {"cells": [{"cell_type": "code", "execution_count": 1, "metadata": {}, "source": ["print(log_df.to_csv(sep='\\t', index=False))\n"],
                     "outputs": [{"output_type": "stream", "name": "stdout",
                                  "text": log.read_text(encoding="utf-8").splitlines(keepends=True)}]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (run / "train.ipynb").write_text(json.dumps(nb, indent=1), encoding="utf-8")
    log.unlink()
    assert answer(run) == ("warning", "memorization", 4170)
