"""Measure this machine: empirical compute and bandwidth roofs with numpy (no Qt here).

:func:`measure_machine` returns a :class:`MeasuredMachine` (a machine like any preset, with
its provenance); :mod:`workbench.io.user_presets` saves it to the user's presets folder.
"""

from workbench.measure.kernels import Cancelled
from workbench.measure.runner import (
    PROFILES,
    MeasuredMachine,
    Profile,
    Progress,
    compare_to_datasheet,
    measure_machine,
    profile_from_env,
)

__all__ = ["Cancelled", "PROFILES", "MeasuredMachine", "Profile", "Progress",
           "compare_to_datasheet", "measure_machine", "profile_from_env"]
