# shellcheck shell=bash
# Shared settings of the VM harness; sourced by tests/vm/run and tests/vm/lib/*.
# Everything the harness makes lives under $VM (the build tree's vm/), so a
# clean checkout only needs `rm -rf build` to start over.
#
# The guests' Debian release is $SIWX_VM_DISTRO (tests/vm/run --distro sets
# it, and scenarios pass it on to their runs through the environment):
# bookworm, the default, takes kernel and user space from the host's own
# packages; trixie and sid from a root of that release (scripts/distro-root).
# Each release keeps its kernel, images, modules and logs in its own $VM.

VM_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOP=$(cd "$VM_SRC/../.." && pwd)
BUILD=${SIWX_BUILD_DIR:-$TOP/build}
VM_DISTROS="bookworm trixie sid"

say() { printf 'vm: %s\n' "$*" >&2; }
die() { printf 'vm: error: %s\n' "$*" >&2; exit 1; }

DISTRO=${SIWX_VM_DISTRO:-bookworm}
case " $VM_DISTROS " in
*" $DISTRO "*) ;;
*) die "unknown release '$DISTRO' (--distro / SIWX_VM_DISTRO): use one of: $VM_DISTROS" ;;
esac
# The guests' kernel: Debian's (stock) or, with tests/vm/run --debug-kernel
# (SIWX_VM_KERNEL=debug), bookworm's rebuilt with KASAN, lockdep and
# kmemleak (lib/build-debug-kernel), with images and logs of its own.
KERNEL_KIND=${SIWX_VM_KERNEL:-stock}
case $KERNEL_KIND in
stock) ;;
debug) [ "$DISTRO" = bookworm ] || die "--debug-kernel is bookworm's kernel rebuilt: not with --distro $DISTRO" ;;
*) die "unknown kernel '$KERNEL_KIND' (SIWX_VM_KERNEL): stock or debug" ;;
esac
if [ "$KERNEL_KIND" = debug ]; then
	VM=$BUILD/vm/debug
elif [ "$DISTRO" = bookworm ]; then
	VM=$BUILD/vm
else
	VM=$BUILD/vm/$DISTRO
fi
CACHE=$BUILD/vm/cache    # downloaded .deb files, kept across rebuilds
mkdir -p "$CACHE" "$VM"

# Kernel modules the guests load (build-base adds their dependencies; the
# debug kernel builds these and no other): devices and links, the kernel
# ULPs (NVMe-oF, NFS/RDMA, iSER with LIO), the dummy netdev of siwx-device,
# tcp_diag, through which ss reads TCP's state (siwx-link-flap), and tc's
# ingress filter that holds NFS clients' connects off while nfsd restarts
# (lib/nfs-guest.sh, hold_connects).
GUEST_MODULES=(virtio_net virtio_pci e1000 ib_uverbs rdma_ucm rdma_rxe sch_netem dummy tcp_diag
	sch_ingress cls_flower act_gact
	nvme-rdma nvmet-rdma rpcrdma nfsd nfsv3 nfsv4
	ib_iser ib_isert sd_mod target_core_file)
# Packages of the kernel storage scenarios' programs (lib/build-base,
# lib/storage-root): NFS server and client, rpcbind, open-iscsi.
STORAGE_PKGS=(nfs-kernel-server nfs-common rpcbind open-iscsi)
# CRC modules that some kernels have and others do not (7.x folded them into
# the CRC library): taken where they exist.
GUEST_MAYBE_MODULES=(crc32_generic libcrc32c crc32c_generic crc32c-intel)

