"""The engine's error contract for counting and evaluating.

Counting an operation, evaluating it on a machine or sweeping one of its parameters raises
one of :data:`COUNTING_ERRORS` when what it was given cannot be worked out: a parameter out
of range or of the wrong type (:class:`ValueError`, :class:`TypeError`, among them
:class:`~workbench.model.units.QuantityError`, :class:`~workbench.model.sweeps.SweepError`
and :class:`~workbench.model.llm.architecture.SetupError`), a dimension that does not divide
another or a number out of range (:class:`ArithmeticError`), a precision or memory level the
machine does not have (:class:`LookupError`:
:class:`~workbench.model.hardware.UnsupportedPrecision`,
:class:`~workbench.model.hardware.UnknownLevel`). Its message says what and why, for the
user. Every caller that shows such a result catches exactly these, by this name; anything
else is a fault of the program, not of the input, and is left to reach the log.
"""

from __future__ import annotations

__all__ = ["COUNTING_ERRORS"]

COUNTING_ERRORS: tuple[type[Exception], ...] = (ValueError, TypeError, ArithmeticError,
                                                LookupError)
