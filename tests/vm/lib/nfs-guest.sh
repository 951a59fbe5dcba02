# NFS over RDMA inside a guest (scenario siwx-nfs-rdma copies this file to
# /overlay/nfs.sh, and guest-ctl.sh to /overlay/ctl.sh). Runs under busybox sh:
#   sh /overlay/nfs.sh server            export /export (tmpfs) over TCP and
#                                        RDMA (port 20049), then obey the
#                                        client's commands until "done"
#   sh /overlay/nfs.sh client ADDR TAG WORKLOAD
#                                        mount ADDR:/export over RDMA as NFS
#                                        v4.2 and v3, run WORKLOAD (full,
#                                        short or capture) in the directory
#                                        TAG of the export, and have the
#                                        server check what it holds
#   sh /overlay/nfs.sh bye ADDR          tell the server at ADDR "done"
# and, for tools/bench's NFS bandwidth steps (one per measurement):
#   sh /overlay/nfs.sh bench-serve       export as above (once per boot),
#                                        then wait for the step's "done"
#   sh /overlay/nfs.sh bench-bw ADDR rdma|tcp write|read MIB
#                                        mount ADDR:/export (v4.2), time
#                                        writing (or reading back) MIB MiB,
#                                        print "nfs-bw,OP,PROTO,BYTES,SECONDS",
#                                        tell the server "done"
# The client talks to the server's control loop through ctl.sh
# (guest-ctl.sh).
set -eu
CTL_NAME=nfs
. /overlay/ctl.sh

# --- server ---------------------------------------------------------------

nfsd_start() {
	# Grace and lease at their minimum (10 s): NFSv4 refuses new opens for
	# the grace period after every start of nfsd.
	rpc.nfsd -G 10 -L 10 --rdma=20049 8
	grep -q '^rdma 20049$' /proc/fs/nfsd/portlist ||
		fail "nfsd has no RDMA listener: $(tr '\n' ' ' </proc/fs/nfsd/portlist)"
}

# export_start: /export (tmpfs) exported over TCP and RDMA, nfsd running.
export_start() {
	modprobe -a nfsd rpcrdma
	grep -q ' /proc/fs/nfsd ' /proc/mounts || mount -t nfsd nfsd /proc/fs/nfsd
	mkdir -p /export /var/lib/nfs/v4recovery /run/rpcbind
	: >/var/lib/nfs/etab
	: >/var/lib/nfs/rmtab
	mount -t tmpfs -o size=1g export /export
	echo '/export *(rw,no_root_squash,no_subtree_check,insecure)' >/etc/exports
	rpcbind
	pidof rpcbind >/dev/null || fail "rpcbind did not start"
	rpc.mountd
	pidof rpc.mountd >/dev/null || fail "rpc.mountd did not start"
	exportfs -r
	nfsd_start
	say "exporting /export: $(tr '\n' ' ' </proc/fs/nfsd/portlist)"
}

server() {
	export_start
	while :; do
		cmd=$(next_command)
		set -- $cmd
		case ${1:-} in
		restart)
			# Every transport closes, RDMA connections included; the
			# clients reconnect and resend what was outstanding, once
			# nfsd listens again (hold_connects).
			hold_connects
			rpc.nfsd 0
			sleep 2
			nfsd_start
			held=$(release_connects)
			say "nfsd restarted; $held TCP SYNs to port 20049 held off meanwhile"
			reply restarted ;;
		verify)
			# The files as the server holds them: the client's checksums
			# of what it wrote.
			if (cd "/export/$2" && sha256sum -c -s sums); then
				say "$2: $(wc -l <"/export/$2/sums") files as the client wrote them"
				reply ok
			else
				(cd "/export/$2" && sha256sum -c sums 2>&1 | grep -v ': OK$' | head -5) || :
				reply bad
			fi ;;
		done) break ;;
		*) fail "unknown command '$cmd'" ;;
		esac
	done
	rpc.nfsd 0
	exportfs -au
	say "nfsd stopped"
	svcrdma_leak_check
}

