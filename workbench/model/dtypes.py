"""Element types: storage size in bytes, and the precision whose peak a computation uses."""

from __future__ import annotations

__all__ = ["DTYPE_BYTES", "PRECISIONS", "dtype_bytes", "wider", "fallback_chain", "check_dtype"]

#: Storage size of one element, in bytes. tf32 is stored as fp32.
DTYPE_BYTES: dict[str, float] = {
    "fp64": 8.0,
    "fp32": 4.0,
    "tf32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "fp6": 0.75,
    "fp4": 0.5,
    "int32": 4.0,
    "int8": 1.0,
    "int4": 0.5,
}

#: Precisions a machine can have a compute peak for, widest first.
PRECISIONS: tuple[str, ...] = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "fp6", "fp4",
                               "int32", "int8", "int4")

#: Where a machine has no peak for a precision, the computation runs at the first precision
#: of this chain that it has. A chain holds only precisions that represent every value of
#: the one asked for (a *wider* precision): int32 runs at fp64 (53-bit significand), never
#: at the int8 tensor peak; fp16 never at bf16 (fewer significand bits), nor fp32 at tf32.
#: Where two 16-bit types both hold the narrow type's values (fp8, fp6, fp4, int8, int4),
#: bf16 comes first: it is the type matrix units accept beside fp8 and int8 (AMX on Xeon
#: has bf16 but no fp16), and an fp8 E5M2 value keeps its exponent range in bf16.
_FALLBACK: dict[str, tuple[str, ...]] = {
    "fp64": ("fp64",),
    "fp32": ("fp32", "fp64"),
    "tf32": ("tf32", "fp32", "fp64"),
    "bf16": ("bf16", "fp32", "fp64"),
    "fp16": ("fp16", "fp32", "fp64"),
    "fp8": ("fp8", "bf16", "fp16", "fp32", "fp64"),
    "fp6": ("fp6", "fp8", "bf16", "fp16", "fp32", "fp64"),
    "fp4": ("fp4", "fp6", "fp8", "bf16", "fp16", "fp32", "fp64"),
    "int32": ("int32", "fp64"),
    "int8": ("int8", "bf16", "fp16", "fp32", "fp64"),
    "int4": ("int4", "int8", "bf16", "fp16", "fp32", "fp64"),
}


def check_dtype(name: object) -> str:
    if not isinstance(name, str) or name not in DTYPE_BYTES:
        raise ValueError(f"unknown dtype {name!r} (one of: {', '.join(DTYPE_BYTES)})")
    return name


def dtype_bytes(name: str) -> float:
    return DTYPE_BYTES[check_dtype(name)]


def wider(a: str, b: str) -> str:
    """The wider of two element types (the precision a mixed-precision product computes in)."""
    if DTYPE_BYTES[a] != DTYPE_BYTES[b]:
        return a if DTYPE_BYTES[a] > DTYPE_BYTES[b] else b
    # same width: prefer the floating-point one (int8 x fp8 computes in fp8)
    return b if a.startswith("int") else a


def fallback_chain(precision: str) -> tuple[str, ...]:
    return _FALLBACK.get(precision, (precision,))
