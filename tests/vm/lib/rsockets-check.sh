# Sourced by the rsockets scenarios (after common.sh):
# rsockets_check PCAP PORT WANT [STOCK]: the FPDUs of the connections on
# PORT (or FIRST-LAST, ports FIRST to LAST) in the capture; WANT is imm (Immediate Data, opcode 0x8/0x9, and
# no 4-byte Send) or send (no Immediate Data, 4-byte Sends: rsockets'
# Write + Send). Every CRC good, and never a Terminate, but for one from
# the stock rsockets side or sides named by STOCK (c2s: the client, s2c:
# the server, "c2s s2c": both): stock rs_free() deregisters its MRs before it destroys the QP,
# and a Send of the peer that arrives in between (its disconnect message,
# crossing ours) finds a receive whose MR is gone; siwx answers with a
# Terminate of layer LLP, error type MPA, code 0x05 (local catastrophic,
# kernel/siwx_rx_rqe.c), payload 2005... That one is counted and allowed;
# any other Terminate, and any from a side with our patches, fails.
rsockets_check() {
	local pcap=$1 port=$2 want=$3 stock=${4:-} fpdus imm sends4 terms teardown bad
	fpdus=$("$VM_SRC/mpa-fpdus" "$pcap" "$port") || { echo "port $port: capture not parsed" >&2; return 1; }
	imm=$(awk '$2 == "0x8" || $2 == "0x9"' <<<"$fpdus" | wc -l)
	sends4=$(awk '($2 == "0x3" || $2 == "0x5") && length($(NF-1)) == 8' <<<"$fpdus" | wc -l)
	terms=$(awk '$2 == "0x7"' <<<"$fpdus" | wc -l)
	teardown=$(awk -v d=" $stock " 'index(d, " " $1 " ") && $2 == "0x7" && $(NF-1) ~ /^2005/' <<<"$fpdus" | wc -l)
	bad=$(awk '$NF != "good"' <<<"$fpdus" | wc -l)
	echo "port $port: $(wc -l <<<"$fpdus") FPDUs, $imm Immediate Data, $sends4 4-octet Sends, $terms Terminates${stock:+ ($teardown of them from the stock side, $stock)}, $bad bad CRCs (want: $want)"
	[ "$terms" = "$teardown" ] && [ "$bad" = 0 ] || return 1
	case $want in
	imm) [ "$imm" -gt 0 ] && [ "$sends4" = 0 ] ;;
	send) [ "$imm" = 0 ] && [ "$sends4" -gt 0 ] ;;
	esac
}
