"""Benchmark families, one folder each.

A family folder holds its functional math, its registered corruptions (``corruptions.py``), its benchmark plan
(``benchmark.py``) and anything else only it needs; its ``__init__`` imports the modules that register. The registries
discover every folder here on first look-up (:data:`corruptgen.family.benchmark.FAMILIES`), so adding a family means
adding a folder: see ``docs/contributing.md``.
"""
