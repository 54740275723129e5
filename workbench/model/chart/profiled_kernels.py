"""How a chart draws the kernels of a profile (plain data, no Qt): which it leaves out by
its top-N rule (:func:`top_hidden`), their names as labels (:func:`short_kernel_name`) and in
a figure's key (:func:`kernel_key_name`, numbered where two read the same).

The measured marks themselves, their tags and the cache roofs they are placed against are
made in :mod:`workbench.model.chart.overlay_data`."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from workbench.model.session import Session

__all__ = ["distinct_key_names", "kernel_key_name", "kernel_row_name", "short_kernel_name",
           "top_hidden", "trace_operator"]


def top_hidden(session: Session, most: int | None = None) -> tuple[set[int], str]:
    """The profiled points the chart leaves out by its top-N rule (``view.top`` kernels of
    each run by GPU time, or the fewest that make 95 % of it), by ``id``, and what the chart
    says about them ("" when none).

    ``most`` (a figure): at most this many kernels of each run are drawn, those with the
    most GPU time, and the kernels measured on their own outside any run count as one run:
    a figure draws only as many kernels as it can name."""
    if not session.measurements:
        return set(), ""
    from workbench.model.profile import runs_of, top_kernels  # (see the note at the imports)

    hidden: set[int] = set()
    parts = []
    top = session.view.top or None
    runs: list[str | None] = list(runs_of(session.measurements))
    if most is not None and any(m.run is None and m.operation is None
                                for m in session.measurements):
        runs.append(None)
    for run in runs:
        points = [m for m in session.measurements
                  if m.run == run and (run is not None or m.operation is None)]
        # (a kernel without FLOPs, a copy or a fill, has no place on a log chart: it is
        # said apart, and the rule ranks the kernels that can be drawn)
        empty: list = []
        ranked: list = []
        for m in points:  # (one pass: a step may have tens of thousands of copies)
            (empty if not (m.flops or 0.0) > 0 and m.operation is None else ranked).append(m)
        shown, left = top_kernels(ranked, top if run is not None else len(ranked))
        capped = most is not None and len(shown) > most
        if capped:
            shown, left = shown[:most], shown[most:] + left
        if not left and not empty:
            continue
        hidden.update(id(m) for m in left)
        total = sum(m.total_time_s or 0.0 for m in points)

        def share(ms: Sequence, total: float = total) -> str:
            part = sum(m.total_time_s or 0.0 for m in ms) / total if total else 0.0
            return f"{100 * part:.1f} % of the time"

        if not shown:
            rule = "no kernel drawn"
        elif capped:
            rule = (f"the {len(shown)} with the most GPU time drawn (as many as the figure "
                    f"names)")
        else:
            rule = f"top {len(shown)}" if top else f"the {len(shown)} that make 95 %"
            rule += " of GPU time drawn"
        said = [rule]
        if left:
            said.append(f"{len(left):,} kernel{'s' if len(left) != 1 else ''} hidden "
                        f"({share(left)})")
        if empty:
            said.append(f"{len(empty):,} without FLOPs not drawn ({share(empty)})")
        parts.append(f"{run + ': ' if run is not None else ''}" + "; ".join(said))
    return hidden, "; ".join(parts)


def distinct_key_names(names: Sequence[str], operators: Mapping[str, str] | None = None
                       ) -> dict[str, str]:
    """Each kernel's name in the key (:func:`kernel_key_name`; ``operators``: the operator
    each ran for, by name, where known), told apart by their element types where two would
    read the same, else numbered."""
    operators = operators or {}

    def counted(texts: Mapping[str, str]) -> dict[str, int]:
        counts: dict[str, int] = {}
        for text in texts.values():
            counts[text] = counts.get(text, 0) + 1
        return counts

    short = {name: kernel_key_name(name, operator=operators.get(name, ""))
             for name in names}
    alike = counted(short)
    short = {name: text if alike[text] == 1 else kernel_key_name(
        name, operator=operators.get(name, ""), typed=True) for name, text in short.items()}
    counts = counted(short)
    seen: dict[str, int] = {}
    out = {}
    for name in names:
        text = short[name]
        if counts[text] > 1:
            seen[text] = seen.get(text, 0) + 1
            text = f"{text} #{seen[text]}"
        out[name] = text
    return out


#: Template stems that say nothing of the kernel: its first template argument names it.
_GENERIC_STEMS = ("kernel", "kernel2", "device_kernel", "elementwise_kernel",
                  "vectorized_elementwise_kernel", "unrolled_elementwise_kernel")


def short_kernel_name(name: str, limit: int = 32) -> str:
    """A kernel's name as a chart label: a C++ signature without ``void``, its argument list
    and template arguments (``cutlass::Kernel<cutlass_80_…_gemm…>`` is named by its
    argument), its namespaces when still long, then cut to ``limit`` characters."""
    if len(name) <= limit:
        return name
    stem = _kernel_stem(name)
    if len(stem) > limit:
        stem = stem.split("::")[-1]
    return stem if len(stem) <= limit else stem[:limit - 1] + "…"


def _kernel_stem(name: str) -> str:
    """A kernel's signature without ``void``, its argument list and template arguments (a
    generic kernel's named by its naming argument)."""
    base = name.removeprefix("void ").replace("<unnamed>::", "").replace(
        "(anonymous namespace)::", "")
    if "(" in base[1:]:
        base = base.split("(", 1)[0]
    stem, _, rest = base.partition("<")
    if rest and stem.split("::")[-1].lower() in _GENERIC_STEMS:
        stem = _naming_argument(rest)
    return stem


