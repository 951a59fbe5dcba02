# iSCSI over RDMA (iSER) inside a guest (scenario siwx-iser copies this file
# to /overlay/iser.sh, and guest-ctl.sh to /overlay/ctl.sh). Runs under
# busybox sh:
#   sh /overlay/iser.sh target ADDR...   LIO target: one 64 MiB LUN (fileio
#                                        on tmpfs), an iSER portal on port
#                                        3260 of each ADDR; then obey the
#                                        initiator's commands until "done"
#   sh /overlay/iser.sh initiator ADDR [short]
#                                        open-iscsi over iser: discover the
#                                        target at ADDR, log in, write and
#                                        read back with checksums, have the
#                                        target check what it holds, log out
#                                        and in again, read it once more
#                                        (short: 2 MiB, not 42, for a capture)
#   sh /overlay/iser.sh bye ADDR         tell the target at ADDR "done"
set -eu
CTL_NAME=iser
. /overlay/ctl.sh

IQN=iqn.2026-11.org.siwx:target
LUN_FILE=/tmp/lun0.img
LUN_SIZE=67108864

# --- target ---------------------------------------------------------------

target() {
	modprobe -a target_core_file iscsi_target_mod ib_isert
	grep -q ' /sys/kernel/config ' /proc/mounts ||
		mount -t configfs configfs /sys/kernel/config
	t=/sys/kernel/config/target
	mkdir -p $t/core/fileio_0/lun0
	echo "fd_dev_name=$LUN_FILE,fd_dev_size=$LUN_SIZE" >$t/core/fileio_0/lun0/control
	echo 1 >$t/core/fileio_0/lun0/enable
	tpg=$t/iscsi/$IQN/tpgt_1
	mkdir -p $tpg/lun/lun_0
	ln -s $t/core/fileio_0/lun0 $tpg/lun/lun_0/lun0
	# any initiator, no CHAP, writable
	for a in authentication=0 generate_node_acls=1 cache_dynamic_acls=1 \
		demo_mode_write_protect=0; do
		echo "${a#*=}" >"$tpg/attrib/${a%=*}"
	done
	for addr in "$@"; do
		# A portal is an iSCSI TCP listener first, on the address and
		# port its iSER listener then needs: as siwx's (and siw's)
		# listener is a socket of the host's TCP, the two cannot share
		# it (EADDRINUSE). The TCP listener is created in a network
		# namespace of its own, where it takes nothing; iSER listens in
		# the guest's (docs/protocol-decisions.md, "Listeners and ports").
		unshare -n mkdir "$tpg/np/$addr:3260"
		echo 1 >"$tpg/np/$addr:3260/iser" ||
			fail "no iSER listener on $addr:3260"
	done
	echo 1 >$tpg/enable
	rdma res show cm_id | grep -q 'comm \[ib_isert\]' ||
		fail "ib_isert listens on no RDMA device"
	say "target $IQN: iSER on port 3260 of $*"
	while :; do
		set -- $(next_command)
		case ${1:-} in
		verify)
			# what the LUN holds: the initiator's checksum of its
			# first $3 bytes
			if [ "$(head -c "$3" $LUN_FILE | sha256sum | cut -d' ' -f1)" = "$2" ]; then
				say "the LUN holds what the initiator wrote ($3 bytes)"
				reply ok
			else
				reply bad
			fi ;;
		done) break ;;
		*) fail "unknown command '$*'" ;;
		esac
	done
	echo 0 >$tpg/enable
	say "target stopped"
}

# --- initiator ------------------------------------------------------------

# disk: the block device of the one session, once it is there (10 s).
disk() {
	i=0
	while :; do
		d=$(iscsiadm -m session -P 3 2>/dev/null |
			sed -n 's/.*Attached scsi disk \([a-z]*\).*/\1/p' | head -n 1)
		[ -n "$d" ] && [ -b "/dev/$d" ] && { echo "/dev/$d"; return; }
		i=$((i + 1))
		[ $i -lt 50 ] || fail "no disk after the login"
		sleep 0.2
	done
}

