"""NFS in the bench: the Linux NFS client and server (v4.2) over RDMA on
siwx and on upstream siw, and over TCP as the baseline, in the same boot.
Each step times one transfer in the client guest through a fresh mount
with an empty page cache: a buffered write of --nfs-mib MiB ended by
fsync, or the read of that file. The guest side is tests/vm/lib/
nfs-guest.sh (bench-serve, bench-bw), which scenario siwx-nfs-rdma runs
too."""

import os
import shutil

from .common import MIB, TOP

# The stacks whose RDMA device carries NFS here (the comparison:
# siwx against upstream siw; rxe's NFS is not what siwx is compared with).
STACKS = ("siwx", "siw")
KINDS = ("nfs", "nfs_tcp")
GUEST = "/overlay/nfs.sh"
UNITS = ("nfs_write / nfs_read: NFS v4.2 over the stack's RDMA (port 20049), a buffered "
         "write of the file ended by fsync and its read back with an empty page cache, each "
         "through a fresh mount; nfs_tcp_*: the same over TCP on the first stack's link.")


def add_guest_side(overlay):
    """The guests' NFS script and its control channel into @overlay."""
    lib = os.path.join(TOP, "tests", "vm", "lib")
    shutil.copy2(os.path.join(lib, "nfs-guest.sh"), os.path.join(overlay, "nfs.sh"))
    shutil.copy2(os.path.join(lib, "guest-ctl.sh"), os.path.join(overlay, "ctl.sh"))


def steps(stack, mib, tcp):
    """(test, kind, server command, client command) of @stack's NFS steps,
    each over TCP first when @tcp (once per boot: the first stack's)."""
    out = []
    srv = f"sh {GUEST} bench-serve"
    for op in ("write", "read"):
        for proto, kind, test in (("tcp", "nfs_tcp", f"nfs_tcp_{op}"), ("rdma", "nfs", f"nfs_{op}")):
            if (proto == "tcp" and tcp) or (proto == "rdma" and stack in STACKS):
                out.append((test, kind, srv, f"sh {GUEST} bench-bw $SERVER_IP {proto} {op} {mib}"))
    return out


def parse(lines):
    """The client's 'nfs-bw,OP,PROTO,BYTES,SECONDS' line, as figures."""
    for line in reversed(lines):
        if not line.startswith("nfs-bw,"):
            continue
        f = line.strip().split(",")
        try:
            nbytes, secs = int(f[3]), float(f[4])
        except (IndexError, ValueError):
            return None
        if secs <= 0:
            return None
        return {"bytes": nbytes, "seconds": secs, "bw_MiBps": nbytes / secs / MIB,
                "bw_gbps": nbytes * 8 / secs / 1e9}
    return None
