"""Quantities stay within 1e-30 … 1e30 in base units, the range a session holds; what lies
beyond the SI prefixes is shown with an exponent, never as thirty digits."""

from __future__ import annotations

import pytest

from workbench.model.units import QuantityError, format_quantity, parse_quantity


@pytest.mark.parametrize("text, unit", [
    ("1e-320", "bandwidth"), ("5e-324", "flop_rate"), ("1e308", "flops"), ("1e-31", "count"),
    ("2e30 B", "bytes"), ("1e13 EFLOP/s", "flop_rate"), (1e-320, "count"), (-1e31, "count")])
def test_quantities_outside_1e_minus_30_to_1e30_are_refused(text, unit):
    with pytest.raises(QuantityError, match=r"out of range: quantities are limited to 1e-30 … "
                                            r"1e30 in base units"):
        parse_quantity(text, unit)


@pytest.mark.parametrize("text, unit, value", [
    ("0", "flops", 0.0), ("1e-30", "count", 1e-30), ("1e30", "flops", 1e30),
    ("1 EFLOP/s", "flop_rate", 1e18)])
def test_quantities_at_the_limits_are_read(text, unit, value):
    assert parse_quantity(text, unit) == value


@pytest.mark.parametrize("value, unit, text", [
    (1.46e48, "flops", "1.46e48 FLOP"), (3e33, "time", "3.00e33 s"),
    (1e-31, "time", "1.00e-31 s"), (5e23, "flops", "500000 EFLOP")])
def test_magnitudes_beyond_the_prefixes_are_shown_with_an_exponent(value, unit, text):
    assert format_quantity(value, unit) == text
