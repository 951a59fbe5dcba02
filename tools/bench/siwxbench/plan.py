"""The test plan: which steps a stack runs in a boot (server and client
command lines for tools/bench/bstep, with what each measures), and the
option defaults (sizes, iteration counts) that shape it."""

from . import nfs, rstream
from .common import (KIB, MIB, MPA_CRC, OPS, SIWX_MPA_CRC, TCP_KINDS, UNSUPPORTED,
                     VARIANT_TESTS, link_of, parse_size)

IMM_BENCH = "/overlay/siwx-imm-bench"
NO_IMM_BENCH = "build/tools/siwx-imm-bench not built"


def apply_defaults(a):
    """Fill in the options left to their defaults (full run or --quick)
    and turn the comma lists into lists."""
    q = a.quick
    pick = lambda v, full, quick: v if v is not None else (quick if q else full)
    # siwx-rsockets measures rstream alone: without rstream it has nothing
    # to run and would only show up as a stack that failed.
    if not a.rstream and hasattr(a, "stacks"):
        a.stacks = [s for s in a.stacks if s != "siwx-rsockets"]
    if a.sizes:
        a.sizes = sorted({parse_size(s) for s in a.sizes.split(",")})
    elif q:
        a.sizes = [8, 64 * KIB]
    else:
        pw = [1 << k for k in range(3, 21)]
        a.sizes = sorted({s for i, s in enumerate(pw) if i % max(1, a.thin) == 0} | {8, MIB})
    lat_sizes = a.lat_sizes or ("8" if q else "8,4K")
    a.lat_sizes = sorted({parse_size(s) for s in lat_sizes.split(",")})
    # 5000 small messages take 0.5 s under TCG, no longer than the host's
    # hiccups that moved their ratios by tens of percent; 30000 take 3-4 s.
    a.bw_iters = pick(a.bw_iters, 30000, 20)
    a.bw_bytes = parse_size(a.bw_bytes) if a.bw_bytes else (2 * MIB if q else 256 * MIB)
    a.bw_min_iters = 5 if q else 20
    a.lat_iters = pick(a.lat_iters, 3000, 10)
    a.imm_lat_iters = pick(a.imm_lat_iters, 3000, 10)
    a.imm_rate_iters = pick(a.imm_rate_iters, 30000, 64)
    a.tcp_secs = pick(a.tcp_secs, 10, 2)
    a.step_timeout = pick(a.step_timeout, 300, 90)
    a.step_budget = pick(a.step_budget, 60, 30)
    # NFS: 128 MiB take a few seconds per transfer under TCG; three such
    # files (TCP, siwx, siw) fit the server's tmpfs in a 1 GiB guest.
    a.nfs_mib = pick(a.nfs_mib, 128, 8)


