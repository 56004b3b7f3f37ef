"""Activation replay after the fact, `forensics replay CKPT`: one probe batch through a saved checkpoint.

Module map: probe.py runs it (`replay(path) -> ReplayResult`, the first module whose output overflows); memory.py
says whether it fits before anything loads; loading.py is what is loaded and how (the folder, the run's dtype, an
adapter on its local base). Needs torch and transformers (the `replay` extra); nothing is imported here.
"""
