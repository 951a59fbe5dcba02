"""Reading a run's logs: the guests' out.log split into bstep's BENCH-BEGIN
/ BENCH-END blocks, the programs' outputs in them (perftest, iperf3 -J,
siwx-imm-bench, rstream, the NFS steps' timing), each boot's measurements
and run status, and a stack's boots merged into one (medians:
stats.merge_rounds)."""

import json
import os
import re

from . import nfs, rstream
from .common import MPA_CRC, PERFTEST_MB, TCP_KINDS
from .layout import read_log, read_plan, stack_dirs
from .stats import merge_repeats, merge_rounds

NUM = r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"


def split_blocks(text, role):
    """{id: (output lines, fields of the begin and end lines)} from one
    guest's out.log."""
    blocks, cur, lines, begin = {}, None, [], {}

    def fields(s):
        return dict(kv.split("=", 1) for kv in s.split() if "=" in kv)
    for line in text.splitlines():
        m = re.match(r"BENCH-BEGIN (\S+) (.*)", line)
        if m:
            cur, lines, begin = m.group(1), [], fields(m.group(2))
            continue
        m = re.match(r"BENCH-END (\S+) role=\S+ (.*)", line)
        if m and cur == m.group(1):
            blocks[cur] = (lines, begin | fields(m.group(2)))
            cur = None
            continue
        if cur is not None:
            lines.append(line)
    if cur is not None:   # began, never ended: the boot died in this step
        blocks[cur] = (lines, begin | {"status": "unfinished"})
    return blocks


def parse_perftest(lines, kind):
    """The results row under perftest's '#bytes' header, as a dict."""
    for i, line in enumerate(lines):
        if "#bytes" not in line:
            continue
        names = re.findall(r"#\w+|t_\w+|99\.9%|99%|BW peak|BW average|MsgRate", line)
        for row in lines[i + 1:i + 4]:
            vals = re.findall(NUM, row)
            if len(vals) >= 5 and row.strip()[0].isdigit():
                d = dict(zip(names, (float(v) for v in vals)))
                d["#bytes"], d["#iterations"] = int(float(vals[0])), int(float(vals[1]))
                if kind == "bw":
                    return _perftest_bw(d, vals)
                return {"iters": d["#iterations"], "bytes": d["#bytes"],
                        "lat_typical_us": d.get("t_typical"),
                        "lat_avg_us": d.get("t_avg"), "lat_min_us": d.get("t_min"),
                        "lat_max_us": d.get("t_max"), "lat_p99_us": d.get("99%"),
                        "lat_p999_us": d.get("99.9%")}
    return None


def _perftest_bw(d, vals):
    """A bandwidth row: @d by column name, @vals the numbers in order."""
    mbs = d.get("BW average", float(vals[3]))
    rate = d.get("MsgRate", float(vals[4]))
    if mbs < 1.0 and rate > 0:   # printed as 0.00: use the rate
        mbs = rate * 1e6 * d["#bytes"] / PERFTEST_MB
    return {"iters": d["#iterations"], "bytes": d["#bytes"],
            "bw_MiBps": mbs,
            "bw_gbps": mbs * PERFTEST_MB * 8 / 1e9,
            "bw_peak_MiBps": d.get("BW peak", float(vals[2])),
            "msg_rate_mpps": d.get("MsgRate", float(vals[4]))}


def parse_iperf3(lines):
    """iperf3 -J's report: what the receiver got, what the sender sent."""
    text = "\n".join(lines)
    i, j = text.find("{"), text.rfind("}")
    if i < 0 or j < i:
        return None
    try:
        d = json.loads(text[i:j + 1])
        recv = d["end"]["sum_received"]
        sent = d["end"].get("sum_sent", {})
    except (ValueError, KeyError):
        return None
    return {"bw_gbps": recv["bits_per_second"] / 1e9,
            "bw_MiBps": recv["bits_per_second"] / 8 / PERFTEST_MB,
            "sender_gbps": sent.get("bits_per_second", 0) / 1e9,
            "seconds": recv.get("seconds"),
            "retransmits": sent.get("retransmits")}


def parse_imm(lines):
    """siwx-imm-bench's last 'result,MODE,OP,BYTES,ITERS,A,B,C' line."""
    for line in reversed(lines):
        if line.startswith("result,"):
            f = line.split(",")
            if len(f) < 8:
                return None
            mode, nbytes, iters = f[1], int(f[3]), int(f[4])   # f[2]: the operation
            a, b, c = float(f[5]), float(f[6]), float(f[7])
            if mode == "lat":
                return {"iters": iters, "bytes": nbytes, "lat_typical_us": a,
                        "lat_avg_us": b, "lat_p99_us": c}
            if mode == "bw":
                return {"iters": iters, "bytes": nbytes, "msgs_per_s": a,
                        "bw_MiBps": b * 1e6 / PERFTEST_MB, "bw_gbps": b * 8 / 1e3}
            return {"iters": iters, "bytes": nbytes, "msg_rate_mpps": a / 1e6,
                    "msgs_per_s": a, "bw_MBps": b}
    return None


