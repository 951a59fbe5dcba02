"""The statistics over parsed measurements: a measurement's runs in one
boot averaged, a stack's boots merged into medians (with every boot's
value kept), each measurement's primary figure, the ratios between
stacks (also within each boot) and to raw TCP, and the benchmark issue's
targets."""

import statistics

from .common import KIB, MIB, NOT_FIGURES, OPS, RATIOS, TCP_KINDS, VARIANT_TESTS, size_label


def merge_repeats(meas):
    """A boot's measurements with each one that ran more than once (the
    A B B A pairs of plan._imm) as one: each figure the mean over its
    runs that succeeded, m["repeats"] how many those were."""
    groups = {}
    for m in meas:
        groups.setdefault((m["test"], m["bytes"], m["kind"]), []).append(m)
    out = []
    for ms in groups.values():
        if len(ms) == 1:
            out.append(ms[0])
            continue
        m, _ = _combine(ms, lambda v: sum(v) / len(v), "mean", "runs in this boot")
        ok = sum(x["status"] == "ok" for x in ms)
        if ok:
            m["repeats"] = ok
        out.append(m)
    return out


def merge_rounds(parts):
    """One stack's boots as one: each figure the median over the boots
    where its step succeeded; m["rounds"] keeps every boot's value."""
    by_key = {}
    for p in parts:
        for m in p["measurements"]:
            by_key.setdefault((m["test"], m["bytes"], m["kind"]), []).append(m)
    meas = [_median_of(ms) for ms in by_key.values()]
    runs = [p["run"] for p in parts]
    bad = [(i + 1, r) for i, r in enumerate(runs) if r["status"] != "ok"]
    run = dict(runs[0], rounds=len(runs))
    if bad:
        good = len(runs) - len(bad)
        run["status"] = "partial" if good or any(r["status"] == "partial" for _, r in bad) \
            else "skipped"
        run["reason"] = "; ".join(f"round {i}: {r['status']}: {r['reason']}" for i, r in bad)
        run["harness_failures"] = [f for _, r in bad for f in r["harness_failures"]]
    return {"run": run, "measurements": meas}


def _median_of(ms):
    """One measurement's boots @ms as one: each figure's median over the
    boots that succeeded."""
    m, vals = _combine(ms, statistics.median, "median", "boots")
    if vals:
        m["boots"] = [x["boot"] for x in ms if x["status"] == "ok"]  # whose values
        m["rounds"] = vals                                           # these are, in order
    return m


def _combine(ms, how, how_name, what):
    """Runs @ms of one measurement as one: the first as it is when none
    succeeded, else each figure combined by @how over those that did; and
    the values combined, by figure ({} for none)."""
    ok = [m for m in ms if m["status"] == "ok"]
    if not ok:
        return ms[0], {}
    m = dict(ok[0])
    vals = {}
    for k, v in ok[0].items():
        # bool is an int to Python, but a flag is no figure
        if k in NOT_FIGURES or isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        vals[k] = [x[k] for x in ok if isinstance(x.get(k), (int, float))]
        m[k] = how(vals[k])
    if len(ok) < len(ms):
        m["note"] = f"{how_name} of {len(ok)} of {len(ms)} {what} (the others: " + \
            "; ".join(x.get("note", x["status"]) for x in ms if x["status"] != "ok") + ")"
    return m, vals


def primary(m):
    """(metric name, value, unit, higher is better) of a measurement."""
    k = m["kind"]
    if k in ("bw", "bw_ev", "tcp", "nfs", "nfs_tcp"):
        return "bw_gbps", m.get("bw_gbps"), "Gbit/s", True
    if k in ("imm_rate", "rs_rate"):
        return "msg_rate_mpps", m.get("msg_rate_mpps"), "Mmsg/s", True
    if k == "rs_bw":
        return "bw_gbps", m.get("bw_gbps"), "Gbit/s", True
    if k == "rs_lat":   # rstream reports the mean only
        return "lat_avg_us", m.get("lat_avg_us"), "us", False
    return "lat_typical_us", m.get("lat_typical_us"), "us", False


def find(meas, stack, test, nbytes=None, status="ok"):
    for m in meas:
        if m["stack"] == stack and m["test"] == test and m["status"] == status and \
                (nbytes is None or m["bytes"] == nbytes):
            return m
    return None


