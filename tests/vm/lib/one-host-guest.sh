# Sourced in one guest by scenario siwx-one-host, which runs server and
# client of every step on that machine:
#   full ADDR...   for each ADDR (IPv4 or IPv6, an address of this host or
#                  a loopback address): rping -V, perftest over rdma_cm
#                  (write, read, send, both atomics), the atomic hammer and
#                  a CmpSwap lock from several QPs, a write-with-immediate
#                  stream, rstream and riostream with the patched librdmacm
#                  (/overlay/rsockets), NVMe over Fabrics with target and
#                  host here (perftest not over IPv6 on Debian 12)
#   short ADDR...  rping -V, the atomic hammer and the write-with-immediate
#                  stream
#   lo_unserved    with no siwx device on lo: a listen on 127.0.0.1
#                  refused with its reason in the log, no connection
#   lo_address     lo has a hardware address where rdma_cm needs one
#   objects_back   siwx's own object counts back at 0
# Every program checks its data; no Terminate may reach either end (both
# ends are siwx, and siwx logs each Terminate it receives).
fail() {
	echo "FAIL: $*"
	exit 1
}
ok() { echo "ok: $*"; }

# wait_listen PORT: a TCP listener on PORT appears (siwx's listening
# socket; /proc/net/tcp6 too for [::] and ::1).
wait_listen() {
	hex=$(printf '%04X' "$1")
	i=0
	until awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { f = 1 } END { exit !f }' \
		/proc/net/tcp /proc/net/tcp6; do
		i=$((i + 1))
		[ $i -gt 300 ] && return 1
		sleep 0.1
	done
}

# pair NAME PORT SERVER CLIENT: the server in the background, the client
# once the server listens; both must exit 0 within 180 s.
pair() {
	name=$1 port=$2
	timeout 180 sh -c "$3" >"/tmp/$name.server.log" 2>&1 &
	spid=$!
	if ! wait_listen "$port"; then
		kill $spid 2>/dev/null
		cat "/tmp/$name.server.log"
		fail "$name: the server does not listen on port $port"
	fi
	# rdma_listen has every device listen: let the last one's socket come
	sleep 0.2
	timeout 180 sh -c "$4" >"/tmp/$name.client.log" 2>&1
	crc=$?
	[ $crc = 0 ] || sleep 2
	[ $crc = 0 ] || kill $spid 2>/dev/null
	wait $spid
	src=$?
	if [ $crc != 0 ] || [ $src != 0 ]; then
		echo "--- server (rc $src):"
		tail -n 20 "/tmp/$name.server.log"
		echo "--- client (rc $crc):"
		tail -n 20 "/tmp/$name.client.log"
		fail "$name"
	fi
	ok "$name"
}

terminates() { dmesg | grep -c 'Terminate received'; }

# perftest -R: no -d; rdma_cm picks each side's device from the address.
# Over IPv6 through perftest-ipv6 (tests/vm/guest), which fails where
# perftest has no rdma_cm over IPv6: see full().
perf() {
	case $1 in
	*:*) pair "$2 $1" 18515 "perftest-ipv6 $2 -F $3" "perftest-ipv6 $2 -F $3 $1" ;;
	*) pair "$2 $1" 18515 "$2 -R -F $3" "$2 -R -F $3 $1" ;;
	esac
}

# every_step ADDR STEPS: STEPS (a list of step functions) over ADDR, and no
# Terminate on either side meanwhile.
every_step() {
	a=$1
	before=$(terminates)
	for step in $2; do
		$step "$a"
	done
	after=$(terminates)
	[ "$after" = "$before" ] || {
		dmesg | grep 'Terminate received'
		fail "$((after - before)) Terminates over $a"
	}
	ok "every step over $a, no Terminate"
}

# -6 for a server that serves ADDR, an IPv6 address
six() {
	case $1 in *:*) echo -6 ;; esac
}

rping_step() {
	pair "rping $1" 7174 "rping-judged -s -a $1 -C 20 -S 4096 -V" \
		"rping-judged -c -a $1 -C 20 -S 4096 -V"
}

perftest_step() {
	perf "$1" ib_write_bw '-s 65536 -n 200'
	perf "$1" ib_read_bw '-s 65536 -n 200'
	perf "$1" ib_send_bw '-s 4096 -n 200'
	perf "$1" ib_atomic_bw '-A FETCH_AND_ADD -n 200'
	perf "$1" ib_atomic_bw '-A CMP_AND_SWAP -n 200'
}

hammer_step() {
	h=/overlay/siwx-atomic-hammer
	pair "atomic hammer $1" 18516 "$h -s $(six "$1")" "$h -c $1 -q 4 -k 300"
}

cas_lock_step() {
	h=/overlay/siwx-atomic-hammer
	pair "CmpSwap lock $1" 18516 "$h -s $(six "$1")" "$h -c $1 -q 4 --cas-lock -M 25"
}

imm_step() {
	s=/overlay/siwx-imm-stream
	pair "write-with-imm $1" 18520 "$s -s $(six "$1") -p 18520 -t 120" \
		"$s -c $1 -p 18520 -t 120 -n 1000 -w 16 -m 65536 -S 7"
}

rsockets_step() {
	P='LD_LIBRARY_PATH=/overlay/rsockets'
	pair "rstream $1" 7471 "$P rstream -b $1 -p 7471 -T b -T v -S 4096 -C 200" \
		"$P rstream -s $1 -p 7471 -T b -T v -S 4096 -C 200"
	pair "riostream $1" 7471 "$P riostream -b $1 -p 7471 -T b -T v -S 65536 -C 20" \
		"$P riostream -s $1 -p 7471 -T b -T v -S 65536 -C 20"
}