# Upstream siw's own defects (docs/testing.md, "Upstream siw's defects and
# the one retry they get"), which the scenarios with a siw peer run once
# more on, once, when a failed run's capture proves one; any other failure
# counts.
# siw_accept_race PCAP PORT: siw as the passive side sent its MPA Reply and
# only then gave the socket to its QP, so the client's first FPDU stayed
# unread: on one of PORT's connections the client sent FPDUs, the server
# none after its Reply (judged per connection: a port may carry several,
# and the race can hit any one of them).
siw_accept_race() {
	local f
	f=$("$VM_SRC/mpa-fpdus" --streams "$1" "$2" 2>/dev/null) || return 1
	awk '$2 == "c2s" { c[$1]++ } $2 == "s2c" { s[$1]++ }
		END { for (k in c) if (!(k in s)) exit 0; exit 1 }' <<<"$f"
}
# siw_sent_bad_crc PCAP PORT DIR: upstream siw, sending DIR (c2s as the
# connecting side, s2c as the passive one), put an FPDU on the wire whose
# MPA CRC does not match it: siw's defect, which siwx must answer with a
# Terminate (RFC 5044 section 8). Seen once (Linux 6.18, siw the client of
# perftest's ib_write_bw): the FPDU after the bad one skipped a segment's
# worth of the Write's tagged offsets.
siw_sent_bad_crc() {
	local f
	f=$("$VM_SRC/mpa-fpdus" --streams "$1" "$2" 2>/dev/null) || return 1
	awk -v dir="$3" '$2 == dir && $NF == "BAD" { bad = 1 } END { exit !bad }' <<<"$f"
}
# symvers_id: a digest of the guests' kernel's symbol versions ($KDIR), for
# the keys of modules built against it. The debug kernel keeps its release
# and its sources' times when it is rebuilt; a module of the previous build
# then fails to load ("disagrees about version of symbol").
symvers_id() { sha256sum <"$KDIR/Module.symvers" | cut -c1-16; }
# link_stall PCAP: guest 1 fell silent on link 0 (no frame at all: no TCP
# segment or ACK, no ARP) for at least 20 s while guest 2 kept sending to
# it, to the capture's end. Its whole network stack stops answering only
# when its NIC's frames stop moving, which no RDMA device in either guest
# can cause (the open problem in docs/testing.md: seen with upstream siw on
# guest 1). MACs: tests/vm/run's start_guest.
link_stall() {
	tshark -r "$1" -T fields -e frame.time_relative -e eth.src 2>/dev/null | awk '
		$2 == "52:54:00:5e:00:01" { last1 = $1 }
		$2 == "52:54:00:5e:00:02" { last2 = $1; if ($1 - last1 >= 20) after++ }
		END { exit !(last1 > 0 && last2 - last1 >= 20 && after >= 3) }'
}
# QP_RUNNING: guest shell that waits until a QP of $DEV is in RTS (the
# command started as $p connected), at most 60 s or until $p exited: a
# fault a scenario injects must hit a connection, however slow the kernel
# (on the debug kernel, resolving and connecting took more than 4 s).
QP_RUNNING='i=0; until rdma res show qp link $DEV/1 | grep -q "state RTS" || [ $i -ge 600 ]; do kill -0 $p 2>/dev/null || break; sleep 0.1; i=$((i + 1)); done'
# capture_check LABEL PCAP PORT NEED...: the RDMAP messages of the capture
# on PORT (tests/vm/mpa-fpdus), counted by direction and opcode and
# printed; each NEED, "DIR OPCODES WHAT" (OPCODES a regex such as 0x3|0x5,
# DIR c2s: from the connecting side, RFC 5040 section 4.3), must be among
# them; no Terminate, and every CRC good.
capture_check() {
	local label=$1 pcap=$2 port=$3 fpdus counts bad need dir ops what
	shift 3
	fpdus=$("$VM_SRC/mpa-fpdus" "$pcap" "$port") || die "$label: capture not parsed"
	counts=$(awk '{ n[$1 " " $2]++ } END { for (k in n) print k, n[k] }' <<<"$fpdus" | sort)
	echo "$counts"
	for need; do
		read -r dir ops what <<<"$need"
		grep -Eq "^$dir ($ops) " <<<"$counts" || die "$label: no $what in the capture"
	done
	if grep -q ' 0x7 ' <<<"$counts"; then die "$label: a Terminate in the capture"; fi
	bad=$(awk '$NF != "good"' <<<"$fpdus" | head -n 3)
	[ -z "$bad" ] || die "$label: FPDUs with a bad CRC: $bad"
}
# set_aside LOGDIR WHY [WHAT]: keep the failed try's logs as LOGDIR.WHY;
# WHAT says whose defect it was (by default upstream siw's, proven by the
# capture).
set_aside() {
	local what="upstream siw's defect, not siwx's ($2: the capture shows siwx's side right)"
	[ -z "${3:-}" ] || what=$3
	rm -rf "$1.$2"
	mv "$1" "$1.$2"
	say "$what (logs: $1.$2): running once more"
}

