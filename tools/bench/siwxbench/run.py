"""Running the benchmark in the QEMU guests: the overlay the guests see
(bstep, siwx-imm-bench, the patched librdmacm), one boot of the
guest pair per stack set (tests/vm/run), the rounds of boots, and the
run's metadata."""

import datetime
import json
import os
import shlex
import shutil
import subprocess

from . import nfs, rstream
from .common import HERE, SHARED, STACKS, TOP, link_of, say
from .layout import read_log, round_dir, round_dirs
from .plan import interleave, make_plan


def make_overlay(a, outdir):
    """The directory the guests see as /overlay (bstep, and the NFS
    script when NFS is measured); returns it and which
    optional programs it has (make_plan leaves out the others' steps)."""
    ov = os.path.join(outdir, "overlay")
    shutil.rmtree(ov, ignore_errors=True)
    os.makedirs(ov)
    shutil.copy2(os.path.join(HERE, "bstep"), ov)
    imm = os.path.join(a.build, "tools", "siwx-imm-bench")
    have = {"imm": os.access(imm, os.X_OK), "rsockets": False, "rsockets_why": ""}
    if have["imm"]:
        shutil.copy2(imm, ov)
    if a.rstream and "siwx-rsockets" in a.stacks:
        have["rsockets"], have["rsockets_why"] = rstream.add_patched(ov, a.build)
    if a.nfs:
        nfs.add_guest_side(ov)
    return ov, have


def boot_steps(a, stacks, have, rnd, shared):
    """The steps of one boot running @stacks, and what they cannot run."""
    plans, unsupported = [], []
    for i, st in enumerate(stacks):
        steps, unsup = make_plan(a, st, have, shared=shared, tcp=i == 0, rnd=rnd)
        plans.append(steps)
        unsupported += unsup
    return (interleave(plans) if shared else plans[0]), unsupported


def vm_command(a, name, logdir, peers, ov, timeout, steps):
    """tests/vm/run's command line for one boot of @steps."""
    cmd = [os.path.join(TOP, "tests", "vm", "run"), "--distro", a.distro, "--nic", a.nic,
           "--name", name, "--logdir", logdir, "--peer1", peers, "--peer2", peers,
           "--overlay", ov, "--timeout", str(timeout)]
    for _, srv, cli, _ in steps:
        cmd += ["--server", srv, "--client", cli]
    return cmd


def boot(a, stacks, ov, have, outdir, rnd, shared):
    """One boot of the guest pair running @stacks (@shared: on a link
    each, logs/boot*; else one stack, logs/<stack>*); returns the
    harness' exit status and its log directory."""
    steps, unsupported = boot_steps(a, stacks, have, rnd, shared)
    name = SHARED if shared else stacks[0]
    logdir = round_dir(outdir, name, rnd)
    os.makedirs(logdir, exist_ok=True)
    with open(os.path.join(logdir, "plan.json"), "w") as f:
        json.dump({"stacks": stacks, "steps": [s[3] | {"id": s[0]} for s in steps],
                   "unsupported": unsupported}, f, indent=1)
    timeout = a.run_timeout or (120 + a.step_timeout + len(steps) * a.step_budget)
    peers = ",".join(dict.fromkeys(link_of(st) for st in stacks))
    cmd = vm_command(a, f"bench-{name}-{rnd}", logdir, peers, ov, timeout, steps)
    say(f"{peers}: round {rnd} of {a.rounds}: one boot, {len(steps)} steps "
        f"(limit {timeout} s); logs: {logdir}")
    rc = run_harness(a, cmd, logdir)
    say(f"{peers}: harness exit status {rc}")
    return rc, logdir


def run_harness(a, cmd, logdir):
    """tests/vm/run's @cmd, its output into @logdir/run.log, its exit
    status into @logdir/harness-rc (and returned)."""
    env = dict(os.environ, SIWX_BUILD_DIR=a.build)
    with open(os.path.join(logdir, "run.log"), "w") as log:
        rc = subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    with open(os.path.join(logdir, "harness-rc"), "w") as f:
        f.write(f"{rc}\n")
    return rc


def run_round(a, ov, have, outdir, rnd):
    """Round @rnd: one boot with every stack (their order rotating from
    round to round), or one per stack when asked or when that boot
    could not be set up."""
    k = (rnd - 1) % len(a.stacks)
    stacks = a.stacks[k:] + a.stacks[:k]
    if not a.separate_boots:
        rc, logdir = boot(a, stacks, ov, have, outdir, rnd, True)
        if rc == 0 or len(stacks) == 1 or \
                "could not be set up" not in read_log(os.path.join(logdir, "summary.txt")):
            return
        kept = logdir + ".setup-failed"
        shutil.rmtree(kept, ignore_errors=True)
        os.rename(logdir, kept)
        say(f"the boot with every stack could not be set up (logs: {kept}): one boot per stack")
    for st in stacks:
        boot(a, [st], ov, have, outdir, rnd, False)


def clear_logs(outdir):
    """Remove the boots' logs of an earlier run into the same --out, so
    that the report parses this run's boots only."""
    for name in STACKS + (SHARED,):
        for d in round_dirs(outdir, name):
            shutil.rmtree(d, ignore_errors=True)
            shutil.rmtree(d + ".setup-failed", ignore_errors=True)


def git_desc():
    try:
        rev = subprocess.run(["git", "-C", TOP, "describe", "--always", "--dirty"],
                             capture_output=True, text=True, timeout=20).stdout.strip()
        return rev or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def run_meta(a, argv):
    """What results.json and summary.md say about the run: the command,
    when, the tree, the machine, the options."""
    return {"command": " ".join(shlex.quote(x) for x in ["tools/bench/bench"] + argv[1:]),
            "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "git": git_desc(), "machine": f"{os.cpu_count()} cores, QEMU TCG guests "
            f"(1 vCPU, 1 GiB each, Debian {a.distro}), {a.nic} links over Unix stream sockets, "
            + ("one boot per stack" if a.separate_boots else "one link per stack in each boot"),
            "options": {k: v for k, v in vars(a).items() if k not in ("report",)}}


def run_all(a, outdir):
    """Every round's boots into @outdir (the overlay removed afterwards)."""
    ov, have = make_overlay(a, outdir)
    if a.imm and not have["imm"]:
        say(f"{a.build}/tools/siwx-imm-bench not built: write-with-imm figures skipped")
    # The stacks take turns step by step (or, in separate boots, boot by
    # boot), so that a slow spell of the host does not fall on one only.
    for rnd in range(1, a.rounds + 1):
        run_round(a, ov, have, outdir, rnd)
    shutil.rmtree(ov, ignore_errors=True)