def tcp_reference(meas, stack, test="tcp"):
    """@test over TCP (iperf3's tcp, nfs_tcp_*) of the same boot, else the
    first boot that measured it."""
    m = find(meas, stack, test)
    if m:
        return m
    return next((x for x in meas if x["test"] == test and x["status"] == "ok"), None)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def per_boot_ratios(a, b, met):
    """siwx/ref in each boot that measured both (boots with every stack
    only: separate boots are not pairs), when there were several."""
    if not a or not b or "boots" not in a or "boots" not in b:
        return None
    va = dict(zip(a["boots"], a["rounds"].get(met, [])))
    vb = dict(zip(b["boots"], b["rounds"].get(met, [])))
    return [va[bt] / vb[bt] for bt in va if vb.get(bt)] or None


def compute_ratios(meas):
    out = []
    keys = sorted({(m["test"], m["bytes"] or 0) for m in meas
                   if m["kind"] not in TCP_KINDS}, key=lambda k: (k[0], k[1]))
    for test, nbytes in keys:
        for subj, refs in RATIOS:
            s = find(meas, subj, test, nbytes)
            if not s and subj in VARIANT_TESTS:
                continue
            for ref in refs:
                out += _ratios_to(meas, subj, s, ref, test, nbytes)
            if test in ("write_bw", "read_bw", "send_bw", "write_bw_ev", "nfs_write", "nfs_read"):
                # NFS against NFS over TCP, the rest against iperf3
                t = find(meas, subj, test.replace("nfs_", "nfs_tcp_"), nbytes) \
                    if test.startswith("nfs_") else tcp_reference(meas, subj)
                out.append({"name": f"{subj}/TCP", "test": test, "bytes": nbytes,
                            "metric": "bw_gbps", "siwx": s.get("bw_gbps") if s else None,
                            "ref": t.get("bw_gbps") if t else None,
                            "ratio": ratio(s.get("bw_gbps") if s else None,
                                           t.get("bw_gbps") if t else None)})
    return out


def _ratios_to(meas, subj, s, ref, test, nbytes):
    """@subj's measurement @s against @ref's: its primary metric, and
    bandwidth tests' message rate too."""
    r = find(meas, ref, test, nbytes)
    probe = s or r or next(m for m in meas if m["test"] == test)
    metrics = [primary(probe)[0]]
    if probe["kind"] in ("bw",):
        metrics.append("msg_rate_mpps")
    return [{"name": f"{subj}/{ref}", "test": test, "bytes": nbytes, "metric": met,
             "siwx": s.get(met) if s else None,
             "ref": r.get(met) if r else None,
             "ratio": ratio(s.get(met) if s else None, r.get(met) if r else None),
             "per_boot": per_boot_ratios(s, r, met)} for met in metrics]


def _target(name, desc, value, cmp, thr, detail, ref=None):
    met = None if value is None else (value >= thr if cmp == ">=" else value <= thr)
    return {"name": name, "target": desc, "value": value, "threshold": thr,
            "cmp": cmp, "met": met, "detail": detail, "reference": ref or {}}


def _get(meas, stack, test, nbytes, metric):
    m = find(meas, stack, test, nbytes)
    return m.get(metric) if m else None


def _vs_siw(meas, st, test, nbytes, metric):
    return ratio(_get(meas, st, test, nbytes, metric), _get(meas, "siw", test, nbytes, metric))


def _nocrc(value):
    """The like-for-like figure: siwx without CRCs, as siw runs."""
    return {"siwx-nocrc": value}


def compute_targets(meas, sizes):
    return (_siw_targets(meas, sizes) + _tcp_targets(meas) + _atomic_targets(meas)
            + _imm_targets(meas))