def _naming_argument(arguments: str) -> str:
    """The template argument that names a generic kernel: its first, or where that is a
    number (``elementwise_kernel<128, 2, …BinaryFunctor<…, DivFunctor<float> >>``) the last
    functor among them (``DivFunctor``), else its first named argument."""
    first = arguments.split(",")[0].split("<")[0].rstrip("> ").strip()
    if not first.replace("(int)", "").strip().isdigit():
        return first
    words = re.findall(r"[A-Za-z_][\w:]*", arguments)
    functors = [w for w in words if w.lower().endswith("functor")]
    named = functors or [w for w in words if w not in ("int", "float", "const", "void")]
    return named[-1 if functors else 0].split("::")[-1] if named else first


def kernel_row_name(name: str, source: str = "", limit: int = 40) -> str:
    """A measured point's name in a table row: a profiled kernel's long C++ signature as
    its figure key names it (:func:`kernel_key_name`, with the operator its trace counted it
    by), where its start (``void at::native::…``) would tell no two rows apart; a name of
    ``limit`` characters or fewer, or not a C++ signature, as it is."""
    if len(name) <= limit or not (name.startswith("void ") or "<" in name or "::" in name):
        return name
    return kernel_key_name(name, operator=trace_operator(source))


def trace_operator(source: str) -> str:
    """The operator and shapes a trace counted a kernel by, from its measurement's source
    (``"trace.json: aten::mm [8,64]·[64,32] fp32: …"`` → ``"aten::mm [8,64]·[64,32] fp32"``),
    or "" where the source is not a trace's count."""
    _file, _, formula = source.partition(": ")
    return formula.split(": ")[0] if _OPERATOR.match(formula) else ""


#: An operator's name, in its namespace (``aten::mm``, ``fbgemm::bounds_check_indices``,
#: ``torch::autograd::CppNode<…>``)
_OPERATOR = re.compile(r"[A-Za-z_]\w*::\w")
#: An autograd function's node (a custom backward): its class
_AUTOGRAD_NODE = re.compile(r"CppNode<(?:\w+::)*(\w+)")


def kernel_key_name(name: str, limit: int = 32, operator: str = "", typed: bool = False
                    ) -> str:
    """A profiled kernel's name in a figure's key, whole words only (a figure cuts no
    text): its stem (a C++ signature without ``void``, namespaces, arguments), where longer
    than ``limit`` characters the parts of it that tell kernels of one family apart (the
    last ``_`` parts, or the first where the profiler already cut the name); and where the
    trace grouped its launches by shape ("kernel [aten::mm [8,64]·[64,32] fp32: …]") the
    operator and its shapes: ``"s1688gemm_64x64_32x4_nn_align4 (mm 8×64, 64×32)"``; the same
    from ``operator`` (:func:`trace_operator`) for a kernel whose launches had one shape;
    ``typed``: with the operator's element type after its shapes (``"(mul 4×512 bf16)"``)."""
    kernel, shape = _split_shape(name)
    shape = shape or operator
    stem = _kernel_stem(kernel).split("::")[-1].strip()
    cut = stem.endswith(("...", "…"))
    stem = stem.rstrip(".…_ ")
    if len(stem) > limit:
        parts = stem.split("_")
        kept: list[str] = []
        for part in (parts if cut else reversed(parts)):
            if len("_".join([*kept, part])) > limit:
                break
            kept.append(part)
        stem = "_".join(kept if cut else reversed(kept)) or stem[:limit]
    if not shape:
        return stem
    head = shape.split(": ")[0]
    if "[" not in head and not _OPERATOR.match(head):
        return f"{stem} ({head})"  # a launch shape ("grid 768 block 256"), said as it is
    op, _, dims = head.partition(" ")
    node = _AUTOGRAD_NODE.search(op)
    op = f"{node.group(1)} backward" if node else op.split("::")[-1]
    op = op.strip("_").replace("scaled_dot_product_", "sdpa_")
    # (the inputs' shapes, not the dtype or the words between them)
    inputs = [d.replace(",", "×") for d in re.findall(r"\[([\d,]+)\]", dims)][:2]
    text = f"{op} {', '.join(inputs)}".strip() if inputs else op
    if typed:
        kinds = re.findall(r"\b(?:fp\d+|bf16|tf32|int\d+)\b", dims)
        text = f"{text} {kinds[0]}" if kinds else text
    return f"{stem} ({text})" if text else stem


def _split_shape(name: str) -> tuple[str, str]:
    """``(kernel, shape)`` of a name a trace's launches were grouped under, "kernel
    [shape]" (the last bracket, with the brackets it holds); ``(name, "")`` without one."""
    if not name.endswith("]"):
        return name, ""
    depth = 0
    for i in range(len(name) - 1, -1, -1):
        depth += {"]": 1, "[": -1}.get(name[i], 0)
        if depth == 0:
            if i > 0 and name[i - 1] == " ":
                return name[:i - 1], name[i + 1:-1]
            return name, ""
    return name, ""
