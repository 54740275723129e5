"""Mutation testing helper: pick a deterministic sample of mutant names and report scores.

Reads the result files mutmut keeps beside its mutated copy of the sources
(``mutants/workbench/**/*.py.meta``); run it from the repository root after
``mutmut run`` has generated the mutants (tools/mutation.sh does both).

    python tools/mutation_report.py names --every 40          # every 40th mutant of each module
    python tools/mutation_report.py names --module workbench.model.units
    python tools/mutation_report.py score [--names FILE]      # score, overall and per module

The score is killed / (killed + survived). A timeout counts as killed (the
mutant made the tests hang, which a user would notice); timeouts are listed
apart, since a hang the mutant did not cause would also count. A mutant that no
selected test even reaches ("no tests") counts as survived: nothing would
catch it. Mutants not run yet are left out and counted apart.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

KILLED = {1, 3, 36, -24, 24, 152, 255}  # a failing test, a pytest error, or a timeout
TIMEOUT = {36, -24, 24, 152, 255}  # killed, but listed: a hang the mutant did not cause would pass for a kill
SURVIVED = {0, 5, 33}  # tests passed, or no test reaches the mutated function


def _results(root: Path) -> dict[str, dict[str, int | None]]:
    """Exit code of every generated mutant, by module (``workbench.model.units``)."""
    by_module: dict[str, dict[str, int | None]] = {}
    for meta in sorted((root / "mutants" / "workbench").rglob("*.py.meta")):
        rel = meta.relative_to(root / "mutants").with_suffix("").with_suffix("")
        module = ".".join(rel.parts)
        if module.endswith(".__init__"):
            continue
        codes = json.loads(meta.read_text(encoding="utf-8")).get("exit_code_by_key", {})
        if codes:
            by_module[module] = codes
    return by_module


def _sort_key(name: str) -> tuple[str, int]:
    head, _, number = name.rpartition("__mutmut_")
    return head, int(number) if number.isdigit() else 0


def sample(
    by_module: dict[str, dict[str, int | None]], every: int, offset: int, modules: list[str]
) -> list[str]:
    names = []
    for module, codes in sorted(by_module.items()):
        if modules and not any(module == m or module.startswith(m + ".") for m in modules):
            continue
        ordered = sorted(codes, key=_sort_key)
        names += ordered[offset % every :: every]
    return names


def score(by_module: dict[str, dict[str, int | None]], only: set[str] | None) -> str:
    lines = [f"{'module':40} {'killed':>7} {'survived':>8} {'other':>6} {'not run':>8} {'score':>7}"]
    totals = defaultdict(int)
    survivors = []
    timeouts = []
    for module, codes in sorted(by_module.items()):
        counts = defaultdict(int)
        for name, code in codes.items():
            if only is not None and name not in only:
                continue
            if code is None:
                counts["not run"] += 1
            elif code in KILLED:
                counts["killed"] += 1
                if code in TIMEOUT:
                    timeouts.append(name)
            elif code in SURVIVED:
                counts["survived"] += 1
                survivors.append(name)
            else:
                counts["other"] += 1
        if not any(counts.values()):
            continue
        for key, value in counts.items():
            totals[key] += value
        lines.append(_row(module, counts))
    lines.append(_row("TOTAL", totals))
    lines.append("")
    lines.append(f"survivors ({len(survivors)}):")
    lines += [f"  {name}" for name in sorted(survivors, key=_sort_key)]
    if timeouts:
        lines.append("")
        lines.append(f"timeouts, counted as killed ({len(timeouts)}):")
        lines += [f"  {name}" for name in sorted(timeouts, key=_sort_key)]
    return "\n".join(lines)


def _row(label: str, counts: dict[str, int]) -> str:
    decided = counts["killed"] + counts["survived"]
    pct = f"{100 * counts['killed'] / decided:6.1f}%" if decided else "     -"
    return (
        f"{label:40} {counts['killed']:7d} {counts['survived']:8d} {counts['other']:6d}"
        f" {counts['not run']:8d} {pct:>7}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    names = sub.add_parser("names", help="print a deterministic sample of mutant names, one a line")
    names.add_argument("--every", type=int, default=1, help="every Nth mutant of each module, by name")
    names.add_argument("--offset", type=int, default=0, help="which of the N to take (0..N-1)")
    names.add_argument("--module", action="append", default=[], help="only these modules (repeatable)")
    rep = sub.add_parser("score", help="print the score overall and per module")
    rep.add_argument("--names", type=Path, help="count only the mutants listed in this file")
    args = parser.parse_args(argv)

    root = Path.cwd()
    by_module = _results(root)
    if not by_module:
        print("no mutants found under mutants/: run mutmut first (tools/mutation.sh)", file=sys.stderr)
        return 2
    if args.command == "names":
        if args.every < 1:
            print("--every must be 1 or more", file=sys.stderr)
            return 2
        print("\n".join(sample(by_module, args.every, args.offset, args.module)))
        return 0
    only = None
    if args.names:
        only = {line.strip() for line in args.names.read_text(encoding="utf-8").splitlines() if line.strip()}
    print(score(by_module, only))
    return 0


if __name__ == "__main__":
    sys.exit(main())
