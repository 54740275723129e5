"""SI quantities: what is accepted, what is refused (and how the refusal reads), formatting."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.model.units import (
    UNITS,
    QuantityError,
    format_number,
    format_quantity,
    format_share,
    parse_number,
    parse_quantity,
)

# ---------------------------------------------------------------------------------------
# accepted forms


@pytest.mark.parametrize("text, unit, value", [
    ("3.35 TB/s", "bandwidth", 3.35e12),
    ("3.35TB/s", "bandwidth", 3.35e12),
    ("  819 GB/s ", "bandwidth", 819e9),
    ("45 GB/s", "bandwidth", 45e9),
    ("989 TFLOP/s", "flop_rate", 989e12),
    ("989.4 TFLOP/s", "flop_rate", 989.4e12),
    ("1979 TOP/s", "flop_rate", 1979e12),
    ("394 TOP/s", "flop_rate", 394e12),
    ("2 PFLOPS", "flop_rate", 2e15),
    ("67 TFLOPs/s", "flop_rate", 67e12),
    ("1.97e14 FLOP/s", "flop_rate", 1.97e14),
    ("80 GiB", "bytes", 80 * 2**30),
    ("80 GB", "bytes", 80e9),
    ("16 KiB", "bytes", 16384),
    ("50 MB", "bytes", 50e6),
    ("5 us", "time", 5e-6),
    ("5 µs", "time", 5e-6),
    ("5 μs", "time", 5e-6),  # Greek mu as well as the micro sign
    ("8 ms", "time", 8e-3),  # m is milli, never mega
    ("140 ns", "time", 140e-9),
    ("2 s", "time", 2.0),
    ("3.85 TFLOP", "flops", 3.85e12),
    ("295 FLOP/B", "intensity", 295.0),
    ("1e12", "flop_rate", 1e12),  # YAML 1.1 reads 1e12 as a string
    ("1E12", "bandwidth", 1e12),
    ("3_000", "count", 3000.0),
    ("+2.5e-3", "time", 2.5e-3),
    (".5", "count", 0.5),
    (8192, "count", 8192.0),
    (1e12, "flop_rate", 1e12),
    (0, "bytes", 0.0),
])
def test_accepted(text, unit, value):
    result = parse_quantity(text, unit)
    assert isinstance(result, float)
    assert result == pytest.approx(value, rel=1e-12)


def test_decimal_and_binary_prefixes_differ():
    assert parse_quantity("1 GiB", "bytes") / parse_quantity("1 GB", "bytes") == \
        pytest.approx(2**30 / 1e9, rel=1e-15)


@pytest.mark.parametrize("value, expected", [(7, 7.0), (2.5, 2.5), ("1e12", 1e12),
                                             (" 42 ", 42.0), ("-3", -3.0), ("1_000", 1000.0)])
def test_parse_number_accepts(value, expected):
    assert parse_number(value) == expected


# ---------------------------------------------------------------------------------------
# refusals, with messages that say what was expected


def refusal(value, unit) -> str:
    with pytest.raises(QuantityError) as info:
        parse_quantity(value, unit)
    assert isinstance(info.value, ValueError)  # callers may catch ValueError
    return str(info.value)


@pytest.mark.parametrize("text, unit, suggestion", [
    ("3.35 tb/s", "bandwidth", "TB/s"),
    ("989 tflop/s", "flop_rate", "TFLOP/s"),
    ("80 gib", "bytes", "GiB"),
    ("5 US", "time", "us"),
])
def test_lowercase_unit_is_refused_with_a_case_hint(text, unit, suggestion):
    message = refusal(text, unit)
    assert "case" in message
    assert f"'{suggestion}'" in message
    assert repr(text) in message


@pytest.mark.parametrize("text, unit, prefix", [
    ("5 mFLOP/s", "flop_rate", "m"),  # milli is never read as mega
    ("5 mB/s", "bandwidth", "m"),
    ("8 Ms", "time", "M"),
    ("3 XB", "bytes", "X"),
    ("1 KiB/s", "bandwidth", "Ki"),  # binary prefixes are for sizes only
])
def test_unknown_prefix_is_refused(text, unit, prefix):
    message = refusal(text, unit)
    assert "prefix" in message
    assert repr(prefix) in message
    assert UNITS[unit].symbol in message


@pytest.mark.parametrize("text, unit", [("3,35 TB/s", "bandwidth"), ("1,5", "flop_rate"),
                                        ("1,000 GB", "bytes")])
def test_a_comma_in_a_number_is_said_to_be_one(text, unit):
    # (a decimal comma, as a European keyboard types it, is not an unknown prefix ',35 T')
    message = refusal(text, unit)
    assert "prefix" not in message
    assert "decimal point and no commas" in message and repr(text) in message


WITH_SYMBOL = [u for u in UNITS if UNITS[u].symbol]


@pytest.mark.parametrize("field, other", [(f, o) for f in WITH_SYMBOL for o in WITH_SYMBOL
                                          if f != o])
def test_wrong_unit_names_both_units(field, other):
    # a quantity of another field's unit ("3.35 TB/s" typed into a FLOP/s field) is refused,
    # the message names the unit expected and says the one given belongs to another field;
    # it is not misreported as an unknown prefix
    example = UNITS[other].example
    message = refusal(example, field)
    assert UNITS[field].symbol in message
    assert UNITS[other].symbol in message
    assert "another kind of field" in message
    assert "prefix" not in message


def test_unit_for_a_plain_number_field():
    message = refusal("5 us", "count")
    assert "plain number" in message


@pytest.mark.parametrize("value", [True, False, None])
@pytest.mark.parametrize("unit", ["bandwidth", "count"])
def test_booleans_and_none_are_refused(value, unit):
    message = refusal(value, unit)
    assert repr(value) in message
    with pytest.raises(QuantityError):
        parse_number(value)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), "1e400",
                                   "-1e400", 10**400, -(10**400)])
def test_non_finite_numbers_are_refused(value):
    message = refusal(value, "flop_rate")
    assert "finite" in message
    with pytest.raises(QuantityError, match="finite"):
        parse_number(value)


@pytest.mark.parametrize("value", ["nan", "inf", "NaN TB/s", "inf TB/s", "infinity"])
def test_non_finite_words_are_refused(value):
    message = refusal(value, "bandwidth")
    assert "B/s" in message and "3.35 TB/s" in message  # says what would be accepted


def test_overflow_after_prefix_is_refused():
    message = refusal("1e300 EB/s", "bandwidth")
    assert "too large" in message


@pytest.mark.parametrize("value", ["fast", "", "   ", "TB/s", "3.35 TB/s extra", "3,35 TB/s",
                                   "0x10", "3..5", "1e", "e12", [1], {"a": 1}, (1,), b"12"])
def test_garbage_is_refused(value):
    message = refusal(value, "bandwidth")
    assert message  # a message, never an empty one
    assert "B/s" in message


@pytest.mark.parametrize("value", ["abc", "", "1 2", "1e", [3], b"1", object()])
def test_parse_number_refuses_garbage(value):
    with pytest.raises(QuantityError, match="expected a number"):
        parse_number(value)


# ---------------------------------------------------------------------------------------
# formatting: three significant figures, an SI prefix putting the mantissa in [1, 1000)


@pytest.mark.parametrize("value, unit, text", [
    (3.35e12, "bandwidth", "3.35 TB/s"),
    (989.4e12, "flop_rate", "989 TFLOP/s"),
    (1979e12, "flop_rate", "1.98 PFLOP/s"),
    (1e12, "flop_rate", "1 TFLOP/s"),
    (819e9, "bandwidth", "819 GB/s"),
    (45e9, "bandwidth", "45 GB/s"),
    (80e9, "bytes", "80 GB"),
    (1073741824.0, "bytes", "1.07 GB"),
    (3.848e12, "flops", "3.85 TFLOP"),
    (5e-6, "time", "5 µs"),
    (140.25e-6, "time", "140 µs"),
    (4.9886e-3, "time", "4.99 ms"),
    (39.13e-9, "time", "39.1 ns"),
    (2.0, "time", "2 s"),
    (0.9996e12, "bandwidth", "1 TB/s"),  # rounds up into the next prefix, not "1000 GB/s"
    (999.96e9, "bandwidth", "1 TB/s"),
    (999.4e9, "bandwidth", "999 GB/s"),
    (1e-3, "time", "1 ms"),
    (295.343, "intensity", "295 FLOP/B"),
    (0.16667, "intensity", "0.167 FLOP/B"),
    (8192, "count", "8192"),
])
def test_format_quantity(value, unit, text):
    assert format_quantity(value, unit) == text


@pytest.mark.parametrize("value, text", [
    (0.16667, "0.167"),
    (2 / 12, "0.167"),
    (1.0, "1.00"),
    (2.0, "2.00"),
    (9.996, "10.0"),  # rounding carries into a new digit: still three figures
    (10.0, "10.0"),
    (0.1, "0.100"),
    (295.343, "295"),
    (999.6, "1000"),
    (60.24, "60.2"),
    (0.0012345, "0.00123"),
    (-0.5, "-0.500"),
    (0, "0"),
    (1234567.0, "1.23e6"),
    (0.00012345, "1.23e-4"),
    (3.2e-12, "3.20e-12"),
    (2.5e20, "2.50e20"),
])
def test_format_number_three_significant_figures(value, text):
    assert format_number(value) == text


@pytest.mark.parametrize("value, text", [(3584.0, "3584"), (2730.67, "2731"),
                                         (12345.4, "12345"), (999999.0, "999999")])
def test_format_number_shows_whole_numbers_whole(value, text):
    # the module's rule: magnitudes from 10**digits up to 1e6 are shown as whole numbers
    # (3584, not 3580), so no figure of the integer part is ever lost
    assert format_number(value) == text


def test_format_number_special_values():
    assert format_number(float("nan")) == "—"
    assert format_number(None) == "—"
    assert format_number(float("inf")) == "∞"
    assert format_number(-float("inf")) == "-∞"
    assert format_quantity(float("inf"), "bandwidth") == "∞"


BOUNDARIES = [("time", v) for v in (999.5e-12, 999.5e-9, 999.5e-6, 999.5e-3)] + [
    ("bandwidth", v) for v in (999.5, 999.5e3, 999.5e6, 999.5e9, 999.5e12, 999.5e15)] + [
    ("bytes", v) for v in (999.5, 999.5e6, 999.5e9)] + [
    ("flop_rate", v) for v in (999.5e9, 999.5e12)]


@pytest.mark.parametrize("unit, value", BOUNDARIES)
def test_mantissa_stays_in_range_at_prefix_boundaries(unit, value):
    # "Format with an SI prefix so that the mantissa lies in [1, 1000)": 999.5 of a prefix
    # is on the rounding edge; it must come out as 999 of that prefix or 1 of the next,
    # never "0.999 <next>" nor "1000 <this>"
    text = format_quantity(value, unit)
    mantissa = float(text.split(" ", 1)[0])
    assert 1 <= mantissa < 1000, text
    assert parse_quantity(text, unit) == pytest.approx(value, rel=1e-3)


def sig_figs(text: str) -> int:
    digits = re.sub(r"[^0-9]", "", text.split("e")[0]).lstrip("0")
    return len(digits)


PREFIXED = ["flop_rate", "bandwidth", "bytes", "flops"]


@settings(max_examples=200, deadline=None)
@given(st.floats(1.0, 9.99e20), st.sampled_from(PREFIXED))
def test_formatted_mantissa_is_three_figures_in_range(value, unit):
    text = format_quantity(value, unit)
    mantissa, symbol = text.split(" ", 1)
    assert symbol.endswith(UNITS[unit].symbol)
    number = float(mantissa)
    assert 1 <= number < 1000
    assert sig_figs(mantissa) <= 3
    # and it is the value to within half a unit in the third figure
    assert parse_quantity(text, unit) == pytest.approx(value, rel=5e-3)


@settings(max_examples=200, deadline=None)
@given(st.floats(1e-12, 999.0))
def test_formatted_time_is_three_figures(value):
    text = format_quantity(value, "time")
    mantissa = float(text.split(" ", 1)[0])
    assert 1 <= mantissa < 1000
    assert parse_quantity(text, "time") == pytest.approx(value, rel=5e-3)


@settings(max_examples=200, deadline=None)
@given(st.floats(-1e24, 1e24).filter(lambda v: v == 0 or abs(v) > 1e-29),
       st.sampled_from(sorted(UNITS)))
def test_round_trip_with_twelve_digits(value, unit):
    if unit == "time":
        value = math.copysign(min(abs(value), 1e3), value)
    text = format_quantity(value, unit, digits=12)
    assert parse_quantity(text, unit) == pytest.approx(value, rel=1e-10, abs=1e-300)


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False).filter(lambda v: abs(v) < 1e300))
def test_format_number_round_trip(value):
    assert parse_number(format_number(value, digits=12)) == pytest.approx(value, rel=1e-10)


# ---------------------------------------------------------------------------------------
# one table of prefixes, read by parsing, formatting, saving and the Nsight importer


@pytest.mark.parametrize(("text", "unit", "expected"), [
    ("1 kB", "bytes", 10**3), ("1 PB", "bytes", 10**15), ("1 EFLOP/s", "flop_rate", 10**18),
    ("1 KiB", "bytes", 1024), ("1 MiB", "bytes", 1024**2), ("1 GiB", "bytes", 1024**3),
    ("1 TiB", "bytes", 1024**4), ("1 PiB", "bytes", 1024**5),
    ("1 ms", "time", 1e-3), ("1 us", "time", 1e-6), ("1 µs", "time", 1e-6),
    ("1 ns", "time", 1e-9), ("1 ps", "time", 1e-12),
])
def test_every_prefix_is_its_power(text, unit, expected):
    assert parse_quantity(text, unit) == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize(("value", "unit", "text"), [
    (2e18, "flop_rate", "2 EFLOP/s"), (3e15, "flop_rate", "3 PFLOP/s"),
    (4e12, "bandwidth", "4 TB/s"), (5e3, "bytes", "5 kB"), (2e-3, "time", "2 ms"),
    (3e-6, "time", "3 µs"), (4e-9, "time", "4 ns"), (5e-12, "time", "5 ps"),
])
def test_formatting_uses_the_same_prefixes(value, unit, text):
    assert format_quantity(value, unit) == text
    assert parse_quantity(text, unit) == pytest.approx(value, rel=1e-12)


def test_a_saved_binary_capacity_reads_back():
    from workbench.io.sessions import _capacity_text

    for capacity in (80 * 1024**3, 3 * 1024**4, 512 * 1024**2):
        text = _capacity_text(float(capacity))
        assert "i" in text  # written in binary units
        assert parse_quantity(text, "bytes") == capacity


@pytest.mark.parametrize(("part", "text"), [
    (0, "0 %"), (93, "93 %"), (100, "100 %"), (0.4, "0.4 %"), (0.04, "0.04 %"),
    (99.6, "99.6 %"), (99.96, "99.96 %"), (99.5, "99.5 %"), (1, "1 %"), (99, "99 %")])
def test_a_share_reads_as_none_or_all_only_when_it_is(part, text):
    assert format_share(part, 100) == text


@given(st.floats(0, 1))
def test_a_share_between_none_and_all_is_said_between(fraction):
    number = float(format_share(fraction, 1).removesuffix(" %"))
    assert (number == 0) == (fraction * 100 == 0) and (number == 100) == (fraction * 100 >= 100)
    assert abs(number - 100 * fraction) <= max(0.5, 100 * fraction * 0.05)


@given(st.floats(1e-300, 1e300))
def test_all_of_a_whole_is_all_of_it(whole):
    # 100·x/x rounds below 100 for some x (495.43559165685383 among them): a trace whose
    # every kernel was left out read "99.99999 % not counted"
    assert format_share(whole, whole) == "100 %"
    assert format_share(495.43559165685383, 495.43559165685383) == "100 %"
