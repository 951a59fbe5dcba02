"""The run's outputs from its logs: results.json, results.csv, summary.md
and the plots (plots.py, which needs matplotlib only when it draws)."""

import csv
import json
import os

from . import nfs, rstream
from .common import (KIB, MACHINE_NOTE, NOT_FIGURES, SHARED, STACKS, TCP_KINDS, fmt,
                     ratio_subjects, say, size_label)
from .parse import parse_stack
from .plots import plots
from .stats import compute_ratios, compute_targets, primary, ratio, tcp_reference

UNITS = {"bw_gbps": "Gbit/s", "bw_MiBps": "MiB/s", "bw_peak_MiBps": "MiB/s",
         "msg_rate_mpps": "Mmsg/s", "msgs_per_s": "msg/s", "bw_MBps": "MB/s",
         "sender_gbps": "Gbit/s", "seconds": "s", "retransmits": "count",
         "copies_tx": "per octet", "crc_tx": "per octet", "copies_rx": "per octet",
         "crc_rx": "per octet", "passes_tx": "per octet", "passes_rx": "per octet",
         "stage_reuse_tx": "share"}
VERDICT = {True: "met", False: "missed", None: "not measured"}


def report(outdir, meta):
    """Parse @outdir/logs and write every output; @meta: the run's."""
    res = {"meta": meta, "stacks": {}, "stacks_order": [], "measurements": []}
    for st in STACKS:
        p = parse_stack(outdir, st)
        if p is None:
            continue
        res["stacks_order"].append(st)
        res["stacks"][st] = {"run": p["run"]}
        res["measurements"] += p["measurements"]
    sizes = sorted({m["bytes"] for m in res["measurements"] if m["kind"] == "bw"})
    res["ratios"] = compute_ratios(res["measurements"])
    res["targets"] = compute_targets(res["measurements"], sizes)
    note = plots(outdir, res)
    if note:
        say(note)
    res["meta"]["plots"] = note or "bandwidth.png, latency.png"
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    write_csv(os.path.join(outdir, "results.csv"), res)
    summary_md(outdir, res, note)
    for st in res["stacks_order"]:
        r = res["stacks"][st]["run"]
        n = sum(1 for m in res["measurements"] if m["stack"] == st and m["status"] == "ok")
        say(f"{st}: {r['status']}, {n} figures" + (f" ({r['reason']})" if r["reason"] else ""))
    say(f"results: {outdir}/summary.md")


def write_csv(path, res):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["row", "stack", "test", "bytes", "metric", "value", "unit", "status", "note"])
        for m in res["measurements"]:
            _measurement_rows(w, m)
        for r in res["ratios"]:
            w.writerow(["ratio", r["name"], r["test"], r["bytes"], r["metric"], r["ratio"], "x",
                        "ok" if r["ratio"] is not None else "missing",
                        "per boot: " + " ".join(f"{x:.3g}" for x in r["per_boot"])
                        if r.get("per_boot") else ""])
        for t in res["targets"]:
            w.writerow(["target", "siwx", t["name"], "", f"{t['cmp']} {t['threshold']}",
                        t["value"], "x", VERDICT[t["met"]], t["detail"]])


def _measurement_rows(w, m):
    """A measurement's figures, one row each (with the min and max over
    the boots after a median); one row without a figure when it has none."""
    metrics = [k for k in m if k not in NOT_FIGURES]
    if not metrics:
        w.writerow(["measurement", m["stack"], m["test"], m["bytes"], "", "", "",
                    m["status"], m.get("note", "")])
    for k in metrics:
        if m[k] is None:
            continue
        unit = UNITS.get(k, "us" if k.startswith("lat_") else "")
        w.writerow(["measurement", m["stack"], m["test"], m["bytes"], k, m[k], unit,
                    m["status"], m.get("note", "")])
        vals = m.get("rounds", {}).get(k, [])
        if len(vals) > 1 and k != "iters":   # the median's spread over the boots
            for name, v in (("min", min(vals)), ("max", max(vals))):
                w.writerow(["measurement", m["stack"], m["test"], m["bytes"],
                            f"{k}_{name}", v, unit, m["status"],
                            f"over {len(vals)} boots"])