def parse_output(kind, lines, nbytes):
    """The figures of a step of @kind from its client's output, or None."""
    if kind == "tcp":
        return parse_iperf3(lines)
    if kind.startswith("imm_") or kind == "bw_ev":
        return parse_imm(lines)
    if kind in rstream.KINDS:
        return rstream.parse(lines, kind, nbytes)
    if kind in nfs.KINDS:
        return nfs.parse(lines)
    return parse_perftest(lines, kind)


def tail(lines, n=4):
    keep = [l.strip() for l in lines if l.strip() and not l.startswith("-----")]
    return " | ".join(keep[-n:])


def harness_failures(summary):
    """The "FAIL: ..." lines of the harness' summary.txt, each with its
    detail lines."""
    fails = []
    for l in summary.splitlines():
        if l.startswith("FAIL: "):
            fails.append(l[len("FAIL: "):])
        elif fails and not re.match(r"(peers|step \d+|elapsed|guest\d|pcap):", l):
            fails[-1] += "\n" + l.strip()
    return fails


def measure(stack, st, boot, cli, srv):
    """The measurement of plan step @st of @stack from the client's and
    the server's blocks: its figures with status ok, or why not."""
    m = {"stack": stack, "test": st["test"], "kind": st["kind"],
         "bytes": st["bytes"], "step": st["id"], "boot": boot}
    if st.get("stack") == "*":
        m["shared"] = True   # one TCP figure for every stack of the boot
    lines, fields = cli.get(st["id"], ([], {"status": "not-run"}))
    sfields = srv.get(st["id"], ([], {}))[1]
    # Both guests' siwx module, as the step began (bstep)
    crc = set()
    if stack in MPA_CRC and st["kind"] not in TCP_KINDS:
        crc = {fields.get("siwx_mpa_crc"), sfields.get("siwx_mpa_crc")} - {None}
    if crc:
        m["mpa_crc"] = "/".join(sorted(crc))
    if fields.get("status") == "skipped":
        m.update(status="skipped", note=fields.get("reason", ""))
    elif crc and crc != {MPA_CRC[stack]}:
        m.update(status="failed", note=f"ran with siwx mpa_crc={m['mpa_crc']}, "
                 f"not {MPA_CRC[stack]} on both guests as {stack} asks")
    elif fields.get("status") in ("not-run", "unfinished"):
        m.update(status=fields["status"],
                 note="boot ended before this step" if fields["status"] == "not-run"
                 else "boot ended during this step")
    else:
        _judge(m, parse_output(st["kind"], lines, st["bytes"]), lines, fields, sfields)
        if m["status"] == "ok":
            m.update(copies(fields, sfields))
    return m


COPY_COUNTERS = ("tx_payload", "tx_copied_siwx", "tx_copied_tcp", "tx_crc",
                 "rx_payload", "rx_copied_siwx", "rx_crc")
# Counted since 2026-11-26: CRC octets read in the copy's own pass, and
# zero-copy octets the network stack copied after all (kernel/siwx_zc.c)
# Since 2026-11-27: stage pages, new and reused (kernel/siwx_tx_pool.c)
OPTIONAL_COUNTERS = ("tx_crc_fused", "rx_crc_fused", "tx_zerocopy_copied",
                     "tx_stage_new", "tx_stage_reused")


