"""The plots, bandwidth.png and latency.png, with matplotlib (Debian's
python3-matplotlib). matplotlib is imported when a plot is drawn, so
that everything else, and the unit tests, run without it."""

import os

from .common import MACHINE_NOTE, OPS, fmt, size_label
from .stats import find

COLORS = {"rxe": "tab:blue", "siw": "tab:orange", "siwx": "tab:green",
          "siwx-nocrc": "yellowgreen"}


def plots(outdir, res):
    """Draws both plots into @outdir; returns None, or why there are none."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "plots skipped: python3-matplotlib is not installed (scripts/packages/bench.txt)"
    meas = [m for m in res["measurements"] if m["status"] == "ok"]
    stacks = [s for s in res["stacks_order"] if any(m["stack"] == s for m in meas)]
    _bandwidth(plt, outdir, res, meas, stacks)
    _latency(plt, outdir, meas, stacks)
    return None


def _bandwidth(plt, outdir, res, meas, stacks):
    """bandwidth.png: bandwidth and message rate over the message size,
    one column per operation, raw TCP as a line."""
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.5), squeeze=False)
    tcp = [m for m in meas if m["test"] == "tcp"]
    for j, op in enumerate(OPS):
        for i, (metric, label) in enumerate((("bw_gbps", "bandwidth [Gbit/s]"),
                                             ("msg_rate_mpps", "message rate [Mmsg/s]"))):
            ax = axes[i][j]
            for st in stacks:
                pts = sorted((m["bytes"], m[metric]) for m in meas
                             if m["stack"] == st and m["test"] == f"{op}_bw")
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-",
                            color=COLORS.get(st), label=st)
                ev = [m for m in meas if m["stack"] == st and m["test"] == f"{op}_bw_ev"]
                if ev and metric == "bw_gbps":
                    ax.plot([m["bytes"] for m in ev], [m[metric] for m in ev], "*", ms=11,
                            color=COLORS.get(st), label=f"{st}, completion events")
            if metric == "bw_gbps" and tcp:
                for k, m in enumerate(tcp):
                    ax.axhline(m["bw_gbps"], color="gray", ls="--" if k == 0 else ":", lw=1,
                               label=f"TCP iperf3 ({m['stack']} boot)")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"ib_{op}_bw")
            ax.set_xlabel("message size [bytes]")
            ax.set_ylabel(label)
            ax.grid(True, which="both", alpha=0.3)
            if ax.lines:
                ax.legend(fontsize=7)
    fig.suptitle(f"siwx bench {res['meta']['date']} ({MACHINE_NOTE})", fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "bandwidth.png"), dpi=90)
    plt.close(fig)


LAT_OPS = ("write", "read", "send", "atomic", "imm", "write_send")


def _lat_order(key):
    """Latency groups (test, bytes) by operation (LAT_OPS), then size."""
    op = key[0].rsplit("_", 1)[0]
    return (LAT_OPS.index(op) if op in LAT_OPS else 9, key[1])


def _latency(plt, outdir, meas, stacks):
    """latency.png: latency bars per test and size, and their table."""
    lat = [m for m in meas if m["kind"] in ("lat", "imm_lat")]
    groups = sorted({(m["test"], m["bytes"]) for m in lat}, key=_lat_order)
    fig, (ax, axt) = plt.subplots(2, 1, figsize=(max(8, 1.3 * len(groups) + 3), 8),
                                  gridspec_kw={"height_ratios": [3, 2]})
    width = 0.8 / max(1, len(stacks))
    for k, st in enumerate(stacks):
        xs, ys = [], []
        for g, (test, nbytes) in enumerate(groups):
            m = find(lat, st, test, nbytes)
            if m and m.get("lat_typical_us") is not None:
                xs.append(g + (k - (len(stacks) - 1) / 2) * width)
                ys.append(m["lat_typical_us"])
        bars = ax.bar(xs, ys, width, label=st, color=COLORS.get(st))
        ax.bar_label(bars, labels=[fmt(y) for y in ys], fontsize=6, rotation=90)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{t}\n{size_label(b)}" for t, b in groups], fontsize=8)
    ax.set_ylabel("latency [us] (perftest t_typical, imm-bench median)")
    ax.set_title("one-way latency, lower is better")
    if stacks:
        ax.legend()
    axt.axis("off")
    rows = [[f"{t} {size_label(b)}"] + [fmt((find(lat, st, t, b) or {}).get("lat_typical_us"))
                                         for st in stacks] for t, b in groups]
    if rows:
        tb = axt.table(cellText=rows, colLabels=["test"] + list(stacks), loc="center")
        tb.auto_set_font_size(False)
        tb.set_fontsize(8)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "latency.png"), dpi=90)
    plt.close(fig)
