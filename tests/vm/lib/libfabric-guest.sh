# shellcheck shell=sh
# Runs in both guests of scenario siwx-libfabric-imm (busybox sh):
#   sh /overlay/libfabric-guest.sh server|client KIND stock|patched EXPECT
# unpacks the overlay's libfabric (Debian's) over / once; then, as dpkg
# would, installs the package siwx-libfabric (patched) or removes it
# (stock); then runs siwx-fi-cqdata as ROLE with EXPECT (agreed, refused,
# none) over the link of KIND ("-": the first link). The package's
# provider library is what libfabric then loads in place of its built-in
# verbs provider (docs/libfabric.md). EXPECT rdm instead runs fi_pingpong
# on an RDM endpoint (verbs;ofi_rxm) on KIND's device, data checked, which
# must pass; libfabric's own ofi_rxm crash at teardown after every transfer
# passed (rxm-teardown-crash) counts as passed, as fabtests' judge counts it.
role=$1 kind=$2 lib=$3 expect=$4
if [ "$kind" = - ]; then
	srv=$SERVER_IP
else
	eval "srv=\$SERVER_IP_$kind"
fi
[ -n "$srv" ] || { echo "FAIL: no link of kind $kind"; exit 1; }
if [ ! -e /etc/siwx-vm-libfabric ]; then
	tar -xf /overlay/libfabric.tar -C / || { echo "FAIL: unpacking libfabric1"; exit 1; }
	: >/etc/siwx-vm-libfabric
fi
case $lib in
patched)
	tar -xf /overlay/siwx-libfabric.tar -C / || { echo "FAIL: installing siwx-libfabric"; exit 1; }
	;;
stock)
	while read -r f; do rm -f "$f"; done </overlay/siwx-libfabric.files
	;;
*) echo "FAIL: libfabric '$lib' is neither stock nor patched"; exit 1 ;;
esac
prov=$(grep '/libverbs-fi\.so$' /overlay/siwx-libfabric.files)
if [ -e "$prov" ]; then have=patched; else have=stock; fi
[ "$have" = "$lib" ] || { echo "FAIL: wanted the $lib verbs provider, $prov says $have"; exit 1; }
echo "=== libfabric $lib (siwx-libfabric $([ "$lib" = patched ] && echo installed || echo removed)), $role, expect $expect, server $srv"
case $expect in
rdm)
	set -- -p 'verbs;ofi_rxm' -e rdm -d "${kind}0" -I 20 -S 4096 -c
	[ "$role" = client ] && set -- "$@" "$srv"
	echo "fi_pingpong $*"
	st=0
	timeout 120 fi_pingpong "$@" >/tmp/fi_pingpong.out 2>&1 || st=$?
	cat /tmp/fi_pingpong.out
	if [ $st -ne 0 ]; then
		# libfabric's own ofi_rxm crash at teardown, after every transfer
		if place=$(sh /overlay/rxm-teardown-crash /tmp/fi_pingpong.out /overlay/rxm-teardown-places); then
			echo "fi_pingpong: RDM endpoint, $role: passed, then libfabric's ofi_rxm teardown crash at $place (ofiwg/libfabric#11828, docs/libfabric.md)"
			exit 0
		fi
		echo "FAIL: fi_pingpong on an RDM endpoint, $role, libfabric $lib: status $st"
		exit 1
	fi
	echo "fi_pingpong: RDM endpoint, $role: passed"
	exit 0
	;;
esac
case $role in
server) exec /overlay/siwx-fi-cqdata -s -p 7471 -t 120 -e "$expect" ;;
client) exec /overlay/siwx-fi-cqdata -c "$srv" -p 7471 -t 120 -e "$expect" ;;
*) echo "FAIL: role '$role'"; exit 1 ;;
esac
