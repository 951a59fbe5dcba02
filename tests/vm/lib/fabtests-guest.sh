# shellcheck shell=sh
# Runs in both guests of scenario siwx-fabtests (busybox sh):
#   sh /overlay/fabtests-guest.sh server|client LIMIT NAME [VAR=VALUE...] PROGRAM ARGS...
# unpacks the overlay's fabtests.tar (lib/fabtests-overlay) over / once,
# then runs one fabtests program, as fabtests' runfabtests.sh would,
# as the server (PROGRAM ARGS -s $SERVER_IP) or the client (PROGRAM ARGS
# -s $CLIENT_IP $SERVER_IP), at most LIMIT s, between marker lines that
# the host's judge reads:
#   === fabtests begin ROLE NAME
#   === fabtests end ROLE NAME rc=N
# The program's status never fails the step (the judge decides); only a
# guest that cannot run it does.
role=$1 limit=$2 name=$3
shift 3
if [ ! -d /usr/local/fabtests/bin ]; then
	tar -xf /overlay/fabtests.tar -C / || { echo "FAIL: unpacking fabtests"; exit 1; }
fi
export PATH="/usr/local/fabtests/bin:/usr/bin:$PATH"
case $role in
server) set -- "$@" -s "$SERVER_IP" ;;
client) set -- "$@" -s "$CLIENT_IP" "$SERVER_IP" ;;
*) echo "FAIL: role server or client, not $role"; exit 1 ;;
esac
echo "=== fabtests begin $role $name"
echo "$*"
timeout "$limit" env "$@" 2>&1
echo "=== fabtests end $role $name rc=$?"
exit 0