def spread(m, met):
    """A figure, with its range over the boots when there were several."""
    vals = m.get("rounds", {}).get(met, [])
    if len(vals) < 2:
        return fmt(m.get(met))
    def short(v):
        return f"{v:.0f}" if abs(v) >= 100 else f"{v:.2g}"
    return f"{fmt(m.get(met))} ({short(min(vals))}-{short(max(vals))})"


def summary_md(outdir, res, plot_note):
    meas = res["measurements"]
    # A boot with every stack: its logs are logs/boot* (a run without TCP
    # has no measurement marked shared).
    shared = any(m.get("shared") or m.get("boot", "").split("-round")[0] == SHARED
                 for m in meas)
    L = _intro(res, shared)
    L += ["## Stacks", "", "| stack | run | note |", "|---|---|---|"]
    for st in res["stacks_order"]:
        r = res["stacks"][st]["run"]
        L.append(f"| {st} | {r['status']} | {r['reason'].replace('|', '/') or '-'} |")
    L += ["", "## Key figures", ""]
    L += _key_figures(res)
    L += _tcp(res)
    L += _nfs(res)
    L += _copies(res)
    L += _targets(res)
    notes = [m for m in meas if m["status"] not in ("ok",)]
    if notes:
        L += ["", "## Not measured", ""]
        for m in notes:
            L.append(f"- {m['stack']} {m['test']} {size_label(m['bytes']) if m['bytes'] else ''}: "
                     f"{m['status']}: {m.get('note', '')}")
    L += ["", "## Files", "",
          "`results.json` / `results.csv` (every figure, ratio and target), "
          "`bandwidth.png`, `latency.png`, "
          f"`{'logs/boot*/' if shared else 'logs/<stack>*/'}` (harness logs of each boot)."]
    if plot_note:
        L.append(f"\n{plot_note}")
    with open(os.path.join(outdir, "summary.md"), "w") as f:
        f.write("\n".join(L) + "\n")


def _intro(res, shared):
    """Title, command, tree, machine, units, and how the boots went."""
    meta = res["meta"]
    L = [f"# siwx benchmark, {meta['date']}", "",
         f"Command: `{meta['command']}`  ", f"Tree: {meta['git']}  ",
         f"Machine: {meta['machine']}. **{MACHINE_NOTE}.**", "",
         "Units: bandwidth Gbit/s (perftest MiB/s x 8 x 2^20 / 1e9; iperf3 received bits/s), "
         "message rate Mmsg/s, latency us (perftest t_typical, siwx-imm-bench median). "
         "write_bw_ev: siwx-imm-bench -m bw -o write -e, 1 MiB RDMA Writes with both sides "
         "asleep on completion events, until the last byte is in the target's memory. "
         f"{rstream.UNITS}" + (f" {nfs.UNITS}" if any(m["kind"] in nfs.KINDS
                                                      for m in res["measurements"]) else ""), ""]
    rounds = max((res["stacks"][st]["run"].get("rounds", 1) for st in res["stacks_order"]),
                 default=1)
    if shared:
        L += ["All stacks ran in the same boot, each on its own link (identical "
              "links between the same two guests), taking turns measurement by measurement.", ""]
    if rounds > 1:
        L += [f"{'There were' if shared else 'Each stack was booted'} {rounds} "
              f"{'such boots' if shared else 'times'}, "
              f"{'the order of the stacks rotating' if shared else 'the boots of the stacks interleaved'}; every "
              "figure is the median over the boots, with their range in parentheses, and "
              "ratios and targets are ratios of medians"
              + (", followed by the ratio within each boot in brackets (the spread of "
                 "those is the noise that is left when the stacks share a boot)" if shared else "")
              + ".", ""]
    return L