# The whole set. /overlay/no-perftest6 (the scenario writes it for Debian
# 12, whose perftest 4.5 has no rdma_cm over IPv6) leaves perftest out
# over IPv6 addresses.
full() {
	for a in "$@"; do
		p=perftest_step
		case $a in *:*) [ -f /overlay/no-perftest6 ] && p= ;; esac
		every_step "$a" "rping_step $p hammer_step cas_lock_step imm_step rsockets_step nvmeof"
	done
}

short() {
	for a in "$@"; do
		every_step "$a" "rping_step hammer_step imm_step"
	done
}

# lo_unserved: with no siwx device on lo, a listen on 127.0.0.1 fails at
# once and the log says what to add; no connection to it is made.
lo_unserved() {
	out=$(rping -s -a 127.0.0.1 -C 1 2>&1) && fail "rping listened on 127.0.0.1 with no device on lo"
	echo "$out" | grep -q 'rdma_listen: Cannot assign requested address' ||
		fail "listen on 127.0.0.1: $out"
	dmesg | grep -q "cannot listen on 127.0.0.1:7174: no siwx device on lo serves loopback addresses; add one" ||
		fail "listen on 127.0.0.1 refused without the reason"
	rping -c -a 127.0.0.1 -C 1 >/dev/null 2>&1 && fail "rping connected to 127.0.0.1 with no device on lo"
	ok "no device on lo: a listen on 127.0.0.1 refused with its reason, no connection"
}

# lo_address: where rdma_cm finds a device on lo by lo's hardware address
# (before Linux 6.6, kernel/siwx_compat.h), siwx gave lo one and said so;
# elsewhere lo keeps its all-zero address.
lo_address() {
	mac=$(cat /sys/class/net/lo/address)
	v=$(uname -r)
	maj=${v%%.*} min=${v#*.}
	min=${min%%.*}
	if [ "$maj" -gt 6 ] || { [ "$maj" -eq 6 ] && [ "$min" -ge 6 ]; }; then
		[ "$mac" = 00:00:00:00:00:00 ] || fail "siwx changed lo's address ($mac) on Linux $v"
		ok "Linux $v: lo keeps its address"
	else
		[ "$mac" != 00:00:00:00:00:00 ] || fail "lo has no hardware address on Linux $v"
		dmesg | grep -q "siwx: lo: gave lo the hardware address $mac: before Linux 6.6" ||
			fail "lo's new address $mac not in the log"
		ok "Linux $v: siwx gave lo the address $mac, and said why"
	fi
}

# nvmeof ADDR: nvmet-rdma's target and nvme-rdma's host, both here.
nvmeof() {
	a=$1 fam=ipv4 nqn=siwx-one-host
	case $a in *:*) fam=ipv6 ;; esac
	t=/sys/kernel/config/nvmet
	s=$t/subsystems/$nqn
	modprobe -a nvmet-rdma nvme-rdma || fail "nvme modules"
	grep -q ' /sys/kernel/config ' /proc/mounts ||
		mount -t configfs configfs /sys/kernel/config
	truncate -s 16M /tmp/ns.img
	mkdir $s $s/namespaces/1 $t/ports/1 || fail "nvmet configfs"
	echo 1 >$s/attr_allow_any_host
	echo /tmp/ns.img >$s/namespaces/1/device_path
	echo 1 >$s/namespaces/1/buffered_io
	echo 1 >$s/namespaces/1/enable
	echo rdma >$t/ports/1/addr_trtype
	echo $fam >$t/ports/1/addr_adrfam
	echo "$a" >$t/ports/1/addr_traddr
	echo 4420 >$t/ports/1/addr_trsvcid
	ln -s $s $t/ports/1/subsystems/$nqn || fail "nvmet port over $a"
	echo "transport=rdma,traddr=$a,trsvcid=4420,nqn=$nqn" >/dev/nvme-fabrics ||
		fail "nvme connect over $a"
	i=0
	while [ ! -b /dev/nvme0n1 ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "no /dev/nvme0n1"
		sleep 0.1
	done
	dd if=/dev/urandom of=/tmp/a bs=1M count=8 status=none
	dd if=/tmp/a of=/dev/nvme0n1 bs=1M oflag=direct status=none || fail "nvme write"
	dd if=/dev/nvme0n1 of=/tmp/b bs=1M count=8 iflag=direct status=none || fail "nvme read"
	cmp /tmp/a /tmp/b || fail "nvme data over $a"
	echo 1 >/sys/class/nvme/nvme0/delete_controller
	i=0
	while [ -e /sys/class/nvme/nvme0 ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "nvme0 not deleted"
		sleep 0.1
	done
	rm $t/ports/1/subsystems/$nqn
	rmdir $t/ports/1
	echo 0 >$s/namespaces/1/enable
	rmdir $s/namespaces/1 $s
	rmmod nvme_rdma nvmet_rdma
	rm -f /tmp/a /tmp/b /tmp/ns.img
	ok "NVMe over Fabrics over $a: 8 MiB written and read back"
}

objects_back() {
	objs=/sys/kernel/debug/siwx/objects
	[ -r $objs ] || mount -t debugfs debugfs /sys/kernel/debug
	i=0
	until [ "$(awk '{ s += $2 } END { print s }' $objs)" = 0 ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || {
			cat $objs
			fail "siwx objects left"
		}
		sleep 0.1
	done
	ok "siwx's connections, listeners, pinned pages and stage page budget back at 0"
}
