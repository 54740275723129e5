"""Forms that edit the session: the operation editor (``operation_editor``) with its
``fields``, ``steps_editor`` (an elementwise chain's steps), ``sweep_editor`` and
``derivation`` (every formula shown); ``model_lock`` (a whole model's operations are read-only
outside its editor); ``model_editor`` (a whole model's set-up and the Add Model dialog);
``machine_form`` and ``hardware_fields`` (one machine's ceilings and fields).

May import: :mod:`workbench.ui.bridge`, :mod:`workbench.ui.widgets`, and what lies below the
user interface; no other room of ``workbench.ui``.
"""
