"""A cost profile (tools/bench/bench --cost-profile MEASUREMENT): the
instructions of one measurement per unit, by guest kernel function and by
user object. The plugin (profile=on) writes, at each marker, the
translation blocks executed since the marker before, with their
instruction counts; a step's end marker follows its begin marker, so the
blocks after it are the step's. Kernel addresses are named by the
guest's kallsyms (the core kernel's kept by tests/vm/run, the modules'
from the guest's out.log, COST-MODSYM), user addresses by the objects
mapped in the step's programs (bstep's BENCH-MAPS lines; the guests map
without randomization, so every process of a program maps alike).
The kernel's REP string iterations (QEMU 7.2 counts each as an
instruction) are also given by the calls that were open when they ran
(the plugin's "rep" lines), so that a `memset_erms` names its callers."""

import bisect
import os
import re

from . import cost_plan
from .common import fmt_count as _n
from .cost_parse import ROLES
from .cost_run import NAME
from .layout import read_log, round_dirs

TOP_N = 25
# Callers shown for a REP instruction's iterations, innermost first.
REP_DEPTH = 8


class Symbols:
    """Address -> name, from "ADDRESS NAME" pairs: each name holds up to
    the next address."""

    def __init__(self, pairs):
        pairs = sorted(pairs)
        self.addrs = [a for a, _ in pairs]
        self.names = [n for _, n in pairs]

    def name(self, addr):
        i = bisect.bisect_right(self.addrs, addr) - 1
        return self.names[i] if i >= 0 else None


def kernel_symbols(logdir, n):
    pairs = []
    for line in read_log(os.path.join(logdir, "kallsyms")).splitlines():
        f = line.split()
        if len(f) == 3:
            pairs.append((int(f[0], 16), f[2]))
    for m in re.finditer(r"^COST-MODSYM (\w+) (\S+) \[(\S+)\]$",
                         read_log(os.path.join(logdir, f"guest{n}.out.log")), re.M):
        pairs.append((int(m.group(1), 16), f"{m.group(2)} [{m.group(3)}]"))
    return Symbols(pairs)


def user_maps(logdir, n, sid):
    """[(start, end, object)] that the programs of step @sid mapped."""
    out = []
    pat = rf"^BENCH-MAPS {re.escape(sid)} \S+ ([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+ *(\S*)$"
    for m in re.finditer(pat, read_log(os.path.join(logdir, f"guest{n}.out.log")), re.M):
        out.append((int(m.group(1), 16), int(m.group(2), 16),
                    os.path.basename(m.group(3)) or "[anon]"))
    return out


def step_window(logdir, n, sid):
    """The plugin's lines written at the end marker of step @sid on guest
    @n (what ran in its window), or None when the step failed or was not
    counted."""
    text = read_log(os.path.join(logdir, f"guest{n}.out.log"))
    m = re.search(rf"^BENCH-COST {re.escape(sid)} role=\S+ end mark=(\d+)$", text, re.M)
    if not m or not re.search(rf"^BENCH-END {re.escape(sid)} role=\S+ rc=0(\s|$)", text, re.M):
        return None
    end, out, inside = m.group(1), [], False
    for line in read_log(os.path.join(logdir, f"guest{n}.cost")).splitlines():
        if line.startswith("mark "):
            if inside:
                break
            inside = line.split()[1] == end
        elif inside:
            out.append(line.split())
    return out


def step_blocks(window):
    """{vaddr: instructions} of a step's window."""
    blocks = {}
    for f in window:
        if f[0] == "tb":
            va = int(f[1], 16)
            blocks[va] = blocks.get(va, 0) + int(f[2]) * int(f[3])
    return blocks


def step_reps(window, ksyms):
    """{(function of the REP, caller, ...): iterations} of a step's window,
    callers innermost first, named by function."""
    out = {}
    for f in window:
        if f[0] == "rep":
            rets = f[2].split(",") if len(f) == 4 else []
            key = tuple(ksyms.name(int(a, 16)) or "?" for a in [f[1]] + rets[:REP_DEPTH])
            out[key] = out.get(key, 0) + int(f[-1])
    return out


def attribute(blocks, ksyms, maps):
    """{name: instructions}: kernel functions, user objects."""
    out = {}
    for va, count in blocks.items():
        if va >> 63:
            name = ksyms.name(va) or "kernel:?"
        else:
            name = next((f"user: {obj}" for s, e, obj in maps if s <= va < e), "user: ?")
        out[name] = out.get(name, 0) + count
    return out


