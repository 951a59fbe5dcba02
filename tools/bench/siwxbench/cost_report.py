"""The cost instrument's report (tools/bench/bench --cost): every
measurement's instructions per unit and side, the median over the boots
with its spread, ratios to siw, rxe and TCP, and the wall-clock time per
unit beside them; into results.csv, results.json and summary.md."""

import csv
import json
import os
import statistics

from . import cost_plan
from .common import fmt, fmt_count as _n
from .cost_parse import FIGURES, per_unit, step_counts
from .cost_run import NAME
from .layout import read_plan, round_dirs

# The TCP counterpart of each unit.
TCP_OF = {"octet": "tcp_1M", "message": "tcp_8", "round trip": "tcp_rt",
          "nfs_write": "nfs_tcp_write", "nfs_read": "nfs_tcp_read"}
# siwx's own comparisons: (figure, against, what it says).
WITHIN = (("imm_8", "write_send_8"), ("imm_rt", "write_send_rt"), ("atomic_rt", "read_rt"))


def side_name(m, role):
    """What @role does in @m: sender or receiver of the payload."""
    if m.sender is None:
        return role
    return "sender" if role == m.sender else "receiver"


def collect_boots(outdir):
    """[{(stack, meas): {role: {figure: per unit}} or None}], a boot each,
    in round order (None: a measurement the boot planned but did not count)."""
    boots = []
    for d in round_dirs(outdir, NAME):
        plan = read_plan(d)
        if not plan:
            continue
        counts = step_counts(d)
        boots.append({(st["stack"], st["meas"]): per_unit(counts, st["stack"], st["meas"])
                      for st in plan["steps"] if st["which"] == "n2"})
    return boots


def collect(outdir, boots=None):
    """{(stack, meas): [per-boot {role: {figure: per unit}}]}."""
    found = {}
    for boot in collect_boots(outdir) if boots is None else boots:
        for key, pu in boot.items():
            found.setdefault(key, [])
            if pu:
                found[key].append(pu)
    return found


def summarize(found):
    """Rows: one per stack, measurement and side, with each figure's
    median over the boots and the main figure's min and max."""
    rows = []
    for (stack, meas), boots in sorted(found.items()):
        m = cost_plan.BY_NAME[meas]
        for role in ("server", "client"):
            row = {"stack": stack, "measurement": meas, "unit": m.unit, "side": role,
                   "does": side_name(m, role), "boots": len(boots)}
            for f in FIGURES:
                vals = [b[role][f] for b in boots]
                row[f] = statistics.median(vals) if vals else None
            main = [b[role][m.main] for b in boots]
            row["main"] = m.main
            row["main_min"] = min(main) if main else None
            row["main_max"] = max(main) if main else None
            rows.append(row)
    _ratios(rows)
    return rows


def _get(rows, stack, meas, side):
    for r in rows:
        if r["stack"] == stack and r["measurement"] == meas and r["side"] == side:
            return r
    return None


def _ratio(a, b):
    return a / b if a is not None and b else None


def _ratios(rows):
    for r in rows:
        main = r["main"]
        for ref in ("siw", "rxe"):
            o = _get(rows, ref, r["measurement"], r["side"])
            r[f"vs_{ref}"] = _ratio(r[main], o[main]) if o and r["stack"] != ref else None
        # TCP: the same side (sender, receiver) of the TCP counterpart
        tcp = tcp_counterpart(r["measurement"])
        t = next((x for x in rows if x["stack"] == cost_plan.TCP and
                  x["measurement"] == tcp and x["does"] == r["does"]), None)
        r["vs_tcp"] = _ratio(r[main], t[main]) if t and r["stack"] != cost_plan.TCP else None
        r["within"] = None
        for subj, ref in WITHIN:
            if r["measurement"] == subj:
                o = _get(rows, r["stack"], ref, r["side"])
                r["within"] = f"{_f(_ratio(r[main], o[main] if o else None))}x {ref}"


def tcp_counterpart(meas):
    """The TCP measurement that @meas is judged against."""
    return TCP_OF.get(meas, TCP_OF[cost_plan.BY_NAME[meas].unit])


