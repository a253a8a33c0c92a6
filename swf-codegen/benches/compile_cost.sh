#!/usr/bin/env bash
# What a user pays to compile a workflow of N tasks (issue 10, point 4): a scratch crate that
# includes the `swfc gen` output of the `scale` workflow (the chain of `benches/scale.rs`:
# operation tasks, every fourth a switch), runs it, and round-trips its state through
# serde_json (so every step and the state's serde impls are instantiated, as a durable host
# would). It is built once to warm its dependencies, then each size is rebuilt alone, debug and
# release, without incremental compilation; `/usr/bin/time` reports wall, CPU and peak memory.
#
#   swf-codegen/benches/compile_cost.sh [TASKS...]      # default: 1 100 1000
#
# The README's "Compile time against task count" gives the numbers and the machine.
set -euo pipefail
# The warm-up too: toggling it would rebuild `swf-runtime`, a path dependency, in the first run.
export CARGO_INCREMENTAL=0
cd "$(dirname "$0")/../.."
root=$PWD
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1 100 1000)

cargo build --release -q -p swf-codegen --bin swfc
scratch=${SCRATCH:-$(mktemp -d)}
mkdir -p "$scratch/src"
cat >"$scratch/Cargo.toml" <<EOF
[package]
name = "compile-cost"
version = "0.1.0"
edition = "2024"

[dependencies]
swf-runtime = { path = "$root/swf-runtime" }
serde_json = "1"

[workspace]
EOF
cat >"$scratch/src/lib.rs" <<'EOF'
include!(concat!(env!("CARGO_MANIFEST_DIR"), "/gen.rs"));

pub struct Functions;

impl ScaleFunctions for Functions {
    async fn work(
        &self,
        args: ::swf_runtime::Value,
    ) -> Result<::swf_runtime::Value, ::swf_runtime::FunctionError> {
        Ok(args)
    }
}

pub async fn run(
    input: ::swf_runtime::Value,
) -> Result<::swf_runtime::Value, ::swf_runtime::WorkflowError> {
    ScaleWorkflow::new(Functions).run(input).await
}

pub fn round_trip(saved: &str) -> Option<String> {
    let state: ScaleState = serde_json::from_str(saved).ok()?;
    serde_json::to_string(&state).ok()
}
EOF

# The `scale` workflow of `count` tasks, as `benches/scale.rs` writes it.
workflow() {
    local count=$1 i start next
    printf 'id: scale\nname: scale\nversion: %s\nfunctions:\n  - {name: work, resource: r}\ntasks:\n' "'1.0'"
    for ((i = 0; i < count; i++)); do
        start=""
        [ "$i" -eq 0 ] && start="start: {kind: default}, "
        if [ $((i + 1)) -eq "$count" ]; then
            next="end: {kind: default}"
        else
            next="transition: {nextTask: t$((i + 1))}"
        fi
        if [ $((i % 4)) -eq 3 ] && [ $((i + 1)) -lt "$count" ]; then
            printf '  - {name: t%d, type: switch, %sdataConditions: [{path: $.n, value: %s, operator: equals, transition: {nextTask: t%d}}], default: {nextTask: t%d}}\n' \
                "$i" "$start" "'1'" $((i + 1)) $((i + 1))
        else
            printf '  - {name: t%d, type: operation, %sactions: [{functionRef: {refName: work, parameters: {n: $.n}}}], %s}\n' \
                "$i" "$start" "$next"
        fi
    done
}

cd "$scratch"
workflow 1 >scale.sw.yaml
"$root/target/release/swfc" gen scale.sw.yaml >gen.rs
cargo build -q
cargo build -q --release
for count in "${sizes[@]}"; do
    workflow "$count" >scale.sw.yaml
    "$root/target/release/swfc" gen scale.sw.yaml >gen.rs
    lines=$(wc -l <gen.rs)
    for profile in dev release; do
        touch src/lib.rs
        /usr/bin/time -f "$count tasks ($lines lines), $profile: %e s wall, %U s user, %S s system, %M KB peak" \
            cargo build -q --profile "$profile"
    done
done
echo "scratch crate: $scratch"