def copies(*guests):
    """Copies and CRC passes per payload octet (kernel/siwx_copies.c), from
    the siwx_<counter> fields bstep puts on each guest's BENCH-END line:
    copies_tx and crc_tx of the guest that sent the most payload, copies_rx
    and crc_rx of the one that received the most. With the fused counters
    also passes_tx and passes_rx: trips through the payload, a copy and
    the CRC read in the same pass counting once; with the stage's page
    counters stage_reuse_tx, the share of the sender's stage pages that
    were reused instead of new. {} without counters."""
    counts = []
    for f in guests:
        try:
            c = {k: float(f[f"siwx_{k}"]) for k in COPY_COUNTERS}
            for k in OPTIONAL_COUNTERS:
                if f"siwx_{k}" in f:
                    c[k] = float(f[f"siwx_{k}"])
        except (KeyError, ValueError):
            continue
        counts.append(c)
    out = {}
    tx = max(counts, key=lambda c: c["tx_payload"], default=None)
    if tx and tx["tx_payload"] > 0:
        out["copies_tx"] = (tx["tx_copied_siwx"] + tx["tx_copied_tcp"]
                            + tx.get("tx_zerocopy_copied", 0)) / tx["tx_payload"]
        out["crc_tx"] = tx["tx_crc"] / tx["tx_payload"]
        if "tx_crc_fused" in tx:
            out["passes_tx"] = out["copies_tx"] + (tx["tx_crc"] - tx["tx_crc_fused"]) / tx["tx_payload"]
        pages = tx.get("tx_stage_new", 0) + tx.get("tx_stage_reused", 0)
        if pages:
            out["stage_reuse_tx"] = tx.get("tx_stage_reused", 0) / pages
    rx = max(counts, key=lambda c: c["rx_payload"], default=None)
    if rx and rx["rx_payload"] > 0:
        out["copies_rx"] = rx["rx_copied_siwx"] / rx["rx_payload"]
        out["crc_rx"] = rx["rx_crc"] / rx["rx_payload"]
        if "rx_crc_fused" in rx:
            out["passes_rx"] = out["copies_rx"] + (rx["rx_crc"] - rx["rx_crc_fused"]) / rx["rx_payload"]
    return out


def _judge(m, r, lines, fields, sfields):
    """@m ok with the figures @r, or failed with the exit statuses and the
    output's last lines."""
    rc = fields.get("rc", "?")
    # perftest exits 0 when its clock calibration failed, and its
    # figures are then 0.00 (it measures in CPU cycles).
    uncalibrated = any("Correlation coefficient r^2" in l for l in lines)
    if rc == "0" and r and not uncalibrated:
        m.update(r, status="ok")
    elif rc == "0" and uncalibrated:
        m.update(status="failed", note="perftest could not calibrate its clock "
                 "(r^2 < 0.9), so its figures are not measurements")
    else:
        note = f"client rc={rc}"
        if sfields.get("rc") not in (None, "0"):
            note += f", server rc={sfields.get('rc')}"
        if rc == "127" or "not found" in "\n".join(lines):
            note += " (program missing from the guest image)"
        m.update(status="failed", note=f"{note}: {tail(lines)}")


def run_status(meas, fails):
    """(status, reason) of a stack in one boot: ok, partial (some RDMA
    figures, but the harness saw failures) or skipped (none)."""
    ok = [m for m in meas if m["status"] == "ok" and m["kind"] not in TCP_KINDS]
    if ok and not fails:
        return "ok", ""
    if ok:
        return "partial", "; ".join(" / ".join(f.splitlines()[:3]) for f in fails)
    abandon = [m["note"] for m in meas if m["status"] == "skipped"]
    first_fail = [m for m in meas if m["status"] == "failed" and m["kind"] not in TCP_KINDS]
    why = []
    if first_fail:
        why.append(f"{first_fail[0]['step']} failed ({first_fail[0]['note']})")
    why += [f.splitlines()[0] + (" " + " / ".join(f.splitlines()[1:3]) if "\n" in f else "")
            for f in fails]
    if not why and abandon:
        why.append(abandon[0])
    return "skipped", "no RDMA measurement succeeded: " + ("; ".join(why) or "no results")


def parse_round(outdir, logdir, stack):
    """Measurements and run status of @stack in one boot from its logs."""
    plan = read_plan(logdir)
    if plan is None:
        return None
    only = plan.get("stack")   # a plan of before shared boots: one stack
    plan["steps"] = [st for st in plan["steps"] if st.get("stack", only) in (stack, "*")]
    plan["unsupported"] = [u for u in plan.get("unsupported", [])
                           if u.get("stack", only) == stack]
    hrc = read_log(os.path.join(logdir, "harness-rc")).strip()
    fails = harness_failures(read_log(os.path.join(logdir, "summary.txt")))
    cli = split_blocks(read_log(os.path.join(logdir, "guest2.out.log")), "client")
    srv = split_blocks(read_log(os.path.join(logdir, "guest1.out.log")), "server")
    meas = merge_repeats([measure(stack, st, os.path.basename(logdir), cli, srv)
                          for st in plan["steps"]])
    for u in plan.get("unsupported", []):
        meas.append({"stack": stack, "test": u["test"], "kind": u["kind"],
                     "bytes": u["bytes"], "status": "unsupported",
                     "note": u.get("reason", f"{stack} does not support it")})
    status, reason = run_status(meas, fails)
    run = {"status": status, "reason": reason, "harness_rc": hrc,
           "harness_failures": fails, "logs": os.path.relpath(logdir, outdir)}
    return {"run": run, "measurements": meas}


def parse_stack(outdir, stack):
    """Measurements and run status of one stack over all its rounds."""
    parts = [parse_round(outdir, d, stack) for d in stack_dirs(outdir, stack)]
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else merge_rounds(parts)