# The key figures' order: by kind, then by test, then by size.
KIND_ORDER = ("bw", "bw_ev", "lat", "imm_lat", "imm_rate") + rstream.KINDS
TEST_ORDER = ("write_bw", "read_bw", "send_bw", "atomic_bw", "write_bw_ev", "write_lat",
              "read_lat", "send_lat", "atomic_lat", "imm_lat", "write_send_lat", "imm_rate",
              "write_send_rate") + tuple(t[0] for t in rstream.TESTS)


def _key_figures(res):
    """The table of every figure by stack, and the ratios of each."""
    meas, stacks = res["measurements"], res["stacks_order"]
    names = [f"{subj}/{ref}" for subj, refs in ratio_subjects(stacks) for ref in refs]
    L = ["| test | size | metric | " + " | ".join(stacks + names) + " |",
         "|---" * (3 + len(stacks) + len(names)) + "|"]
    keys = sorted({(m["test"], m["bytes"] or 0, m["kind"]) for m in meas
                   if m["kind"] not in TCP_KINDS + nfs.KINDS},
                  key=lambda k: (KIND_ORDER.index(k[2]) if k[2] in KIND_ORDER else 9,
                                 TEST_ORDER.index(k[0]) if k[0] in TEST_ORDER else 99, k[1]))
    for test, nbytes, kind in keys:
        mets = ["bw_gbps", "msg_rate_mpps"] if kind == "bw" else ["bw_gbps"] if kind == "bw_ev" \
            else [primary({"kind": kind})[0]]
        for met in mets:
            # message rates of large messages say nothing bandwidth does not
            if met == "msg_rate_mpps" and kind == "bw" and nbytes > 4096:
                continue
            cells = []
            for st in stacks:
                m = next((x for x in meas if x["stack"] == st and x["test"] == test
                          and (x["bytes"] or 0) == nbytes), None)
                cells.append("-" if not m else spread(m, met) if m["status"] == "ok"
                             else m["status"])
            rs = []
            for name in names:
                r = next((r for r in res["ratios"] if r["name"] == name and r["test"] == test
                          and r["bytes"] == nbytes and r["metric"] == met), None)
                rs.append("-" if not r else fmt(r["ratio"], 2) + (
                    " [" + " ".join(f"{x:.2f}" for x in r["per_boot"]) + "]"
                    if r.get("per_boot") else ""))
            L.append(f"| {test} | {size_label(nbytes)} | {met} | " + " | ".join(cells + rs) + " |")
    return L


def _tcp(res):
    """Raw TCP's figures, and each subject's bandwidth ratios to it."""
    meas, stacks = res["measurements"], res["stacks_order"]
    tcp = [m for m in meas if m["test"] == "tcp"]
    if tcp and all(m.get("shared") for m in tcp):
        tcp = tcp[:1]   # the same figure for every stack: measured once per boot
        tcp[0] = dict(tcp[0], stack="shared")
    L = ["", "Raw TCP (iperf3, one stream, guest 2 -> guest 1): " +
         (", ".join(f"{spread(m, 'bw_gbps')} Gbit/s in the {m['stack']} boot"
                    f"{'s' if len(m.get('rounds', {}).get('bw_gbps', [])) > 1 else ''}"
                    if m["status"] == "ok"
                    else f"{m['stack']} boot: {m['status']} ({m.get('note', '')})" for m in tcp)
          or "not measured") + "  "]
    for subj, _ in ratio_subjects(stacks):
        tr = [r for r in res["ratios"] if r["name"] == f"{subj}/TCP" and r["ratio"] is not None
              and r["bytes"] >= 64 * KIB]
        if tr:
            L.append(f"{subj}/TCP: " + ", ".join(
                f"{r['test']} {size_label(r['bytes'])} {fmt(r['ratio'], 2)}" for r in tr) + "  ")
    return L


