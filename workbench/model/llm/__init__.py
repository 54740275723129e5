"""Whole language models, Qt-free: ``architecture`` (a model read from its config.json, its
set-up and its expansion into operations), ``kinds`` (the operation kinds it needs beyond
the basic set), ``session`` (a model as a session entry) and ``results`` (time, tokens/s and
memory per machine).

May import the rest of :mod:`workbench.model`, not :mod:`workbench.model.chart`. The core
imports only ``kinds`` (:mod:`workbench.model.operations` registers them with the others).
"""