# module_make DIR [ARGS...]: Kbuild of the out-of-tree module in DIR against
# the guests' headers (kernel.env): on the host, or for another release in
# its root (DIR must be inside it), by that release's compiler.
module_make() {
	local dir=$1
	shift
	if [ -n "${KBUILD_ROOT:-}" ]; then
		"$TOP/scripts/in-root" "$KBUILD_ROOT" make -s -C "${KDIR#"$KBUILD_ROOT"}" \
			M="${dir#"$KBUILD_ROOT"}" "$@" modules
	else
		make -s -C "$KDIR" M="$dir" "$@" modules
	fi
}

# rdma_core_release: the rdma-core release of $DISTRO's librdmacm (the
# upstream part of its package version: bookworm 44.0, trixie 56.1, sid
# 65.0), whose pristine source our rsockets patches are built from
# (tests/rsockets/build-release).
rdma_core_release() {
	local root v
	root=$(distro_root)
	# dpkg-query fails for the name that is not known: only its output counts.
	v=$({ dpkg-query ${root:+--admindir="$root/var/lib/dpkg"} -W -f '${Version}\n' \
		librdmacm1 librdmacm1t64 2>/dev/null || true; } | grep -m1 .) ||
		die "no librdmacm installed for $DISTRO's guests (librdmacm1 or librdmacm1t64)"
	v=${v#*:}
	echo "${v%-*}"
}

# build_rsockets [--deb DEBDIR]: librdmacm with our rsockets patches for
# $DISTRO's guests (in its root for trixie and sid), and with --deb the
# siwx-rsockets package of it; prints the build's directory.
build_rsockets() {
	"$TOP/tests/rsockets/build-release" \
		$([ "$DISTRO" = bookworm ] || echo "--distro $DISTRO") "$@" "$(rdma_core_release)"
}

# deb_admits DEB PKG HAVE: DEB's Depends name a range of PKG (both bounds)
# that admits version HAVE; else a message on stderr and status 1.
deb_admits() {
	local deb=$1 pkg=$2 have=$3 deps op v n=0
	deps=$(dpkg-deb -f "$deb" Depends)
	while read -r op v; do
		dpkg --compare-versions "$have" "$op" "$v" || {
			say "$(basename "$deb") wants $pkg ($op $v); the guests have $have"
			return 1
		}
		n=$((n + 1))
	done < <(grep -o "$pkg ([^)]*)" <<<"$deps" | sed 's/.*(\(.*\))/\1/')
	[ $n -ge 2 ] || { say "$(basename "$deb") has no $pkg range in Depends: $deps"; return 1; }
}

# distro_root: the root of $DISTRO's files (built once), or "" for bookworm,
# whose files are the host's own.
distro_root() {
	[ "$DISTRO" = bookworm ] && return 0
	SIWX_BUILD_DIR=$BUILD "$TOP/scripts/distro-root" "$DISTRO" ||
		die "no $DISTRO root (scripts/distro-root $DISTRO failed)"
}

# A stamp file holds a key describing every input of a product; the product
# is rebuilt only when the key changes ("rebuild only what changed").
# overlay_copy_path P: for an overlay builder (base image root $base, the
# overlay's tree $root, the source root $R, empty for the host): P into
# $root with the symlinks along the way, unless the base image has it.
overlay_copy_path() {
	local p=$1 t
	# merged /usr: /lib and /bin of the guests are links into /usr, which
	# unpacking a directory of that name would replace
	case $p in /lib/* | /lib64/* | /bin/* | /sbin/*) p=/usr$p ;; esac
	[ -e "$base$p" ] || [ -L "$base$p" ] || [ -e "$root$p" ] || [ -L "$root$p" ] && return 0
	mkdir -p "$(dirname "$root$p")"
	if [ -L "$R$p" ]; then
		cp -P "$R$p" "$root$p"
		t=$(readlink "$R$p")
		case $t in /*) ;; *) t=$(dirname "$p")/$t ;; esac
		overlay_copy_path "$(realpath -s -m "$t")"
	else
		cp -p "$R$p" "$root$p"
	fi
}
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