def profile(logdir, stack, meas):
    """{role: [(name, per unit)]} of @meas on @stack in one boot, most
    first, or None when a step of it was not counted."""
    m = cost_plan.BY_NAME[meas]
    du = cost_plan.units(m, m.ns[2]) - cost_plan.units(m, m.ns[1])
    result = {}
    for n, role in ROLES.items():
        ksyms = kernel_symbols(logdir, n)
        sids = [f"{stack}.{meas}.{which}" for which in ("n1", "n2")]
        maps = [e for sid in sids for e in user_maps(logdir, n, sid)]
        by, reps = [], []
        for sid in sids:
            window = step_window(logdir, n, sid)
            if window is None:
                return None
            by.append(attribute(step_blocks(window), ksyms, maps))
            reps.append(step_reps(window, ksyms))
        result[role] = (_diff(by, du), _diff(reps, du))
    return result


def _diff(two, du):
    """[(key, per unit)] of N2's less N1's, most first."""
    d = {k: (two[1].get(k, 0) - two[0].get(k, 0)) / du for k in set(two[0]) | set(two[1])}
    return sorted(d.items(), key=lambda kv: -kv[1])


def classes(logdir):
    """{function: "tick" | "idle"}: what the plugin counted apart."""
    out = {}
    for line in read_log(os.path.join(logdir, "cost-classes")).splitlines():
        f = line.split()
        if len(f) == 4:
            out[f[3]] = f[2]
    return out


def _table(rows, total, cls):
    out = ["| function or object | per unit | share |", "|---|---|---|"]
    for name, v in rows[:TOP_N]:
        tag = f" ({cls[name]})" if name in cls else ""
        out.append(f"| `{name}`{tag} | {_n(v)} | {v / total if total else 0:.1%} |")
    return out + [""]


def _module_table(kern, total):
    """Kernel instructions by module ("[siwx]", ...), the built-in kernel
    as "kernel": what a stack's own code costs beside what it calls."""
    mods = {}
    for name, v in kern:
        m = re.search(r" \[(\S+)\]$", name)
        key = f"[{m.group(1)}]" if m else "kernel"
        mods[key] = mods.get(key, 0) + v
    out = ["| kernel part | per unit | share |", "|---|---|---|"]
    for key, v in sorted(mods.items(), key=lambda kv: -kv[1]):
        out.append(f"| `{key}` | {_n(v)} | {v / total if total else 0:.1%} |")
    return out + [""]


def _rep_table(reps):
    total = sum(v for _, v in reps)
    if not reps:
        return ["No REP iterations were traced (a profile of an older plugin).", ""]
    out = [f"Kernel REP iterations, {_n(total)} per unit, by the calls open when they "
           f"ran (innermost first, {REP_DEPTH} at most):", "",
           "| REP in | called from | per unit | share |", "|---|---|---|---|"]
    for key, v in reps[:TOP_N]:
        out.append(f"| `{key[0]}` | {' < '.join(key[1:]) or '-'} | {_n(v)} | "
                   f"{v / total if total else 0:.1%} |")
    return out + [""]


def write_profile(outdir, meas):
    logdir = round_dirs(outdir, NAME)[0]
    m = cost_plan.BY_NAME[meas]
    cls = classes(logdir)
    lines = [f"# Cost profile: {meas}, instructions per {m.unit}", "",
             "Instructions of N2 iterations less those of N1, over the units between, by "
             "guest kernel function (a module's in brackets; the timer tick's and the idle "
             "loop's marked, which the counts leave out) and by user object; shares of the "
             "kernel's and the user's totals. Negative entries are noise of that size.", ""]
    stacks = sorted({s.split(".")[0] for s in re.findall(
        rf"^BENCH-COST (\S+)\.{re.escape(meas)}\.n2 ",
        read_log(os.path.join(logdir, "guest2.out.log")), re.M)})
    for stack in stacks:
        prof = profile(logdir, stack, meas)
        if not prof:
            lines += [f"## {stack}: no profile (a step failed or was not counted)", ""]
            continue
        for role, (rows, reps) in prof.items():
            kern = [(k, v) for k, v in rows if not k.startswith("user: ")]
            user = [(k, v) for k, v in rows if k.startswith("user: ")]
            path = sum(v for k, v in kern if k not in cls)
            ku, uu = sum(v for _, v in kern), sum(v for _, v in user)
            lines += [f"## {stack}, {role}", "",
                      f"Kernel {_n(ku)} per {m.unit} ({_n(path)} without the functions "
                      f"marked; the counts' tick also takes what its interrupt ran), "
                      f"user {_n(uu)}.", ""]
            lines += (_table(kern, ku, cls) + _module_table(kern, ku) + _table(user, uu, cls)
                      + _rep_table(reps))
    with open(os.path.join(outdir, "profile.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