# Linux's svcrdma (6.1, 6.12 and 7.2 alike) never frees a connection
# request still waiting on its listener for nfsd's accept when nfsd stops
# (the listener's sc_accept_q is not emptied;
# net/sunrpc/xprtrdma/svc_rdma_transport.c); its cm_id then blocks the
# device's removal for ever (the guest's teardown would hang until the
# run's time limit). The clients reconnect as soon as nfsd closes their
# connections, while its listener is still there but no thread accepts:
# 2 such requests in each of 2 runs of CI's (2026-11-26).
#
# hold_connects: drop TCP SYNs to the RDMA port arriving on any link. The
# clients' TCP connects retry (siwx's active side waits SIWX_MPA_TIMEOUT,
# 10 s, through SYN retransmissions at 1, 3 and 7 s) and reach the new
# listener once release_connects has run.
hold_connects() {
	modprobe -a sch_ingress cls_flower act_gact
	for d in /sys/class/net/eth*; do
		d=${d##*/}
		/usr/sbin/tc qdisc add dev "$d" clsact
		/usr/sbin/tc filter add dev "$d" ingress protocol ip flower \
			ip_proto tcp dst_port 20049 tcp_flags 0x2/0x12 action drop
	done
}

# release_connects: stop dropping; print how many SYNs were dropped.
release_connects() {
	held=0
	for d in /sys/class/net/eth*; do
		d=${d##*/}
		n=$(/usr/sbin/tc -s filter show dev "$d" ingress |
			sed -n 's/.*(dropped \([0-9]*\).*/\1/p' | head -1)
		held=$((held + ${n:-0}))
		/usr/sbin/tc qdisc del dev "$d" clsact
	done
	echo "$held"
}

# Held off as above, no such request should remain once nfsd stopped for
# good; if one does, say so and power off now, rather than hang.
svcrdma_leak_check() {
	i=0
	while left=$(rdma res show cm_id | grep 'comm \[rpcrdma\]'); do
		i=$((i + 1))
		[ $i -lt 25 ] || break
		sleep 0.2
	done
	[ -n "$left" ] || return 0
	echo "SVCRDMA-PENDING-LEAK: cm_ids of rpcrdma left after nfsd stopped:"
	echo "$left"
	poweroff -f
}

# --- client ---------------------------------------------------------------

# mount_v4 ADDR MOUNTPOINT OPTIONS: mount ADDR:/export, retried for 10 s
# (a mount right after nfsd started can fail).
mount_v4() {
	i=0
	until mount.nfs4 "$1:/export" "$2" -o "$3"; do
		i=$((i + 1))
		[ $i -lt 10 ] || fail "mount -o $3 $1:/export"
		sleep 1
	done
}

# xprt MOUNTPOINT: the RPC transport line of the mount in mountstats
# ("xprt: rdma 0 BIND CONNECTS ..." for RPC-over-RDMA).
xprt() {
	awk -v m="$1" '$1 == "device" { cur = ($5 == m) } cur && $1 == "xprt:" { print; exit }' \
		/proc/self/mountstats
}
# xprt_field MOUNTPOINT N: field N after "rdma" (3: connect count; 11, 12,
# 13: read, write and reply chunks; net/sunrpc/xprtrdma/transport.c)
xprt_field() { xprt "$1" | awk -v n="$2" '{ print $(n + 2) }'; }

# src SIZE: a file of SIZE random bytes in /tmp and its checksum, made once.
src() {
	f=/tmp/src.$1
	if [ ! -f "$f" ]; then
		head -c "$1" /dev/urandom >"$f"
		sha256sum <"$f" | cut -d' ' -f1 >"$f.sum"
	fi
	echo "$f"
}

# put SRC DEST: copy SRC to $dir/DEST, buffered (cp) or with O_DIRECT (dd,
# names d.*); remember what it should hold (/tmp/list, /tmp/sums).
put() {
	case $(basename "$2") in
	d.*) dd if="$1" of="$dir/$2" bs=1M oflag=direct status=none ;;
	*) cp "$1" "$dir/$2" ;;
	esac
	echo "$1 $2" >>/tmp/list
	echo "$(cat "$1.sum")  $2" >>/tmp/sums
}

