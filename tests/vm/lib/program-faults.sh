# shellcheck shell=bash
# The kernel's reports of user-space programs' faults in a guest's log, and
# which of them tests/vm/run leaves to a scenario's judge (--judged-faults).
# Sourced by tests/vm/run and by harness-tests/program-faults-test.

# "traps: prog[pid] general protection fault ..." (which BAD in tests/vm/run
# would match too) and "prog[pid]: segfault at ...".
USER_FAULT='traps: [^ ]+\[[0-9]+\] |[^ ]+\[[0-9]+\]: segfault at '

# judged_fault_re ERE: a fault line whose faulting object ERE names whole.
# The object follows " in ", then its mapping in brackets: 6.1 prints
# "[start+size]", later kernels "[offset,start+size]".
judged_fault_re() { printf ' in (%s)\\[[0-9a-f]+[,+]' "$1"; }

# program_faults LOG [ERE]: LOG's fault lines, each with the line before it,
# leaving out those in objects ERE names (none left out without ERE).
program_faults() {
	{ tr -d '\r' <"$1"; } 2>/dev/null |
		if [ -n "${2:-}" ]; then grep -avE "$(judged_fault_re "$2")"; else cat; fi |
		grep -aE -B1 "$USER_FAULT" || true
}

# judged_faults_count LOG ERE: how many of LOG's fault lines ERE leaves out.
judged_faults_count() {
	{ tr -d '\r' <"$1"; } 2>/dev/null |
		grep -acE "($USER_FAULT).*$(judged_fault_re "$2")" || true
}
