"""The cost instrument's measurements (tools/bench/bench --cost): what each
one runs, how many iterations, and the steps of a boot. Each measurement
runs three times in a boot: a short warm-up (the first run of a program
in a boot pays for loading it), then N1 and N2 iterations; the counts of
N2 less those of N1, over the units that N2 moved more, are the cost of
one unit: set-up, connection and teardown cancel out
(cost_parse.per_unit)."""

from collections import namedtuple

from . import nfs
from .common import MIB, UNSUPPORTED, link_of

# The stacks the counts compare. siwx's variants are module parameters
# set on both guests before each step: "siwx" is how a CPU with SSE4.2
# runs it (MPA CRCs by the kernel's crc32c(), crc32c_impl=0), which TCG's
# bit-by-bit CRC32 instruction would otherwise make the module avoid;
# siwx-crc-table is what the module picks under TCG (its table code).
STACKS = ("siwx", "siwx-nocrc", "siwx-crc-table", "siw", "rxe")
SIWX_PARAMS = {"siwx": ("Y", 0), "siwx-nocrc": ("N", 0), "siwx-crc-table": ("Y", 1)}
TCP = "tcp"   # measured once per boot, on the first stack's link
UNITS = ("octet", "message", "round trip")

# name: the figure's name; unit: what one unit is; group: which stacks
# run it (rdma: every RDMA stack; rfc7306: not siw; nfs: siwx's and siw;
# tcp: TCP only);
# server, client: commands ({n}: iterations; $DEV, $SERVER_IP as
# tests/vm/run sets them); ns: (warm-up, N1, N2); size: octets per
# iteration (units of an octet measurement); sender: the role that sends
# the payload (None: both, in turn); main: the figure it is judged by,
# "total" (kernel and user) where both ends sleep on events, "kernel"
# where a program busy-polls, whose user instructions grow with time.
Meas = namedtuple("Meas", "name unit group server client ns size sender main",
                  defaults=("total",))

IMM = "/overlay/siwx-imm-bench"
TCPB = "/overlay/siwx-tcp-bench"
PT = "-R -d $DEV -F"   # perftest: rdma_cm, the step's device, no CPU-frequency check


def _imm(name, unit, group, mode, op, size, ns, sender, extra=""):
    return Meas(name, unit, group, f"{IMM} -s",
                f"{IMM} -c $SERVER_IP -m {mode} -o {op} -b {size} -n {{n}}{extra}",
                ns, size, sender, "total" if " -e" in extra else "kernel")


def _pt_n(name, unit, group, prog, args, ns, size, sender, main="kernel"):
    """A perftest step whose iteration count is {n}."""
    args = f"{PT} {args} -n {{n}}"
    return Meas(name, unit, group, f"{prog} {args}", f"{prog} {args} $SERVER_IP", ns, size,
                sender, main)


def _nfs(name, group, proto, op):
    return Meas(name, "octet", group, f"sh {nfs.GUEST} bench-serve",
                f"sh {nfs.GUEST} bench-bw $SERVER_IP {proto} {op} {{mib}}", NFS_MIB, MIB,
                "client" if op == "write" else "server")


NFS_MIB = (4, 16, 48)
# 1 MiB transfers: 32 MiB between N1 and N2. perftest in event mode
# sizes its queues and CQ moderation by -n when that is small, and then
# hangs on iWARP (docs/performance.md, perftest's event mode): upstream
# siw's Reads did at -n 5, so the warm-up is N1's size.
BIG = (16, 16, 48)
SMALL = (200, 2000, 6000)   # 8-octet messages and round trips
# perftest's polling steps. (ib_send_bw -e stalls on iWARP at no fixed
# count: on siwx after 2,092 of 3,000 and 1,238 of 1,500 messages,
# 2026-11-29; docs/performance.md, perftest's event mode. Sends poll.)
FEW = (200, 1000, 3000)