login() {
	iscsiadm -m node -T $IQN -p "$1:3260" -I iser --login >/dev/null ||
		fail "login to $1 over iser"
	iscsiadm -m session -P 1 | grep -q 'Iface Transport: iser' ||
		fail "the session is not over iser: $(iscsiadm -m session -P 1)"
	rdma res show cm_id | grep 'comm \[ib_iser\]' | grep -q "dst-addr $1:3260" ||
		fail "no RDMA connection of ib_iser to $1:3260"
}

logout() {
	iscsiadm -m node -T $IQN -p "$1:3260" -I iser --logout >/dev/null ||
		fail "logout from $1"
	! iscsiadm -m session >/dev/null 2>&1 || fail "a session left after the logout"
}

# expect DEV OFFSET FILE HOW: DEV at OFFSET (MiB) holds FILE, read with HOW
# (direct, or buffered after dropping the page cache).
expect() {
	n=$(($(wc -c <"$3") / 1048576))
	if [ "$4" = direct ]; then
		dd if="$1" of=/tmp/back bs=1M skip="$2" count="$n" iflag=direct status=none
	else
		echo 3 >/proc/sys/vm/drop_caches
		dd if="$1" of=/tmp/back bs=1M skip="$2" count="$n" status=none
	fi
	cmp "$3" /tmp/back || fail "$1 at $2 MiB differs from $3 ($4)"
}

initiator() {
	addr=$1
	modprobe -a ib_iser sd_mod
	mkdir -p /etc/iscsi /var/lib/iscsi /run/lock/iscsi
	echo "InitiatorName=iqn.2026-11.org.siwx:initiator" >/etc/iscsi/initiatorname.iscsi
	pidof iscsid >/dev/null || iscsid
	# SendTargets discovery over iSER too (ib_iser's text negotiation)
	iscsiadm -m discovery -t st -p "$addr:3260" -I iser | grep -q "^$addr:3260,1 $IQN\$" ||
		fail "discovery at $addr: no $IQN"
	login "$addr"
	dev=$(disk)
	say "$dev over iser from $addr"
	big=32 parallel=8
	[ "${2:-}" = short ] && big=1 parallel=0
	head -c $((big * 1048576)) /dev/urandom >/tmp/big
	head -c 1048576 /dev/urandom >/tmp/part
	# BIG MiB at 0 with O_DIRECT in 1 MiB commands; PARALLEL writes of
	# 1 MiB at once from 40 MiB (many commands outstanding on the QP);
	# 1 MiB buffered at 50 MiB.
	dd if=/tmp/big of="$dev" bs=1M oflag=direct status=none
	pids= i=0
	while [ $i -lt $parallel ]; do
		dd if=/tmp/part of="$dev" bs=1M seek=$((40 + i)) oflag=direct status=none &
		pids="$pids $!" i=$((i + 1))
	done
	for p in $pids; do wait "$p" || fail "a parallel write failed"; done
	dd if=/tmp/part of="$dev" bs=1M seek=50 conv=fsync status=none
	expect "$dev" 0 /tmp/big direct
	expect "$dev" 0 /tmp/big buffered
	i=0
	while [ $i -lt $parallel ]; do expect "$dev" $((40 + i)) /tmp/part direct; i=$((i + 1)); done
	expect "$dev" 50 /tmp/part buffered
	sum=$(sha256sum </tmp/big | cut -d' ' -f1)
	[ "$(ask "$addr" "verify $sum $((big * 1048576))")" = ok ] ||
		fail "the target's LUN does not hold what was written"
	logout "$addr"
	login "$addr"
	dev=$(disk)
	expect "$dev" 0 /tmp/big direct
	expect "$dev" 50 /tmp/part direct
	logout "$addr"
	say "$addr: $((big + parallel + 1)) MiB written, read back, checked on the target and after a new login"
}

case ${1:-} in
target) shift; target "$@" ;;
initiator) initiator "$2" "${3:-}" ;;
bye) send "$2" done ;;
*) fail "usage: iser.sh target ADDR... | initiator ADDR [short] | bye ADDR" ;;
esac
