# shellcheck shell=sh
# Runs in both guests of scenario siwx-fabtests (busybox sh):
#   sh /overlay/fabtests-guest.sh server|client KIND LIMIT NAME [VAR=VALUE...] PROGRAM ARGS...
# unpacks the overlay's libfabric.tar and fabtests.tar (lib/fabtests-overlay),
# and siwx-libfabric.tar when the overlay has it, over / once, then runs one
# fabtests program, as runfabtests.sh would, as the server (PROGRAM ARGS
# -s $SERVER_IP_<KIND>) or the client (PROGRAM ARGS -s $CLIENT_IP_<KIND>
# $SERVER_IP_<KIND>) over the link of
# KIND's device (siwx, rxe, siw), at most LIMIT s, between marker lines
# that the host's judge reads:
#   === fabtests begin ROLE KIND NAME
#   === fabtests end ROLE KIND NAME rc=N
# The program's status never fails the step (the judge decides); only a
# guest that cannot run it does. A server whose client has ended (the
# client tells it on port 7012) gets 10 s more: a client that failed
# early would leave it waiting out LIMIT.
role=$1 kind=$2 limit=$3 name=$4
shift 4
eval "srv=\$SERVER_IP_$kind cli=\$CLIENT_IP_$kind dev=\$DEV_$kind"
[ -n "$srv" ] && [ -n "$cli" ] && [ -n "$dev" ] || { echo "FAIL: no link of kind $kind"; exit 1; }
# Only KIND's device: libfabric's verbs provider otherwise offers every
# device of the guest, and an RDM test of siwx or siw would run through
# ofi_rxd over rxe's datagram QPs (iWARP has none) when rxe is there too.
# A prefix, not a pattern: siw0 does not name siwx0.
export FI_VERBS_DEVICE_NAME="$dev"
if [ ! -d /usr/local/fabtests/bin ]; then
	tar -xf /overlay/libfabric.tar -C / || { echo "FAIL: unpacking libfabric"; exit 1; }
	tar -xf /overlay/fabtests.tar -C / || { echo "FAIL: unpacking fabtests"; exit 1; }
	# FABTESTS_LIBFABRIC=patched: the package siwx-libfabric, as dpkg
	# would install it (its verbs provider before the built-in one)
	if [ -f /overlay/siwx-libfabric.tar ]; then
		tar -xf /overlay/siwx-libfabric.tar -C / || { echo "FAIL: installing siwx-libfabric"; exit 1; }
	fi
fi
export PATH="/usr/local/fabtests/bin:/usr/bin:$PATH"
# The kernel's reports of programs that crashed: the judge reads where
# (fabtests 2.1, unlike 1.17, prints no backtrace of its own)
segfaults() { dmesg | grep -F ' segfault at '; }
nsegv=$(segfaults | wc -l)
listeners() { awk '$4 == "0A" { print $2 }' /proc/net/tcp /proc/net/tcp6 2>/dev/null | sort; }

echo "=== fabtests begin $role $kind $name"
case $role in
server)
	set -- "$@" -s "$srv"
	echo "$*"
	listeners >/tmp/ft.before
	timeout "$limit" env "$@" >/tmp/ft.out 2>&1 &
	pid=$!
	# Only once the program listens (the harness lets the client go
	# then) does the end's listener come up, else the harness could
	# take it for the program's.
	while kill -0 $pid 2>/dev/null && listeners | cmp -s - /tmp/ft.before; do
		sleep 0.2
	done
	rm -f /tmp/ft.peer
	nc -l -p 7012 >/tmp/ft.peer 2>/dev/null &
	npid=$!
	left=-1
	while kill -0 $pid 2>/dev/null; do
		if [ $left -lt 0 ] && [ -s /tmp/ft.peer ]; then
			left=50
		elif [ $left -eq 0 ]; then
			kill $pid 2>/dev/null
			echo "(the client ended $(cat /tmp/ft.peer) 10 s ago: stopped)"
			break
		elif [ $left -gt 0 ]; then
			left=$((left - 1))
		fi
		sleep 0.2
	done
	wait $pid
	rc=$?
	# The client's word, so that its next step does not find the
	# listener gone (its end comes about when ours does)
	i=0
	while kill -0 $npid 2>/dev/null && [ ! -s /tmp/ft.peer ] && [ $i -lt 50 ]; do
		i=$((i + 1))
		sleep 0.2
	done
	kill $npid 2>/dev/null
	cat /tmp/ft.out
	;;
client)
	set -- "$@" -s "$cli" "$srv"
	echo "$*"
	timeout "$limit" env "$@" 2>&1
	rc=$?
	i=0
	until echo "rc=$rc" | nc "$srv" 7012 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 10 ] || break
		sleep 0.5
	done
	;;
*)
	echo "FAIL: role server or client, not $role"
	exit 1
	;;
esac
segfaults | tail -n +$((nsegv + 1)) | sed 's/^/kernel: /'
echo "=== fabtests end $role $kind $name rc=$rc"
exit 0
