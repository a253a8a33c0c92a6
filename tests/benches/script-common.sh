# Shared by the bench scripts (`instructions.sh`, `host-instructions.sh`); sourced, not run.

# Stops the script `$1` unless valgrind is installed.
require_valgrind() {
    if ! command -v valgrind >/dev/null; then
        echo "$1: valgrind is not installed (on Debian: apt-get install valgrind)" >&2
        exit 2
    fi
}

# Builds the swf-tests bench `$1` (release) and prints the path of its binary.
bench_binary() {
    local name=$1 binary
    binary=$(cargo bench -q -p swf-tests --bench "$name" --no-run --message-format=json |
        grep -o "\"executable\":\"[^\"]*/$name-[^\"]*\"" | cut -d'"' -f4 | tail -n 1)
    if [ ! -x "$binary" ]; then
        echo "cargo built no $name bench binary" >&2
        exit 1
    fi
    echo "$binary"
}
