"""Discovery: which files of which kind a run left where, told from their names and first bytes. Read-only.

    from forensics.discover.run import discover
    layout = discover("output/")      # RunLayout: trainer_states, tensorboard, text_logs, notebooks, ...

Module map: run.py walks the folder and sorts what it finds into a `RunLayout` (run_layout.py); log_hints.py and
json_hints.py say what a file's bytes show. What a text holds, asked both here and by the readers in `ingest/` (so
`ingest` imports this package, never the other way): run_signs.py (a training run was started), launch_command.py
(a launch command and its arguments), loss_numbers.py (a file of bare numbers its name calls losses), and a notebook's
cells: printed_loss_cells.py (bare loss prints), closing_eval_cells.py (a closing `validation loss: X`),
livelossplot_summary.py (livelossplot's min / max / cur lines).
Nothing is imported here, so a reader importing one sniffer loads only that one.
"""