def same_boot_ratios(boots, rows):
    """Each row's main figure over its TCP counterpart's, boot by boot
    where both were counted (r["vs_tcp_boots"]), and their median
    (r["vs_tcp_same"]). TCP's counts move more between boots than siwx's
    (a receiver 4.5 to 5.4 an octet), so the ratio of two medians of
    different boots (vs_tcp) says less than this one."""
    for r in rows:
        r["vs_tcp_boots"], r["vs_tcp_same"] = [], None
        if r["stack"] == cost_plan.TCP:
            continue
        tcp = tcp_counterpart(r["measurement"])
        tm = cost_plan.BY_NAME[tcp]
        role = next((x for x in ("server", "client") if side_name(tm, x) == r["does"]), None)
        for boot in boots:
            own, ref = boot.get((r["stack"], r["measurement"])), boot.get((cost_plan.TCP, tcp))
            if own and ref and role:
                ratio = _ratio(own[r["side"]][r["main"]], ref[role][r["main"]])
                if ratio is not None:
                    r["vs_tcp_boots"].append(ratio)
        if r["vs_tcp_boots"]:
            r["vs_tcp_same"] = statistics.median(r["vs_tcp_boots"])


def _f(v, nd=3):
    return fmt(v, nd) if v is not None else "-"



def spread(r):
    """(max - min) / median of the main figure, over the boots."""
    if r["boots"] < 2 or not r[r["main"]]:
        return None
    return (r["main_max"] - r["main_min"]) / r[r["main"]]


COLUMNS = ("stack", "measurement", "unit", "side", "does", "boots", "main", "kernel", "user",
           "total", "tick", "idle", "krep", "urep", "ns", "main_min", "main_max", "vs_siw",
           "vs_rxe", "vs_tcp", "within", "vs_tcp_same")


def write_outputs(outdir, meta):
    boots = collect_boots(outdir)
    rows = summarize(collect(outdir, boots))
    same_boot_ratios(boots, rows)
    with open(os.path.join(outdir, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for r in rows:
            w.writerow(["" if r[c] is None else (f"{r[c]:.6g}" if isinstance(r[c], float)
                                                  else r[c]) for c in COLUMNS])
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    with open(os.path.join(outdir, "summary.md"), "w") as f:
        f.write(summary_md(rows, meta))
    return rows


def summary_md(rows, meta):
    out = ["# siwx cost: guest instructions per unit", "",
           f"`{meta['command']}` on {meta['date']}, tree `{meta['git']}`; {meta['machine']}.",
           "Counted by siwx's TCG plugin (tools/cost): instructions the guest executed, "
           "the timer tick and the idle loop apart; QEMU 7.2 counts each iteration of a "
           "`rep` string instruction as one instruction (`rep` columns). Medians over "
           "the boots; spread: (max - min) / median. Time: the host's wall-clock per "
           "unit under TCG, for comparison only.", ""]
    for unit in cost_plan.UNITS:
        sel = [r for r in rows if r["unit"] == unit]
        if not sel:
            continue
        out += [f"## Per {unit}", "",
                "| measurement | stack | side | counts | instructions | rep | spread | vs siw | "
                "vs rxe | vs TCP | | time (us) | boots |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in sel:
            main = r["main"]
            rep = r["krep"] + (r["urep"] if main == "total" else 0) if r["krep"] is not None \
                else None
            sp = spread(r)
            out.append(f"| {r['measurement']} | {r['stack']} | {r['does']} | "
                       f"{'kernel' if main == 'kernel' else 'all'} | {_n(r[main])} | "
                       f"{_n(rep)} | {'-' if sp is None else f'{sp:.1%}'} | "
                       f"{_f(r['vs_siw'])} | {_f(r['vs_rxe'])} | {_f(r['vs_tcp'])} | "
                       f"{r['within'] or ''} | "
                       f"{_n(r['ns'] / 1000 if r['ns'] is not None else None)} | {r['boots']} |")
        out.append("")
    same = [r for r in rows if r.get("vs_tcp_boots")]
    if same:
        out += ["## Against TCP, boot by boot", "",
                "Each figure over TCP's counterpart counted in the same boot, then the median "
                "of those ratios: TCP's counts move more between boots than siwx's.", "",
                "| measurement | stack | side | per boot | median |", "|---|---|---|---|---|"]
        for r in same:
            out.append(f"| {r['measurement']} | {r['stack']} | {r['does']} | "
                       f"{' '.join(f'{v:.3f}' for v in r['vs_tcp_boots'])} | "
                       f"{r['vs_tcp_same']:.3f} |")
        out.append("")
    return "\n".join(out) + "\n"