def _siw_targets(meas, sizes):
    """siwx against upstream siw: throughput, small-message rate, latency."""
    T = []
    big = [s for s in sizes if s >= 64 * KIB]

    def worst(st, op):
        """The lowest ratio to siw at 64 KiB and above (if all measured)."""
        rs = [(s, _vs_siw(meas, st, f"{op}_bw", s, "bw_gbps")) for s in big]
        vals = [r for _, r in rs if r is not None]
        return (min(vals) if vals and len(vals) == len(rs) else None), rs

    for op in OPS:
        value, rs = worst("siwx", op)
        T.append(_target(
            f"{op}_bw>=siw", f"siwx >= 1.0x siw {op} throughput at 64 KiB and above",
            value, ">=", 1.0,
            ", ".join(f"{size_label(s)}: {'-' if r is None else f'{r:.2f}'}" for s, r in rs)
            or "no size >= 64 KiB in the sweep", _nocrc(worst("siwx-nocrc", op)[0])))
    for op in OPS:
        T.append(_target(
            f"{op}_rate8>=siw", f"siwx >= 1.0x siw message rate of {op} at 8 B",
            _vs_siw(meas, "siwx", f"{op}_bw", 8, "msg_rate_mpps"),
            ">=", 1.0, "ib_%s_bw -s 8, MsgRate" % op,
            _nocrc(_vs_siw(meas, "siwx-nocrc", f"{op}_bw", 8, "msg_rate_mpps"))))
    lat_keys = sorted({(m["test"], m["bytes"]) for m in meas if m["kind"] == "lat"
                       and not m["test"].startswith("atomic")})
    for test, nbytes in lat_keys:
        T.append(_target(
            f"{test}-{nbytes}<=siw", f"siwx {test} latency at {size_label(nbytes)} B <= 1.0x siw",
            _vs_siw(meas, "siwx", test, nbytes, "lat_typical_us"), "<=", 1.0, "t_typical",
            _nocrc(_vs_siw(meas, "siwx-nocrc", test, nbytes, "lat_typical_us"))))
    return T


def _tcp_targets(meas):
    """1 MiB RDMA Writes against raw TCP: perftest's figure (the issue's),
    then the writer sleeping between completions as iperf3 sleeps in
    send()."""
    def vs_tcp(st, test):
        return ratio(_get(meas, st, test, MIB, "bw_gbps"),
                     (tcp_reference(meas, st) or {}).get("bw_gbps"))

    return [_target(f"{test}_1M>=0.8tcp", f"siwx write bandwidth at 1 MiB >= 0.8x raw TCP{desc}",
                    vs_tcp("siwx", test), ">=", 0.8, detail,
                    {st: vs_tcp(st, test) for st in ("siwx-nocrc", "rxe", "siw")})
            for test, desc, detail in (
                ("write_bw", "", "ib_write_bw -s 1048576 vs iperf3 (same boot when measured)"),
                ("write_bw_ev", ", the writer asleep on completion events",
                 "siwx-imm-bench -m bw -o write -e -b 1048576 vs iperf3"))]


def _atomic_targets(meas):
    def atomic_vs_read(st):
        return ratio(_get(meas, st, "atomic_lat", 8, "lat_typical_us"),
                     _get(meas, st, "read_lat", 8, "lat_typical_us"))
    return [_target("atomic_lat<=1.1read8",
                    "siwx atomic latency <= 1.1x its RDMA Read latency at 8 B",
                    atomic_vs_read("siwx"), "<=", 1.1,
                    "ib_atomic_lat FETCH_AND_ADD / ib_read_lat -s 8",
                    {"rxe": atomic_vs_read("rxe")}),
            _target("atomic_rate>=rxe", "siwx atomic rate >= rxe's",
                    ratio(_get(meas, "siwx", "atomic_bw", 8, "msg_rate_mpps"),
                          _get(meas, "rxe", "atomic_bw", 8, "msg_rate_mpps")),
                    ">=", 1.0, "ib_atomic_bw FETCH_AND_ADD, MsgRate")]


def _imm_targets(meas):
    def imm_vs_ws(st):
        return ratio(_get(meas, st, "imm_lat", 8, "lat_typical_us"),
                     _get(meas, st, "write_send_lat", 8, "lat_typical_us"))
    # What an iWARP application has had instead: Write + Send on siw.
    return [_target("imm_lat<=0.75ws",
                    "siwx write-with-imm latency <= 0.75x RDMA Write + Send latency",
                    imm_vs_ws("siwx"), "<=", 0.75, "siwx-imm-bench -m lat -b 8, median",
                    {"rxe": imm_vs_ws("rxe"),
                     "siwx imm / siw Write + Send": ratio(
                         _get(meas, "siwx", "imm_lat", 8, "lat_typical_us"),
                         _get(meas, "siw", "write_send_lat", 8, "lat_typical_us"))})]
