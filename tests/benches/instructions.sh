#!/usr/bin/env bash
# Instructions per run of the four shapes of issue 10, compiled and by hand, counted by
# callgrind: the figure a change to the runtime or the generated code is judged by, since,
# unlike time, neither the machine nor its load changes it.
#
#   tests/benches/instructions.sh [SHAPE...]   # default: seq10 switch parallel4 foreach1000
#
# Each side of each shape runs N times, then 2N times (`--bench instructions`); the difference
# divided by N is one run without the process's start, the runtime's creation and the inputs.
# `SWF_RUNS_SCALE` multiplies every N (2 for twice the runs). The README's "Performance" gives
# the figures and what each shape is.
set -euo pipefail
cd "$(dirname "$0")/../.."

source tests/benches/script-common.sh
require_valgrind instructions.sh

shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=(seq10 switch parallel4 foreach1000)
scale=${SWF_RUNS_SCALE:-1}
if ! [[ $scale =~ ^[1-9][0-9]*$ ]]; then
    echo "instructions.sh: SWF_RUNS_SCALE is a whole number of at least 1, not $scale" >&2
    exit 2
fi

# Runs per shape: enough that the difference of N and 2N dwarfs callgrind's rounding.
runs_of() {
    case "$1" in
    seq10 | parallel4) echo $((200 * scale)) ;;
    switch) echo $((500 * scale)) ;;
    foreach1000) echo $((5 * scale)) ;;
    *)
        echo "instructions.sh: no shape $1 (seq10, switch, parallel4 or foreach1000)" >&2
        exit 2
        ;;
    esac
}
for shape in "${shapes[@]}"; do runs_of "$shape" >/dev/null; done

binary=$(bench_binary instructions)

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# Instructions of one process running `shape` on `side` `runs` times.
count() {
    local shape=$1 side=$2 runs=$3
    SWF_SHAPE=$shape SWF_SIDE=$side SWF_RUNS=$runs valgrind --tool=callgrind \
        --callgrind-out-file="$scratch/callgrind.out" "$binary" >/dev/null 2>"$scratch/log" || {
        cat "$scratch/log" >&2
        exit 1
    }
    grep -o 'Collected : [0-9]*' "$scratch/log" | grep -o '[0-9]*$'
}

per_run() {
    local shape=$1 side=$2 runs once twice
    runs=$(runs_of "$shape")
    # Plain assignments, so that a failed count stops the script (`set -e`).
    once=$(count "$shape" "$side" "$runs")
    twice=$(count "$shape" "$side" $((2 * runs)))
    echo $(((twice - once) / runs))
}

printf '%-12s %14s %14s %7s\n' shape compiled "by hand" ratio
for shape in "${shapes[@]}"; do
    compiled=$(per_run "$shape" compiled)
    by_hand=$(per_run "$shape" by-hand)
    ratio=$(awk -v a="$compiled" -v b="$by_hand" 'BEGIN { printf "%.2f", a / b }')
    printf '%-12s %14d %14d %6s×\n' "$shape" "$compiled" "$by_hand" "$ratio"
done
