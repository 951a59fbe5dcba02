"""Reading a cost run's boots: the plugin's marker lines (guest<N>.cost),
the steps' markers and exit statuses in the guests' out.log (bstep's
BENCH-COST and BENCH-END lines), each step's counts per side, and each
measurement's cost per unit: (counts of N2 - counts of N1) / (units of
N2 - units of N1)."""

import os
import re

from . import cost_plan
from .layout import read_log
from .parse import split_blocks

# The plugin's counters (tools/cost/cost_plugin.cc), and the figures made
# of them: "kernel" is the path's kernel instructions (tick and idle
# apart), "total" kernel path plus user.
COUNTERS = ("path", "tick", "idle", "user", "krep", "urep")
FIGURES = COUNTERS + ("kernel", "total", "ns")
ROLES = {1: "server", 2: "client"}


def read_marks(path):
    """{mark id: {counter: value, "ns": host time}} of a plugin's file."""
    marks = {}
    for line in read_log(path).splitlines():
        f = line.split()
        if len(f) < 4 or f[0] != "mark":
            continue
        vals = dict(kv.split("=", 1) for kv in f[4:] if "=" in kv)
        try:
            marks[int(f[1])] = {c: int(vals[c]) for c in COUNTERS} | {"ns": int(f[3])}
        except (KeyError, ValueError):
            continue
    return marks


def step_counts(logdir):
    """{step id: {"server"|"client": {figure: count}, "ok": bool}} of one
    boot: what each side executed between its step's two markers."""
    out = {}
    for n, role in ROLES.items():
        marks = read_marks(os.path.join(logdir, f"guest{n}.cost"))
        text = read_log(os.path.join(logdir, f"guest{n}.out.log"))
        at = {}
        for m in re.finditer(r"^BENCH-COST (\S+) role=\S+ (begin|end) mark=(\d+)$", text, re.M):
            at.setdefault(m.group(1), {})[m.group(2)] = int(m.group(3))
        for sid, (lines, fields) in split_blocks(text, role).items():
            step = out.setdefault(sid, {"ok": True})
            ok = fields.get("rc") == "0" and fields.get("client", "0") == "0"
            ok = ok and not any("could not calibrate" in ln for ln in lines)
            b, e = at.get(sid, {}).get("begin"), at.get(sid, {}).get("end")
            if not ok or b not in marks or e not in marks:
                step["ok"] = False
                continue
            d = {c: marks[e][c] - marks[b][c] for c in COUNTERS + ("ns",)}
            d["kernel"] = d["path"]
            d["total"] = d["path"] + d["user"]
            step[role] = d
    return out


def per_unit(counts, stack, meas):
    """{role: {figure: per unit}} of @meas on @stack in one boot, or None
    when a step of it failed or went uncounted."""
    m = cost_plan.BY_NAME[meas]
    n1, n2 = m.ns[1], m.ns[2]
    a, b = counts.get(f"{stack}.{meas}.n1"), counts.get(f"{stack}.{meas}.n2")
    if not a or not b or not a["ok"] or not b["ok"]:
        return None
    du = cost_plan.units(m, n2) - cost_plan.units(m, n1)
    out = {}
    for role in ROLES.values():
        if role not in a or role not in b:
            return None
        out[role] = {f: (b[role][f] - a[role][f]) / du for f in FIGURES}
    return out
