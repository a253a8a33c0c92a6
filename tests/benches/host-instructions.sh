#!/usr/bin/env bash
# The host bench's costs counted by callgrind, with its cache model: per event that closes its
# instance (the phase the bench times) and per instance opened, in the order the instances
# were opened and in a shuffled order. The figures a change to the host is judged by: unlike
# events per second, neither the machine nor its load changes them.
#
#   tests/benches/host-instructions.sh [INSTANCES]   # default: 20000
#
# The timed phase is split out with callgrind's `--dump-before` on the bench's reads of the
# runtime thread's CPU time, which bracket it. What comes before it, counted per instance
# opened, includes the process's start and the building of both events of every instance: a
# figure to compare between commits. The cache model is a 32 KiB first-level data
# cache and an 8 MiB last level (what the README's figures use). One round on each runtime:
# only the current-thread round's phases are reported. Takes about a minute.
set -euo pipefail
cd "$(dirname "$0")/../.."

source tests/benches/script-common.sh
require_valgrind host-instructions.sh
instances=${1:-20000}
if ! [[ $instances =~ ^[1-9][0-9]*$ ]]; then
    echo "host-instructions.sh: INSTANCES is a whole number of at least 1, not $instances" >&2
    exit 2
fi

binary=$(bench_binary host)

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The bench reads files relative to the tests crate.
cd tests
for order in in-order shuffled; do
    SWF_BENCH_ORDER=$order SWF_BENCH_INSTANCES=$instances SWF_BENCH_ROUNDS=1 valgrind \
        --tool=callgrind --cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64 \
        --dump-before='std::fs::read_to_string::inner' \
        --callgrind-out-file="$scratch/$order" "$binary" >"$scratch/$order.log" 2>&1 || {
        cat "$scratch/$order.log" >&2
        exit 1
    }
done

# Dump 1 ends where the first read of the CPU time starts the timed phase; dump 2 is that
# phase. The summary's columns: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw.
printf '%-10s %-26s %12s %14s %14s\n' order phase instructions "D1 read misses" "LL read misses"
for order in in-order shuffled; do
    for part in 1 2; do
        label="per instance opened (+)"
        [ "$part" = 2 ] && label="per event closing one"
        grep '^summary:' "$scratch/$order.$part" | awk -v n="$instances" -v order="$order" \
            -v label="$label" '{ printf "%-10s %-26s %12.0f %14.1f %14.1f\n", order, label, $2 / n, $6 / n, $9 / n }'
    done
done
grep -o '[0-9]* bytes per waiting instance' "$scratch/shuffled.log" | head -n 1
echo "(+) with the process's start and the building of each instance's two events"
