# shellcheck shell=bash
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

# Builders of shared products (kernel tree, images, siw) hold this lock, so
# that runs started together, even from other build dirs sharing $VM, build
# one after the other. Nested calls inherit the holder's lock.
images_lock() {
	[ -n "${SIWX_VM_LOCKED:-}" ] && return 0
	# A caller holding the lock on fd 9, as in `(flock 9 && lib/kernel) 9>lock`,
	# passes it down: taking it again through a new open would deadlock.
	[ "$(readlink /proc/self/fd/9 2>/dev/null)" = "$(realpath "$VM/.images.lock" 2>/dev/null)" ] && return 0
	exec 9>"$VM/.images.lock"
	flock 9
	export SIWX_VM_LOCKED=$$
}
images_unlock() {
	[ "${SIWX_VM_LOCKED:-}" = $$ ] || return 0
	exec 9>&-
	unset SIWX_VM_LOCKED
}