def bw_iters(a, size):
    """Bandwidth iterations at @size: --bw-bytes' worth, within limits."""
    return max(a.bw_min_iters, min(a.bw_iters, a.bw_bytes // size))


def make_plan(a, stack, have, shared=False, tcp=True, rnd=1):
    """The steps of @stack: (id, server cmd, client cmd, meta) tuples,
    and the steps it cannot run (their meta, with a reason).
    @shared: for a boot with every stack, where a step first picks the
    stack's link and device ($DEV_<kind>, ...) and its id names it.
    @have: which optional programs the overlay has (run.make_overlay).
    @rnd: the round (boot); write-with-imm and Write + Send, which are
    compared with each other, take turns going first (_imm)."""
    steps, unsupported = [], []
    bs = "/overlay/bstep"
    t = a.step_timeout
    ln = link_of(stack)
    pre = (f"export BENCH_STACK={stack} DEV=$DEV_{ln} SERVER_IP=$SERVER_IP_{ln} "
           f"CLIENT_IP=$CLIENT_IP_{ln}; ") if shared else ""
    if stack in MPA_CRC:   # bstep reports the setting a step ran with
        pre += f"echo {MPA_CRC[stack]} > {SIWX_MPA_CRC}; "
    only = VARIANT_TESTS.get(stack)

    def add(sid, srv, cli, meta):
        if only and meta["test"] not in only:
            return
        # A shared boot's TCP is measured once, on the first stack's link.
        meta = dict(meta, stack="*" if shared and meta["kind"] in TCP_KINDS else stack)
        if shared and meta["stack"] != "*":
            sid = f"{stack}.{sid}"
        steps.append((sid, f"{pre}{bs} server {sid} {t} {srv}",
                      f"{pre}{bs} client {sid} {t} {cli}", meta))

    if a.tcp_secs > 0 and tcp:
        add("tcp", "iperf3 -s -1",
            f"iperf3 -c $SERVER_IP -t {a.tcp_secs} -J",
            {"test": "tcp", "kind": "tcp", "bytes": None})
    _perftest_bw(a, add)
    _write_bw_ev(a, stack, have, add, unsupported)
    _perftest_lat(a, add)
    _atomics(a, stack, add, unsupported)
    _imm(a, stack, have, rnd, add, unsupported)
    _rstream(a, stack, have, add, unsupported)
    _nfs(a, stack, tcp, add)
    return steps, [u for u in unsupported if not only or u["test"] in only]


COMMON = "-R -d $DEV -F"   # perftest: rdma_cm, the step's device, no CPU-frequency check


def _perftest_bw(a, add):
    for op in OPS:
        for size in a.sizes:
            args = f"{COMMON} -s {size} -n {bw_iters(a, size)}"
            add(f"{op}_bw-{size}", f"ib_{op}_bw {args}",
                f"ib_{op}_bw {args} $SERVER_IP",
                {"test": f"{op}_bw", "kind": "bw", "bytes": size})


def _write_bw_ev(a, stack, have, add, unsupported):
    # 1 MiB Writes with the writer and the target asleep on completion
    # events, as iperf3 sleeps in send(): perftest's ib_write_bw can only
    # busy-poll, and in a one-vCPU guest the spinning process shares the
    # CPU with ksoftirqd, which carries TCP (docs/performance.md).
    meta = {"test": "write_bw_ev", "kind": "bw_ev", "bytes": MIB}
    if have["imm"]:
        add(f"write_bw_ev-{MIB}", f"{IMM_BENCH} -s",
            f"{IMM_BENCH} -c $SERVER_IP -m bw -o write -b {MIB} -n {bw_iters(a, MIB)} -w 16 -e",
            meta)
    else:
        unsupported.append(dict(meta, stack=stack, reason=NO_IMM_BENCH))


def _perftest_lat(a, add):
    for op in OPS:
        for size in a.lat_sizes:
            args = f"{COMMON} -s {size} -n {a.lat_iters}"
            add(f"{op}_lat-{size}", f"ib_{op}_lat {args}",
                f"ib_{op}_lat {args} $SERVER_IP",
                {"test": f"{op}_lat", "kind": "lat", "bytes": size})


def _atomics(a, stack, add, unsupported):
    if not a.atomics:
        return
    atomic = [("atomic_bw", "bw", a.bw_min_iters * 10 if a.quick else a.atomic_iters),
              ("atomic_lat", "lat", a.lat_iters)]
    for test, kind, n in atomic:
        meta = {"test": test, "kind": kind, "bytes": 8}
        if "atomic" in UNSUPPORTED.get(stack, ()):
            unsupported.append(dict(meta, stack=stack))
            continue
        args = f"{COMMON} -A FETCH_AND_ADD -n {n}"
        add(f"{test}-8", f"ib_{test} {args}", f"ib_{test} {args} $SERVER_IP", meta)


# The id suffix of a measurement's second run in the same boot
REPEAT = "-again"


def _imm(a, stack, have, rnd, add, unsupported):
    """Write-with-imm against Write + Send, latency and then rate. Each
    pair runs twice in a boot, in the order A B B A (which of the two is A
    alternates from round to round), so that neither gains from going
    first or last while the boot's speed drifts; the parser averages a
    measurement's two runs (stats.merge_repeats)."""
    if not a.imm:
        return
    pairs = [[("lat", op, 8, a.imm_lat_iters) for op in ("imm", "write-send")],
             [("rate", op, 8, a.imm_rate_iters) for op in ("imm", "write-send")]]
    for p in pairs:
        first = p if rnd % 2 else p[::-1]
        for (mode, op, size, n), again in zip(first + first[::-1], (False, False, True, True)):
            test = f"{'imm' if op == 'imm' else 'write_send'}_{mode}"
            meta = {"test": test, "kind": "imm_" + mode, "bytes": size}
            if not have["imm"]:
                why = {"reason": NO_IMM_BENCH}
            elif op == "imm" and "imm" in UNSUPPORTED.get(stack, ()):
                why = {}
            else:
                why = None
            if why is not None:
                if not again:
                    unsupported.append(dict(meta, stack=stack, **why))
                continue
            w = f" -w {a.imm_window}" if mode == "rate" else ""
            add(f"{test}-{size}{REPEAT if again else ''}", f"{IMM_BENCH} -s",
                f"{IMM_BENCH} -c $SERVER_IP -m {mode} -o {op} -b {size} -n {n}{w}", meta)


def _rstream(a, stack, have, add, unsupported):
    if not a.rstream:
        return
    for test, kind, size, srv, cli in rstream.steps(a.quick):
        meta = {"test": test, "kind": kind, "bytes": size}
        if stack == "siwx-rsockets" and not have["rsockets"]:
            unsupported.append(dict(meta, stack=stack, reason=have["rsockets_why"]))
            continue
        lib = rstream.PATCHED if stack == "siwx-rsockets" else ""
        add(f"{test}-{size}", lib + srv, lib + cli, meta)


def _nfs(a, stack, tcp, add):
    if not a.nfs:
        return
    nbytes = a.nfs_mib * MIB
    for test, kind, srv, cli in nfs.steps(stack, a.nfs_mib, tcp):
        add(f"{test}-{nbytes}", srv, cli, {"test": test, "kind": kind, "bytes": nbytes})


def interleave(plans):
    """Steps of several stacks as one list: each measurement on every
    stack in turn (in the order the measurements first appear)."""
    by_key = {}
    for plan in plans:
        for step in plan:
            by_key.setdefault(step[0].split(".", 1)[-1], []).append(step)
    return [step for steps in by_key.values() for step in steps]
