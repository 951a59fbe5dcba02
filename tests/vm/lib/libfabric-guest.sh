# shellcheck shell=sh
# Runs in both guests of scenario siwx-libfabric-imm (busybox sh):
#   sh /overlay/libfabric-guest.sh server|client KIND stock|patched EXPECT
# unpacks the overlay's libfabric1 (with fabtests, lib/fabtests-overlay)
# and our patched libfabric (/opt/siwx-libfabric, lib/libfabric-overlay)
# over / once, then runs siwx-fi-cqdata as ROLE with EXPECT (agreed,
# refused, none) over the link of KIND ("-": the first link), with
# Debian's libfabric (stock) or ours (patched).
role=$1 kind=$2 lib=$3 expect=$4
if [ "$kind" = - ]; then
	srv=$SERVER_IP
else
	eval "srv=\$SERVER_IP_$kind"
fi
[ -n "$srv" ] || { echo "FAIL: no link of kind $kind"; exit 1; }
if [ ! -d /usr/local/fabtests/bin ]; then
	tar -xf /overlay/fabtests.tar -C / || { echo "FAIL: unpacking libfabric1"; exit 1; }
fi
if [ ! -d /opt/siwx-libfabric ]; then
	tar -xf /overlay/patched.tar -C / || { echo "FAIL: unpacking the patched libfabric"; exit 1; }
fi
case $lib in
patched) export LD_LIBRARY_PATH=/opt/siwx-libfabric/lib ;;
stock) ;;
*) echo "FAIL: libfabric '$lib' is neither stock nor patched"; exit 1 ;;
esac
echo "=== libfabric $lib, $role, expect $expect, server $srv"
case $role in
server) exec /overlay/siwx-fi-cqdata -s -p 7471 -t 120 -e "$expect" ;;
client) exec /overlay/siwx-fi-cqdata -c "$srv" -p 7471 -t 120 -e "$expect" ;;
*) echo "FAIL: role '$role'"; exit 1 ;;
esac
