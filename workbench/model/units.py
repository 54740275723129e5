"""SI quantities with a fixed unit per field.

Every field of a machine or an operation has one unit (FLOP/s, B/s, B, s, …). Values may be
given as plain numbers, number strings ("1e12", which YAML 1.1 reads as a string) or as a
number with that unit and a strict SI prefix ("3.35 TB/s", "989 TFLOP/s", "80 GiB", "5 us").
A wrong unit, a lowercase unit or an unknown prefix is refused with a message that says what
was expected: "m" (milli) is never silently read as "M" (mega).
"""

from __future__ import annotations

import math
import re

from workbench.records import record

__all__ = [
    "format_capacity",
    "format_share",
    "QuantityError",
    "Unit",
    "UNITS",
    "parse_number",
    "parse_quantity",
    "magnitude_problem",
    "MIN_MAGNITUDE",
    "MAX_MAGNITUDE",
    "format_quantity",
    "format_number",
]


class QuantityError(ValueError):
    """A value that is not a valid quantity for its field; the message says what was expected."""


#: The one table of prefixes: parsing, formatting, saving and the importers all read it.
#: Decimal prefixes are powers of 1000, binary ones of 1024, small ones of 1/1000.
_LARGE = ("k", "M", "G", "T", "P", "E")
DECIMAL = {"": 1.0, **{p: 1000.0 ** (i + 1) for i, p in enumerate(_LARGE)}}
BINARY = {p.upper() + "i": 1024 ** (i + 1) for i, p in enumerate(_LARGE[:5])}  # (exact ints)
_SMALL = ("m", "µ", "n", "p")
SMALL = {"": 1.0, **{p: 1000.0 ** -(i + 1) for i, p in enumerate(_SMALL)},
         "u": 1e-6, "μ": 1e-6}  # u and the Greek mu are other spellings of the micro sign


def prefixed(units: dict[str, float], prefixes: dict[str, float], spelling=str) -> dict[str, float]:
    """Every unit of ``units`` under every prefix: ``prefixed({"byte": 1}, DECIMAL)`` gives
    ``{"byte": 1, "kbyte": 1e3, …}``; ``spelling`` rewrites a prefix (Nsight's "K")."""
    return {spelling(p) + u: scale * factor for u, scale in units.items()
            for p, factor in prefixes.items()}


@record(frozen=True)
class Unit:
    """A field's unit: its symbol, the spellings accepted, and the prefixes allowed."""

    key: str
    symbol: str
    spellings: tuple[str, ...]
    prefixes: dict[str, float]
    example: str

    def expected(self) -> str:
        if not self.symbol:
            return f"a plain number such as '{self.example}'"
        return f"a number or a quantity in {self.symbol} such as '{self.example}'"


UNITS: dict[str, Unit] = {
    u.key: u
    for u in (
        Unit("flop_rate", "FLOP/s", ("FLOP/s", "FLOPS", "FLOPs/s", "OP/s", "OPS", "OPs/s"),
             DECIMAL, "989 TFLOP/s"),
        Unit("bandwidth", "B/s", ("B/s",), DECIMAL, "3.35 TB/s"),
        Unit("bytes", "B", ("B",), {**DECIMAL, **BINARY}, "80 GiB"),
        Unit("time", "s", ("s",), SMALL, "5 us"),
        Unit("flops", "FLOP", ("FLOP", "FLOPs", "OP", "OPs"), DECIMAL, "3.85 TFLOP"),
        Unit("intensity", "FLOP/B", ("FLOP/B", "FLOP/byte", "FLOPs/byte"), {"": 1.0}, "295 FLOP/B"),
        Unit("count", "", (), {"": 1.0}, "8192"),
    )
}

