# Sourced by the rsockets scenarios (after common.sh):
# rsockets_check PCAP PORT WANT: the FPDUs of the connections on PORT in
# the capture; WANT is imm (Immediate Data, opcode 0x8/0x9, and no 4-byte
# Send) or send (no Immediate Data, 4-byte Sends: rsockets' Write + Send).
# Never a Terminate; every CRC good.
rsockets_check() {
	local pcap=$1 port=$2 want=$3 fpdus imm sends4 terms bad
	fpdus=$("$VM_SRC/mpa-fpdus" "$pcap" "$port") || { echo "port $port: capture not parsed" >&2; return 1; }
	imm=$(awk '$2 == "0x8" || $2 == "0x9"' <<<"$fpdus" | wc -l)
	sends4=$(awk '($2 == "0x3" || $2 == "0x5") && length($(NF-1)) == 8' <<<"$fpdus" | wc -l)
	terms=$(awk '$2 == "0x7"' <<<"$fpdus" | wc -l)
	bad=$(awk '$NF != "good"' <<<"$fpdus" | wc -l)
	echo "port $port: $(wc -l <<<"$fpdus") FPDUs, $imm Immediate Data, $sends4 4-octet Sends, $terms Terminates, $bad bad CRCs (want: $want)"
	[ "$terms" = 0 ] && [ "$bad" = 0 ] || return 1
	case $want in
	imm) [ "$imm" -gt 0 ] && [ "$sends4" = 0 ] ;;
	send) [ "$imm" = 0 ] && [ "$sends4" -gt 0 ] ;;
	esac
}