MEASUREMENTS = (
    # Per payload octet: 1 MiB transfers. Writes with both ends asleep on
    # completion events (siwx-imm-bench -m bw -e), as iperf3 sleeps in
    # send(); Reads and Sends by perftest, polling (its event mode hangs
    # on iWARP when -n is below its queue depths, as here), so kernel
    # instructions only.
    _imm("write_1M", "octet", "rdma", "bw", "write", MIB, BIG, "client", " -w 16 -e"),
    _pt_n("read_1M", "octet", "rdma", "ib_read_bw", f"-s {MIB}", BIG, MIB, "server"),
    _pt_n("send_1M", "octet", "rdma", "ib_send_bw", f"-s {MIB}", BIG, MIB, "client"),
    Meas("tcp_1M", "octet", "tcp", "iperf3 -s -1",
         f"iperf3 -c $SERVER_IP -l {MIB} -n {{bytes}}", BIG, MIB, "client"),
    # Per 8-octet message, a window of 16, asleep on events.
    _imm("write_send_8", "message", "rdma", "rate", "write-send", 8, SMALL, "client",
         " -w 16 -e"),
    _imm("imm_8", "message", "rfc7306", "rate", "imm", 8, SMALL, "client", " -w 16 -e"),
    _pt_n("write_8", "message", "rdma", "ib_write_bw", "-s 8", FEW, 8, "client"),
    _pt_n("send_8", "message", "rdma", "ib_send_bw", "-s 8", FEW, 8, "client"),
    _pt_n("atomic_fa", "message", "rfc7306", "ib_atomic_bw", "-A FETCH_AND_ADD", FEW, 8,
          "client"),
    _pt_n("atomic_cs", "message", "rfc7306", "ib_atomic_bw", "-A CMP_AND_SWAP", FEW, 8,
          "client"),
    Meas("tcp_8", "message", "tcp", f"{TCPB} -s",
         f"{TCPB} -c $SERVER_IP -m rate -b 8 -w 16 -n {{n}}", SMALL, 8, "client"),
    # Per 8-octet round trip; perftest busy-polls, so its user
    # instructions grow with time: the kernel's are the figure.
    _pt_n("write_rt", "round trip", "rdma", "ib_write_lat", "-s 8", SMALL, 8, None),
    _pt_n("send_rt", "round trip", "rdma", "ib_send_lat", "-s 8", SMALL, 8, None),
    _pt_n("read_rt", "round trip", "rdma", "ib_read_lat", "-s 8", SMALL, 8, None),
    _pt_n("atomic_rt", "round trip", "rfc7306", "ib_atomic_lat", "-A FETCH_AND_ADD", SMALL, 8,
          None),
    _imm("imm_rt", "round trip", "rfc7306", "lat", "imm", 8, SMALL, None),
    _imm("write_send_rt", "round trip", "rdma", "lat", "write-send", 8, SMALL, None),
    Meas("tcp_rt", "round trip", "tcp", f"{TCPB} -s",
         f"{TCPB} -c $SERVER_IP -m lat -b 8 -n {{n}}", SMALL, 8, None, "kernel"),
    # NFS v4.2 per octet (siwxbench/nfs.py: a buffered write ended by
    # fsync through a fresh mount, then its read back with an empty page
    # cache, which removes the file: each read follows its write, FOLLOWS).
    _nfs("nfs_write", "nfs", "rdma", "write"),
    _nfs("nfs_read", "nfs", "rdma", "read"),
    _nfs("nfs_tcp_write", "tcp", "tcp", "write"),
    _nfs("nfs_tcp_read", "tcp", "tcp", "read"),
)
BY_NAME = {m.name: m for m in MEASUREMENTS}
# Measurements that run right after another's step of the same size.
FOLLOWS = {"nfs_read": "nfs_write", "nfs_tcp_read": "nfs_tcp_write"}
NFS_STACKS = nfs.STACKS + ("siwx-nocrc", "siwx-crc-table")


def units(m, n):
    """The units that @n iterations (NFS: MiB) of @m move."""
    return n * m.size if m.unit == "octet" else n


# siwx's CRC variants matter per octet; without CRCs it is also the
# like-for-like peer of siw (which asks for none) per round trip.
VARIANT_UNITS = {"siwx-crc-table": ("octet",), "siwx-nocrc": ("octet", "round trip")}


def runs_on(m, stack):
    if m.group == "tcp":
        return stack == TCP
    if stack == TCP or m.unit not in VARIANT_UNITS.get(stack, UNITS):
        return False
    if m.group == "nfs":
        return stack in NFS_STACKS
    # RFC 7306: what upstream siw cannot do
    return m.group == "rdma" or "imm" not in UNSUPPORTED.get(stack, ())


def _prefix(stack, link, mode):
    # A measurement is three steps: a stack is given up (bstep) after two
    # measurements' worth of failures in a row, not after one's.
    pre = (f"export BENCH_COST={mode} BENCH_MAXFAIL=6 BENCH_STACK={stack} DEV=$DEV_{link} "
           f"SERVER_IP=$SERVER_IP_{link} CLIENT_IP=$CLIENT_IP_{link}; ")
    if stack in SIWX_PARAMS:
        crc, impl = SIWX_PARAMS[stack]
        pre += (f"echo {crc} > /sys/module/siwx/parameters/mpa_crc; "
                f"echo {impl} > /sys/module/siwx/parameters/crc32c_impl; ")
    return pre


def steps(stacks, measurements, mode, timeout):
    """The boot's steps: (id, server command, client command, meta) for
    every measurement on every stack in @stacks that runs it (TCP's on
    the first stack's link), each as warm-up, N1, N2, the stacks taking
    turns measurement by measurement."""
    out = []
    names = [m.name for m in measurements]
    for m in measurements:
        if FOLLOWS.get(m.name) in names:
            continue   # runs after its leader's steps
        followers = [BY_NAME[f] for f, lead in FOLLOWS.items() if lead == m.name and f in names]
        for stack in ([TCP] if m.group == "tcp" else stacks):
            if not runs_on(m, stack):
                continue
            link = link_of(stacks[0] if stack == TCP else stack)
            pre = _prefix(stack, link, mode)
            for i, which in enumerate(("warm", "n1", "n2")):
                for x in [m] + followers:
                    out.append(_step(x, stack, which, x.ns[i], pre, timeout))
    return out


def _step(m, stack, which, n, pre, timeout):
    sid = f"{stack}.{m.name}.{which}"
    srv, cli = (c.format(n=n, bytes=units(m, n), mib=n) for c in (m.server, m.client))
    return (sid, f"{pre}/overlay/bstep server {sid} {timeout} {srv}",
            f"{pre}/overlay/bstep client {sid} {timeout} {cli}",
            {"stack": stack, "meas": m.name, "which": which, "n": n})