# check SRC FILE: FILE read back (buffered, or O_DIRECT for d.*) equals SRC.
check() {
	case $(basename "$2") in
	d.*) dd if="$2" of=/tmp/back bs=1M iflag=direct status=none ;;
	*) cat "$2" >/tmp/back ;;
	esac
	cmp "$1" /tmp/back || fail "$2 read back differs"
}

sizes_full="1 4095 4096 65537 1048579 8388608 67108864"
sizes_short="1 4096 65537 1048579 8388608"
sizes_capture="4096 1048576"

# workload DIR KIND: write, then read back, every size buffered and with
# O_DIRECT, files in parallel, a directory tree; KIND full, short or capture.
workload() {
	dir=$1
	mkdir -p "$dir"
	: >/tmp/list
	: >/tmp/sums
	eval "sizes=\$sizes_$2"
	for s in $sizes; do
		f=$(src "$s")
		put "$f" "b.$s"
		put "$f" "d.$s"
	done
	if [ "$2" != capture ]; then
		f=$(src 1048579)
		for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
			put "$f" "p.$i" &
		done
		wait
		# a tree: 8 directories 3 levels deep, 4 small files in each
		for a in 1 2; do for b in 1 2; do for c in 1 2; do
			mkdir -p "$dir/tree/$a/$b/$c"
			for n in 1 2 3 4; do put "$(src $((a * 100 + b * 10 + c + n)))" "tree/$a/$b/$c/f$n"; done
		done; done; done
		[ "$(find "$dir/tree" -type f | wc -l)" = 32 ] || fail "$dir/tree: not 32 files"
		[ "$(find "$dir/tree" -type d | wc -l)" = 15 ] || fail "$dir/tree: not 15 directories"
	fi
	sync
	echo 3 >/proc/sys/vm/drop_caches
	while read -r f name; do check "$f" "$dir/$name"; done </tmp/list
	cp /tmp/sums "$dir/sums"
	say "$dir: $(wc -l </tmp/list) files written and read back"
}

