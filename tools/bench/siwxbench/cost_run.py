"""Running the cost instrument's boots (tools/bench/bench --cost and
--cost-profile): the overlay, one boot per round with every stack on a
link of its own (tests/vm/run --cost), the logs under OUT/logs/cost*."""

import json
import os
import shutil

from . import cost_plan, nfs
from .common import HERE, die, link_of, say
from .layout import round_dir
from .run import run_harness, vm_command

NAME = "cost"   # logs/cost, logs/cost-round2, ...


def make_overlay(a, outdir):
    ov = os.path.join(outdir, "overlay")
    shutil.rmtree(ov, ignore_errors=True)
    os.makedirs(ov)
    shutil.copy2(os.path.join(HERE, "bstep"), ov)
    for prog in ("siwx-imm-bench", "cost/siwx-tcp-bench"):
        path = os.path.join(a.build, "tools", prog)
        if not os.access(path, os.X_OK):
            die(f"--cost needs {path}: build it (cmake --build {a.build})")
        shutil.copy2(path, ov)
    nfs.add_guest_side(ov)
    return ov


def measurements(a):
    if a.cost_profile:
        # A read of NFS needs the write it follows (its file) to run first
        lead = cost_plan.FOLLOWS.get(a.cost_profile)
        return [cost_plan.BY_NAME[n] for n in (lead, a.cost_profile) if n]
    names = a.cost_only or [m.name for m in cost_plan.MEASUREMENTS]
    return [cost_plan.BY_NAME[n] for n in names]


def boot(a, stacks, ov, outdir, rnd):
    """One boot running every cost step of @stacks; returns its log dir."""
    mode = "profile" if a.cost_profile else "counts"
    steps = cost_plan.steps(stacks, measurements(a), mode, a.step_timeout)
    logdir = round_dir(outdir, NAME, rnd)
    os.makedirs(logdir, exist_ok=True)
    with open(os.path.join(logdir, "plan.json"), "w") as f:
        json.dump({"stacks": stacks, "mode": mode, "profile": a.cost_profile,
                   "steps": [s[3] | {"id": s[0]} for s in steps]}, f, indent=1)
    timeout = a.run_timeout or (120 + a.step_timeout + len(steps) * a.step_budget)
    peers = ",".join(dict.fromkeys(link_of(st) for st in stacks))
    cmd = vm_command(a, f"cost-{rnd}", logdir, peers, ov, timeout, steps) + ["--cost", mode]
    say(f"cost: round {rnd} of {a.rounds}: {peers}: {len(steps)} steps "
        f"(limit {timeout} s); logs: {logdir}")
    say(f"cost: harness exit status {run_harness(a, cmd, logdir)}")
    return logdir


def run_all(a, outdir):
    for st in a.stacks:
        if st not in cost_plan.STACKS:
            die(f"--cost: unknown stack '{st}' ({', '.join(cost_plan.STACKS)})")
    ov = make_overlay(a, outdir)
    for rnd in range(1, a.rounds + 1):
        # The stacks take turns being first, as in the timed runs.
        k = (rnd - 1) % len(a.stacks)
        boot(a, a.stacks[k:] + a.stacks[:k], ov, outdir, rnd)
    shutil.rmtree(ov, ignore_errors=True)
