"""Constants every part of the bench shares (stacks, operations, sizes,
paths) and the small helpers that go with them (messages, size labels,
number formatting). Imports nothing of the package but rstream's table."""

import os
import sys

from . import rstream

# tools/bench (bstep) and the source tree's top.
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP = os.path.dirname(os.path.dirname(HERE))
STACKS = ("rxe", "siw", "siwx", "siwx-nocrc", "siwx-rsockets")
# A stack that is another's device configured differently: siwx without
# MPA CRCs, which upstream siw does not ask for by default either (siwx
# does), for a like-for-like comparison. It runs the bandwidth and
# latency tests on siwx's link; the module parameter is set on both
# guests before each step of either.
LINK = {"siwx-nocrc": "siwx", "siwx-rsockets": "siwx", "siwx-crc-table": "siwx"}
MPA_CRC = {"siwx": "Y", "siwx-nocrc": "N", "siwx-rsockets": "Y"}
SIWX_MPA_CRC = "/sys/module/siwx/parameters/mpa_crc"
OPS = ("write", "read", "send")
KIB = 1024
MIB = 1024 * 1024
# perftest reports MB/sec in units of 2^20 bytes (its --help: "MiB/sec").
PERFTEST_MB = MIB
# What a stack cannot do at all (tests/vm and facts: upstream siw has no
# atomics and no immediate data); such steps are not run but listed.
UNSUPPORTED = {"siw": {"atomic", "imm"}}
# What a variant stack measures (the rest it shares with its original).
# siwx-rsockets: rstream on siwx with our patched librdmacm (rstream.py).
# Kinds measured over TCP, once per boot on the first stack's link (a
# shared boot lists them under every stack): iperf3, and NFS over TCP.
TCP_KINDS = ("tcp", "nfs_tcp")
VARIANT_TESTS = {"siwx-nocrc": {"tcp", "nfs_tcp_write", "nfs_tcp_read", "write_bw_ev"} |
                 {f"{op}_{k}" for op in OPS for k in ("bw", "lat")},
                 "siwx-rsockets": {t[0] for t in rstream.TESTS}}
# Whose ratios to what: siwx to every other stack, siwx without CRCs
# (when measured) to siw, which runs without them too.
RATIOS = (("siwx", ("siw", "rxe")), ("siwx-nocrc", ("siw",)), ("siwx-rsockets", ("siwx",)))
MACHINE_NOTE = ("2 cores, TCG, no KVM: absolute numbers mean little, "
                "ratios are the point")
SHARED = "boot"   # the log directory name of a boot with every stack
# Figures that a boot's measurement carries besides its numbers.
NOT_FIGURES = ("stack", "test", "kind", "bytes", "step", "status", "note", "rounds", "shared",
               "boot", "mpa_crc", "repeats")


def link_of(stack):
    """The kind of link and RDMA device (tests/vm/run) @stack runs on."""
    return LINK.get(stack, stack)


def ratio_subjects(stacks):
    """The stacks RATIOS compares that this run has (siwx always)."""
    return [(subj, refs) for subj, refs in RATIOS if subj == "siwx" or subj in stacks]


def die(msg):
    print(f"bench: error: {msg}", file=sys.stderr)
    sys.exit(2)


def say(msg):
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def size_label(b):
    if b >= MIB and b % MIB == 0:
        return f"{b // MIB}M"
    if b >= KIB and b % KIB == 0:
        return f"{b // KIB}K"
    return str(b)


def parse_size(s):
    s = s.strip().upper().rstrip("B")
    mult = 1
    if s.endswith("K"):
        mult, s = KIB, s[:-1]
    elif s.endswith("M"):
        mult, s = MIB, s[:-1]
    return int(s) * mult


def fmt_count(v):
    """An instruction count: whole, with thousands' commas, from 1000 on,
    else three digits; "-" for none."""
    if v is None:
        return "-"
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"


def fmt(v, nd=3):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{nd}g}"
    return str(v)
