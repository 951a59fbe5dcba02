# shellcheck shell=sh
# Runs in both guests of scenario siwx-fabtests (busybox sh):
#   sh /overlay/fabtests-guest.sh server|client KIND LIMIT NAME [VAR=VALUE...] PROGRAM ARGS...
# unpacks the overlay's fabtests.tar (lib/fabtests-overlay) over / once,
# then runs one fabtests program, as fabtests' runfabtests.sh would,
# as the server (PROGRAM ARGS -s $SERVER_IP_<KIND>) or the client
# (PROGRAM ARGS -s $CLIENT_IP_<KIND> $SERVER_IP_<KIND>) over the link of
# KIND's device (siwx, rxe, siw), at most LIMIT s, between marker lines
# that the host's judge reads:
#   === fabtests begin ROLE KIND NAME
#   === fabtests end ROLE KIND NAME rc=N
# The program's status never fails the step (the judge decides); only a
# guest that cannot run it does.
role=$1 kind=$2 limit=$3 name=$4
shift 4
eval "srv=\$SERVER_IP_$kind cli=\$CLIENT_IP_$kind"
[ -n "$srv" ] && [ -n "$cli" ] || { echo "FAIL: no link of kind $kind"; exit 1; }
if [ ! -d /usr/local/fabtests/bin ]; then
	tar -xf /overlay/fabtests.tar -C / || { echo "FAIL: unpacking fabtests"; exit 1; }
fi
export PATH="/usr/local/fabtests/bin:/usr/bin:$PATH"
case $role in
server) set -- "$@" -s "$srv" ;;
client) set -- "$@" -s "$cli" "$srv" ;;
*) echo "FAIL: role server or client, not $role"; exit 1 ;;
esac
echo "=== fabtests begin $role $kind $name"
echo "$*"
timeout "$limit" env "$@" 2>&1
echo "=== fabtests end $role $kind $name rc=$?"
exit 0
