# Shared settings of the VM harness; sourced by tests/vm/run and tests/vm/lib/*.
# Everything the harness makes lives under $VM (the build tree's vm/), so a
# clean checkout only needs `rm -rf build` to start over.

VM_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOP=$(cd "$VM_SRC/../.." && pwd)
BUILD=${SIWX_BUILD_DIR:-$TOP/build}
VM=$BUILD/vm
CACHE=$VM/cache          # downloaded .deb files, kept across rebuilds
mkdir -p "$CACHE"

say() { printf 'vm: %s\n' "$*" >&2; }
die() { printf 'vm: error: %s\n' "$*" >&2; exit 1; }

# A stamp file holds a key describing every input of a product; the product
# is rebuilt only when the key changes ("rebuild only what changed").
stamp_ok() { [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; }
stamp_set() { printf '%s' "$2" >"$1"; }