_NUMBER_RE = re.compile(r"^[+-]?(\d[\d_]*\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_BASE_RE = re.compile(r"^[+-]?0(?:[xX][0-9a-fA-F_]+|[oO][0-7_]+|[bB][01_]+)$")
_QUANTITY_RE = re.compile(r"^\s*([+-]?(?:\d[\d_]*\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*(\S.*?)?\s*$")


def parse_number(value: object) -> float:
    """A plain number, or a string holding one ("1e12", "3_000"). Booleans are refused."""
    if isinstance(value, bool) or value is None:
        raise QuantityError(f"expected a number, got {_show(value)}")
    try:
        if isinstance(value, int | float):
            number = float(value)
        elif isinstance(value, str) and _NUMBER_RE.match(value.strip()):
            number = float(value.strip().replace("_", ""))
        elif isinstance(value, str) and _BASE_RE.match(value.strip()):
            text = value.strip().replace("_", "")
            raise QuantityError(f"{text} is not a decimal number; write {int(text, 0)}")
        else:
            raise QuantityError(f"expected a number, got {_show(value)}")
    except OverflowError:  # an integer beyond any float
        number = math.inf
    if not math.isfinite(number):
        raise QuantityError(f"expected a finite number, got {_show(value)}")
    return number


#: The smallest and largest magnitude a quantity may have in base units (FLOP/s, B/s, FLOP,
#: B, s, 1); zero is allowed. Far beyond any machine or kernel, and far from the float limits:
#: every product and ratio of two of them (intensity, time, attainable) stays finite.
MIN_MAGNITUDE = 1e-30
MAX_MAGNITUDE = 1e30


def magnitude_problem(value: float) -> str | None:
    """Why ``value`` (in base units) cannot be a quantity, or ``None``."""
    if not math.isfinite(value):
        return "must be a finite number"
    if value != 0 and not MIN_MAGNITUDE <= abs(value) <= MAX_MAGNITUDE:
        return (f"{value:.3g} is out of range: quantities are limited to 1e-30 … 1e30 in "
                "base units (FLOP/s, B/s, FLOP, B, s)")
    return None


def parse_quantity(value: object, unit: str) -> float:
    """Parse ``value`` as a quantity in the field's ``unit`` (a key of :data:`UNITS`), within
    :data:`MIN_MAGNITUDE` … :data:`MAX_MAGNITUDE` (or zero)."""
    number = _parse_quantity(value, unit)
    if number != 0 and not MIN_MAGNITUDE <= abs(number) <= MAX_MAGNITUDE:
        raise QuantityError(magnitude_problem(number))
    return number


#: The scale of each unit suffix read so far, by field unit and suffix ("time", "ms")
_SCALES: dict[tuple[str, str], float] = {}


def _parse_quantity(value: object, unit: str) -> float:
    spec = UNITS[unit]
    if isinstance(value, bool) or value is None:
        raise QuantityError(f"expected {spec.expected()}, got {_show(value)}")
    if isinstance(value, int | float):
        return parse_number(value)
    if not isinstance(value, str):
        raise QuantityError(f"expected {spec.expected()}, got {_show(value)}")
    match = _QUANTITY_RE.match(value)
    if not match:
        raise QuantityError(f"expected {spec.expected()}, got {_show(value)}")
    number = parse_number(match.group(1))
    suffix = (match.group(2) or "").strip()
    if not suffix:
        return number
    scale = _SCALES.get((unit, suffix))
    if scale is not None:  # (a suffix read before: files repeat a few units many times)
        result = _scaled(match.group(1), number, scale)
        if not math.isfinite(result):
            raise QuantityError(f"{_show(value)} is too large")
        return result
    if re.match(r",\d", suffix):  # "3,35 TB/s": a decimal comma (or a thousands separator)
        raise QuantityError(f"{_show(value)}: a number is written with a decimal point and no "
                            f"commas (e.g. {spec.example!r})")
    for spelling in spec.spellings:
        if suffix.endswith(spelling):
            prefix = suffix[: -len(spelling)].strip()
            if prefix in spec.prefixes:
                if len(_SCALES) < 1000:
                    _SCALES[unit, suffix] = spec.prefixes[prefix]
                result = _scaled(match.group(1), number, spec.prefixes[prefix])
                if not math.isfinite(result):
                    raise QuantityError(f"{_show(value)} is too large")
                return result
            other = _other_unit(suffix, spec)
            if other is not None:
                break
            allowed = ", ".join(p for p in spec.prefixes if p) or "none"
            raise QuantityError(
                f"unknown prefix {prefix!r} in {_show(value)} (prefixes for {spec.symbol}: {allowed})"
            )
    hint = _case_hint(suffix, spec)
    where = f"in {spec.symbol}" if spec.symbol else "as a plain number"
    raise QuantityError(f"expected a quantity {where} such as '{spec.example}', got {_show(value)}{hint}")


def _scaled(text: str, number: float, scale: float) -> float:
    """``number × scale``, correctly rounded for powers of ten: "5 us" is exactly the float
    nearest 5e-6 (plain multiplication gives 4.9999999999999996e-06)."""
    exponent = round(math.log10(scale))
    if 10.0**exponent == scale or scale == float(f"1e{exponent}"):
        mantissa, _, exp = text.strip().replace("_", "").lower().partition("e")
        return float(f"{mantissa}e{int(exp or 0) + exponent}")
    return number * scale


def _other_unit(suffix: str, spec: Unit) -> Unit | None:
    """The unit of another kind of field that ``suffix`` spells exactly, if any."""
    for other in UNITS.values():
        if other is spec:
            continue
        for spelling in other.spellings:
            if suffix.endswith(spelling) and suffix[: -len(spelling)].strip() in other.prefixes:
                return other
    return None


def _case_hint(suffix: str, spec: Unit) -> str:
    for spelling in spec.spellings:
        for prefix in spec.prefixes:
            if (prefix + spelling).lower() == suffix.lower():
                return f" (units are case-sensitive: did you mean '{prefix}{spelling}'?)"
    other = _other_unit(suffix, spec)
    if other is not None:
        return f" ({other.symbol} is the unit of another kind of field)"
    return ""


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


_FORMAT_PREFIXES = sorted(DECIMAL.items(), key=lambda kv: -kv[1])  # largest first
_SMALL_PREFIXES = [("", 1.0)] + [(p, SMALL[p]) for p in _SMALL]


def format_number(value: float | None, digits: int = 3) -> str:
    """``value`` to ``digits`` significant figures, without exponent for everyday magnitudes."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if value == 0:
        return "0"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    if 10**digits <= abs(value) < 1e6:
        return f"{value:.0f}"  # whole numbers are shown whole: 3584, not 3580
    rounded = float(f"{value:.{digits - 1}e}")
    magnitude = abs(rounded)
    if 1e-3 <= magnitude < 1e6:
        decimals = max(0, digits - 1 - math.floor(math.log10(magnitude)))
        return f"{rounded:.{decimals}f}"
    return f"{rounded:.{digits - 1}e}".replace("e+0", "e").replace("e+", "e").replace("e-0", "e-")


def format_share(part: float, whole: float) -> str:
    """``part`` of ``whole`` in per cent, whole numbers where they tell it (``"93 %"``); a share
    that is neither none nor all never reads as 0 or 100 (``"0.4 %"``, ``"99.6 %"``)."""
    # (all of it is 100 exactly: 100·x/x can round below it)
    share = 0.0 if not whole or part <= 0 else 100.0 if part >= whole else 100 * part / whole
    if share <= 0 or share >= 100 or 1 <= share <= 99:
        return f"{share:.0f} %"
    if share < 1:
        return f"{share:.1g} %"
    for decimals in range(1, 6):  # (99 < share < 100)
        text = f"{share:.{decimals}f}"
        if float(text) < 100:
            return f"{text} %"
    return "99.99999 %"


def format_list(words) -> str:
    """Words as a sentence lists them: ``"m"``, ``"m and n"``, ``"m, n and k"``."""
    words = list(words)
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def format_binary_bytes(nbytes: float, digits: int = 3) -> str:
    """A size of memory with the largest binary prefix it reaches: '1.5 GiB', '512 B'."""
    for prefix, size in sorted(BINARY.items(), key=lambda kv: -kv[1]):
        if nbytes >= size:
            return f"{_sig(nbytes / size, digits)} {prefix}B"
    return f"{nbytes:.0f} B"


def format_quantity(value: float | None, unit: str, digits: int | None = 3) -> str:
    """Format with an SI prefix so that the mantissa lies in [1, 1000): '3.35 TB/s'.

    ``digits=None`` writes the shortest text that reads back as exactly the same float
    (used when saving files)."""
    spec = UNITS[unit]
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return format_number(value)
    if unit == "count" or unit == "intensity":
        text = repr(float(value)) if digits is None else format_number(value, digits)
        return f"{text} {spec.symbol}".strip()
    table = _SMALL_PREFIXES if unit == "time" else _FORMAT_PREFIXES
    rounded = float(value) if digits is None else float(f"{value:.{digits - 1}e}")
    magnitude = abs(rounded)
    prefix, scale = table[-1]
    for p, s in table:
        if magnitude >= s:
            prefix, scale = p, s
            break
    if digits is None:
        return f"{_exact_mantissa(rounded, scale)} {prefix}{spec.symbol}"
    if magnitude / scale >= 1e6 or 0 < magnitude / scale < 1e-3:  # beyond the prefixes
        return f"{format_number(value, digits)} {spec.symbol}"
    return f"{_sig(rounded / scale, digits)} {prefix}{spec.symbol}"


def _exact_mantissa(value: float, scale: float) -> str:
    """``value / scale`` as decimal text, shifted exactly (no float division)."""
    from decimal import Decimal

    exponent = round(math.log10(scale))
    shifted = Decimal(repr(value)).scaleb(-exponent).normalize()
    text = format(shifted, "f")
    return text


def _sig(value: float, digits: int) -> str:
    if value == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    text = f"{value:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def format_capacity(value: float) -> str:
    """A memory capacity in GB with GiB in brackets: ``85.5 GB (79.6 GiB)``."""
    return f"{format_quantity(value, 'bytes')} ({format_number(value / 1024 ** 3)} GiB)"
