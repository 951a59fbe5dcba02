# A command channel between the guests' scripts of a kernel-ULP scenario
# (nfs-guest.sh, iser-guest.sh source it as /overlay/ctl.sh). Runs under
# busybox sh. The client sends a command a connection to the server's TCP
# port 7010; the server answers with one line on a connection back to the
# client's port 7011 (link 0's addresses, over TCP: not the RDMA under test).

fail() { echo "FAIL: $*"; exit 1; }
say() { echo "$CTL_NAME: $*"; }

# deliver ADDR PORT TEXT: TEXT on a connection to ADDR's PORT, retried
# while nothing listens there (60 s).
deliver() {
	echo "$3" >/tmp/ctl.out
	i=0
	until nc "$1" "$2" </tmp/ctl.out 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 300 ] || fail "nothing takes '$3' at $1 port $2"
		sleep 0.2
	done
}

# send ADDR COMMAND: to the server at ADDR.
send() { deliver "$1" 7010 "$2"; }

# ask ADDR COMMAND: send, then print the server's reply.
ask() {
	nc -l -p 7011 >/tmp/reply &
	l=$!
	send "$1" "$2"
	wait $l
	cat /tmp/reply
}

# next_command: the server waits for the next command and prints it.
next_command() { nc -l -p 7010 || fail "control connection"; }

# reply TEXT: the server's answer to the client of link 0.
reply() { deliver "$CLIENT_IP" 7011 "$1"; }
