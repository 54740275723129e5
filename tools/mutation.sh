#!/usr/bin/env bash
# Mutation testing of workbench/model and workbench/io with mutmut (configured in
# pyproject.toml, [tool.mutmut]); prints the score overall and per module.
#
#   tools/mutation.sh                      every mutant (hours: see docs/mutation.md)
#   tools/mutation.sh --every 40           every 40th mutant of each module, a deterministic sample
#   tools/mutation.sh --every 40 --offset 7    another sample of the same size
#   tools/mutation.sh --module workbench.model.units [--module ...]   the mutants of these modules
#   tools/mutation.sh --names FILE         the mutants listed in FILE, one a line
#   tools/mutation.sh --score [--names FILE]   only print the score of what has run
#
# Environment: PYTHON (the interpreter with the project's dependencies, pytest and mutmut 3;
# default python3), JOBS (mutants tested at once, default 1), NICE (default 10).
# Results accumulate in mutants/ (ignored by git); delete that folder to start afresh.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
JOBS=${JOBS:-1}
NICE=${NICE:-10}
export QT_QPA_PLATFORM=offscreen

every="" offset=0 names="" score_only=0 modules=()
while [ $# -gt 0 ]; do
    case "$1" in
        --every) every=$2; shift 2 ;;
        --offset) offset=$2; shift 2 ;;
        --module) modules+=("--module" "$2"); shift 2 ;;
        --names) names=$2; shift 2 ;;
        --score) score_only=1; shift ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) echo "mutation.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done

mutmut() { nice -n "$NICE" "$PYTHON" -m mutmut "$@"; }
report() { "$PYTHON" tools/mutation_report.py "$@"; }

if [ "$score_only" = 1 ]; then
    if [ -n "$names" ]; then report score --names "$names"; else report score; fi
    exit 0
fi

if [ -z "$every" ] && [ -z "$names" ] && [ ${#modules[@]} -eq 0 ]; then
    mutmut run --max-children "$JOBS"
    report score
    exit 0
fi

# A sample: the mutants must exist before they can be named. The first run generates them and
# measures which tests reach which function (the slow part, kept in mutants/ for later runs)
# while testing the smallest module's mutants.
if ! ls mutants/workbench/model/*.py.meta >/dev/null 2>&1; then
    mutmut run --max-children "$JOBS" "workbench.model.limits*"
fi

list=$(mktemp)
trap 'rm -f "$list"' EXIT
if [ -n "$names" ]; then
    grep -v '^\s*$' "$names" > "$list"
else
    report names --every "${every:-1}" --offset "$offset" "${modules[@]}" > "$list"
fi
echo "mutation.sh: $(wc -l < "$list") mutants"
mapfile -t selected < "$list"
mutmut run --max-children "$JOBS" "${selected[@]}"
report score --names "$list"
