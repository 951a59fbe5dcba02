"""rstream (librdmacm's rsockets benchmark) in the bench: its latency,
small-message rate and bandwidth over every stack with the guest's own
librdmacm, and over siwx with librdmacm built with our rsockets patches
(stack siwx-rsockets: RDMA Write with Immediate instead of Write + Send,
docs/rsockets-write-imm.md)."""

import os
import re
import shutil
import subprocess

# The patched library in the overlay (tests/rsockets/build-release, of the
# guests' rdma-core release); a step of stack siwx-rsockets runs rstream
# with it, every other step with the guest's own.
OVERLAY_DIR = "rsockets"
PATCHED = f"env LD_LIBRARY_PATH=/overlay/{OVERLAY_DIR} "   # bstep runs CMD under timeout

# (test, kind, transfer size, transfers per iteration, iterations):
# rstream's custom test sends the transfers one way and then back, once
# per iteration, and reports the time per transfer (usec/xfer: half a
# round trip for one transfer) and the bit rate of both directions.
# Bursts stay below rsockets' receive queue (384 by default): its control
# messages take receives outside its credits, and iWARP has no RNR retry
# to hide an overrun (docs/rsockets-write-imm.md).
TESTS = (("rstream_lat", "rs_lat", 64, 1, 1000),
         ("rstream_rate", "rs_rate", 64, 256, 20),
         ("rstream_bw", "rs_bw", 64 * 1024, 100, 1))


KINDS = tuple(t[1] for t in TESTS)
UNITS = ("rstream_*: rstream -S SIZE -C XFERS -I ITERS, the stock librdmacm of the guests "
         "(siwx-rsockets: ours with the rsockets patches); latency is its mean time per "
         "transfer (half a round trip), the message rate transfers per us, the bandwidth "
         "that of both directions.")


def add_patched(overlay, build):
    """Put the patched librdmacm of the guests' rdma-core release into
    @overlay/rsockets (built once: tests/vm/lib/common.sh build_rsockets).
    Returns (True, "") or (False, why not)."""
    # This file is <top>/tools/bench/siwxbench/rstream.py.
    top = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    env = dict(os.environ, SIWX_BUILD_DIR=build)
    r = subprocess.run(["bash", "-c", '. "$1/tests/vm/lib/common.sh" && build_rsockets', "-", top],
                       capture_output=True, text=True, env=env)
    lib = os.path.join(r.stdout.strip(), "lib")
    if r.returncode != 0 or not os.path.isdir(lib):
        why = (r.stderr.strip().splitlines() or ["no output"])[-1]
        return False, f"patched librdmacm not built: {why}"
    shutil.copytree(lib, os.path.join(overlay, OVERLAY_DIR), symlinks=True)
    return True, ""


def steps(quick):
    """(test, kind, size, server args, client args) of each rstream step."""
    out = []
    for test, kind, size, xfers, iters in TESTS:
        if quick:   # a tenth (bandwidth: a fifth of the transfers)
            iters, xfers = max(1, iters // 10), xfers // 5 if kind == "rs_bw" else xfers
        args = f"-S {size} -C {xfers} -I {iters}"
        out.append((test, kind, size, f"rstream -b $SERVER_IP {args}",
                    f"rstream -s $SERVER_IP {args}"))
    return out


ROW = re.compile(r"^\S+\s+\S+\s+(\d+)\s+(\S+)\s+\S+\s+([\d.]+)s\s+([\d.]+)\s+([\d.]+)\s*$")


def count(s):
    """rstream's counts: 1k = 1000, 1m = 1000000 (its cnt_str)."""
    mult = {"k": 1000, "m": 1000000, "b": 1000000000}.get(s[-1:].lower(), 1)
    return int(float(s.rstrip("kKmMbB")) * mult)


def parse(lines, kind, nbytes):
    """rstream's result row (after its 'name bytes xfers ...' header)."""
    for i, line in enumerate(lines):
        if not line.startswith("name") or "usec/xfer" not in line:
            continue
        for row in lines[i + 1:i + 3]:
            m = ROW.match(row.strip())
            if not m:
                continue
            xfers, iters = int(m.group(1)), count(m.group(2))
            secs, gbps, usec = float(m.group(3)), float(m.group(4)), float(m.group(5))
            r = {"iters": iters, "xfers": xfers, "bytes": nbytes, "seconds": secs}
            if kind == "rs_lat":
                r["lat_avg_us"] = usec
            elif kind == "rs_rate":
                r["msg_rate_mpps"] = 1.0 / usec if usec > 0 else None
                r["usec_per_xfer"] = usec
            else:
                # Gb/sec is printed with two decimals: recompute it from the
                # bytes and the time for small figures.
                total = 2 * iters * xfers * nbytes
                r["bw_gbps"] = total * 8 / secs / 1e9 if secs > 0 else gbps
            return r
    return None
