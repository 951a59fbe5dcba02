"""Where a run's logs live: one directory per boot under OUT/logs
(logs/boot, logs/boot-round2, ...; --separate-boots: logs/<stack>,
logs/<stack>-round2, ...) with the boot's plan.json. Shared by the runner,
which writes them, and the parser, which reads them (--report)."""

import json
import os
import re

from .common import SHARED


def round_dir(outdir, name, rnd):
    """Logs of boot @name (a stack, or SHARED) in round @rnd (1-based):
    logs/<name>, then logs/<name>-round2, ... (so --report reads runs of
    one round too)."""
    return os.path.join(outdir, "logs", name if rnd == 1 else f"{name}-round{rnd}")


def round_dirs(outdir, name):
    """Existing round directories of boot @name, in round order."""
    found = []
    for d in os.listdir(os.path.join(outdir, "logs")) if os.path.isdir(
            os.path.join(outdir, "logs")) else []:
        m = re.fullmatch(re.escape(name) + r"-round(\d+)", d)
        if m:
            found.append((int(m.group(1)), os.path.join(outdir, "logs", d)))
    return [round_dir(outdir, name, 1)] + [d for _, d in sorted(found)]


def read_plan(logdir):
    """A boot's plan.json, or None. Plans from before shared boots name
    one "stack" and not each step's."""
    try:
        with open(os.path.join(logdir, "plan.json")) as f:
            plan = json.load(f)
    except (OSError, ValueError):
        return None
    plan.setdefault("stacks", [plan.get("stack")])
    return plan


def stack_dirs(outdir, stack):
    """The boots that ran @stack, in round order: its own, and the
    shared ones whose plan has it."""
    dirs = round_dirs(outdir, stack) + [d for d in round_dirs(outdir, SHARED)
                                        if stack in (read_plan(d) or {}).get("stacks", [])]
    rnd = lambda d: int(re.search(r"-round(\d+)$", d).group(1)) if "-round" in d else 1
    return sorted(dirs, key=rnd)


def read_log(path):
    """A log file as text ("" when missing): guests' consoles carry \\r
    and now and then bytes that are not UTF-8."""
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace").replace("\r", "")
    except OSError:
        return ""