def _nfs(res):
    """NFS's bandwidth over each RDMA stack and over TCP (MiB/s), and
    their ratios."""
    meas = res["measurements"]
    stacks = [st for st in nfs.STACKS if st in res["stacks_order"]]
    got = [m for m in meas if m["kind"] in nfs.KINDS]
    if not got:
        return []
    names = [("siwx", "siw"), ("siwx", "TCP"), ("siw", "TCP")]
    L = ["", "## NFS (v4.2; MiB/s)", "",
         "| operation | file | " + " | ".join(stacks + ["TCP"]) + " | " +
         " | ".join(f"{a}/{b}" for a, b in names) + " |",
         "|---" * (2 + len(stacks) + 1 + len(names)) + "|"]
    for op in ("write", "read"):
        row = {st: next((m for m in got if m["stack"] == st and m["test"] == f"nfs_{op}"), None)
               for st in stacks}
        # NFS over TCP: measured once per boot, listed under every stack
        test = f"nfs_tcp_{op}"
        row["TCP"] = tcp_reference(meas, "siwx", test) or next(
            (m for m in got if m["test"] == test), None)
        if not any(row.values()):
            continue
        nbytes = next(m["bytes"] for m in row.values() if m)
        cells = ["-" if not m else spread(m, "bw_MiBps") if m["status"] == "ok" else m["status"]
                 for m in (row[k] for k in stacks + ["TCP"])]
        val = {k: m.get("bw_MiBps") if m and m["status"] == "ok" else None
               for k, m in row.items()}
        rs = [fmt(ratio(val.get(a), val.get(b)), 2) for a, b in names]
        L.append(f"| {op} | {size_label(nbytes)} | " + " | ".join(cells + rs) + " |")
    return L


def _copies(res):
    """siwx's copies and CRC passes per payload octet, sender and receiver
    (kernel/siwx_copies.c, counted in the guests around each step)."""
    rows = [m for m in res["measurements"]
            if m["status"] == "ok" and ("copies_tx" in m or "copies_rx" in m)]
    if not rows:
        return []
    L = ["", "## Copies per payload octet (siwx's counters)", "",
         "Copies: siwx's own (CRC stage, inline) plus the network stack's "
         "(whatever TCP is not given by reference, and zero-copy octets it "
         "copied after all); CRC: passes of the MPA CRC over the "
         "payload; passes: trips through the payload, where a CRC that reads "
         "each chunk as it is copied adds none; stage pages reused: the "
         "share of the sender's stage pages written again once TCP let go "
         "of them instead of new (kernel/siwx_tx_pool.c).", "",
         "| stack | test | size | TX copies | TX CRC | TX passes | RX copies | RX CRC | RX passes "
         "| TX stage pages reused |",
         "|---|---|---|---|---|---|---|---|---|---|"]
    for m in rows:
        cells = [fmt(m.get(k), 2) if m.get(k) is not None else "-"
                 for k in ("copies_tx", "crc_tx", "passes_tx", "copies_rx", "crc_rx",
                           "passes_rx", "stage_reuse_tx")]
        L.append(f"| {m['stack']} | {m['test']} | {size_label(m['bytes']) if m['bytes'] else '-'} | "
                 + " | ".join(cells) + " |")
    return L


def _targets(res):
    L = ["", "## Targets (issue: ratios from one run)", "",
         "| target | value | needed | verdict | detail | reference |", "|---|---|---|---|---|---|"]
    for t in res["targets"]:
        verdict = {True: "met", False: "**missed**", None: "not measured"}[t["met"]]
        ref = ", ".join(f"{k}: {fmt(v, 2)}" for k, v in t["reference"].items() if v is not None)
        L.append(f"| {t['target']} | {fmt(t['value'], 2)} | {t['cmp']} {t['threshold']} | "
                 f"{verdict} | {t['detail']} | {ref or '-'} |")
    return L
