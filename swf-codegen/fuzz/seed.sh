#!/bin/sh
# Fills the fuzz corpora with the repository's workflow files (the seed corpus), next to the
# stored minimized corpus in `seeds/`: `check_gen` gets each file, `check_gen_set` each file and
# the files of each directory joined by NUL bytes (sub-flows call their neighbours).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdir -p "$here/corpus/check_gen" "$here/corpus/check_gen_set"
cp "$here"/seeds/check_gen/* "$here/corpus/check_gen/" 2>/dev/null || true
cp "$here"/seeds/check_gen_set/* "$here/corpus/check_gen_set/" 2>/dev/null || true
find "$root" -path "$root/target" -prune -o -path "$here" -prune -o \
    \( -name '*.sw.yaml' -o -name '*.sw.yml' -o -name '*.sw.json' \) -print |
    sort | while read -r file; do
        name=$(printf '%s' "${file#"$root"/}" | tr '/' '_')
        cp "$file" "$here/corpus/check_gen/$name"
        cp "$file" "$here/corpus/check_gen_set/$name"
    done
find "$root" -path "$root/target" -prune -o -path "$here" -prune -o -type d -print |
    while read -r dir; do
        set -- "$dir"/*.sw.yaml
        [ -e "$1" ] || continue
        [ "$#" -gt 1 ] || continue
        name=$(printf '%s' "${dir#"$root"/}" | tr '/' '_')
        for file in "$@"; do cat "$file"; printf '\0'; done > "$here/corpus/check_gen_set/dir_$name"
    done