client() {
	addr=$1 tag=$2 kind=$3
	modprobe -a nfsv4 nfsv3 rpcrdma
	mkdir -p /mnt/v4 /mnt/v3 /var/lib/nfs
	mount_v4 "$addr" /mnt/v4 vers=4.2,proto=rdma,port=20049
	mount.nfs "$addr:/export" /mnt/v3 -o vers=3,proto=rdma,port=20049,nolock
	for m in /mnt/v4 /mnt/v3; do
		x=$(xprt $m)
		case $x in *"xprt:"*rdma*) ;; *) fail "$m is not over RDMA: '$x'" ;; esac
		say "$m: $(awk -v m=$m '$2 == m { print $4 }' /proc/mounts)"
	done
	for m in /mnt/v4 /mnt/v3; do
		# The full sizes (1 B to 64 MiB) through v4.2; v3, the same RPC
		# transport, gets the short list (the suite's time).
		k=$kind
		[ "$m$k" != /mnt/v3full ] || k=short
		workload "$m/$tag${m#/mnt/}" "$k"
		[ "$(ask "$addr" "verify $tag${m#/mnt/}")" = ok ] || fail "the server's $tag${m#/mnt/} differs"
	done
	if [ "$kind" = full ]; then
		restart "$addr"
	fi
	for m in /mnt/v4 /mnt/v3; do
		say "$m: $(xprt $m | awk '{ print "connects " $5 ", read chunks " $13 ", write chunks " $14 ", reply chunks " $15 }')"
		[ "$(xprt_field $m 12)" -gt 0 ] || fail "$m: no write chunks (server RDMA Writes)"
	done
	umount /mnt/v4 /mnt/v3
}

# restart ADDR: nfsd stops and starts while both mounts write; the writes
# complete, the data is exact, and each mount connected again.
restart() {
	c4=$(xprt_field /mnt/v4 3) c3=$(xprt_field /mnt/v3 3)
	f=$(src 8388608)
	pids=
	for m in /mnt/v4 /mnt/v3; do
		d=$m/restart
		mkdir -p "$d"
		(for i in 1 2 3 4 5 6; do dd if="$f" of="$d/r.$i" bs=1M oflag=direct status=none || exit 1; done) &
		pids="$pids $!"
	done
	sleep 1
	[ "$(ask "$1" restart)" = restarted ] || fail "server restart"
	# one wait a writer: a bare "wait" returns 0 whatever they returned
	for p in $pids; do wait "$p" || fail "writes across the server restart"; done
	echo 3 >/proc/sys/vm/drop_caches
	for m in /mnt/v4 /mnt/v3; do
		for i in 1 2 3 4 5 6; do check "$f" "$m/restart/r.$i"; done
		c=$(xprt_field $m 3)
		[ "$c" -gt "$(eval echo \$c${m#/mnt/v})" ] || fail "$m did not reconnect (connects $c)"
	done
	say "writes across the server restart complete and exact; both mounts reconnected"
}

# --- bandwidth (tools/bench) ------------------------------------------------

# bench_serve: the export, set up by the boot's first step; then the wait
# for the client's "done". Its control listener is new in every step: the
# harness takes it as the sign that the server is ready.
bench_serve() {
	[ -f /tmp/nfs-exported ] || { export_start && : >/tmp/nfs-exported; }
	cmd=$(next_command)
	[ "$cmd" = done ] || fail "bench-serve: unexpected command '$cmd'"
}

uptime_s() { cut -d' ' -f1 /proc/uptime; }

# bench_bw ADDR PROTO OP MIB: one timed transfer through a fresh v4.2 mount
# with an empty page cache: a buffered write of MIB MiB ended by fsync (as
# applications write), or the read of that file (readahead), which is then
# removed. The file is named by transport and address: each stack has its
# own link, and the boot's steps write every stack's file before reading.
bench_bw() {
	addr=$1 proto=$2 op=$3 mib=$4
	m=/mnt/bench f=/mnt/bench/bw.$proto.$addr
	port=2049
	[ "$proto" = rdma ] && port=20049
	modprobe -a nfsv4 rpcrdma
	mkdir -p $m /var/lib/nfs
	umount -l $m 2>/dev/null || :
	# soft, short timeouts: a transport that stalls fails its step (EIO
	# within about 30 s), instead of hanging the boot on a hard mount.
	mount_v4 "$addr" $m "vers=4.2,proto=$proto,port=$port,soft,timeo=100,retrans=1"
	x=$(xprt $m)
	# its words: "xprt:", the transport, its counters
	set -- $x
	[ "${2:-}" = "$proto" ] || fail "$m is not over $proto: '$x'"
	# Opening a file waits out NFSv4's grace period after nfsd started.
	: >"$m/warm.$proto.$addr"
	echo 3 >/proc/sys/vm/drop_caches
	t0=$(uptime_s)
	case $op in
	write) dd if=/dev/zero of="$f" bs=1M count="$mib" conv=fsync status=none ;;
	read)
		n=$(dd if="$f" of=/dev/null bs=1M 2>&1 | head -n 1)
		[ "$n" = "$mib+0 records in" ] || fail "read of $f: '$n', not $mib MiB" ;;
	*) fail "bench-bw: no operation '$op'" ;;
	esac
	t1=$(uptime_s)
	[ "$op" = write ] || rm -f "$f"
	umount $m
	echo "nfs-bw,$op,$proto,$((mib * 1048576)),$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
	send "$addr" done
}

case ${1:-} in
server) server ;;
client) shift; client "$@" ;;
bye) send "$2" done ;;
bench-serve) bench_serve ;;
bench-bw) shift; bench_bw "$@" ;;
*) fail "usage: nfs.sh server | client ADDR TAG full|short|capture | bye ADDR | bench-serve | bench-bw ADDR rdma|tcp write|read MIB" ;;
esac
