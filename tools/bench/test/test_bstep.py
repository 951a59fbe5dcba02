"""bstep, the guests' side of a step, run on this host under busybox (the
guests' shell, nc and timeout) with both roles on 127.0.0.1 and a stand-in
for perftest whose clock calibration fails a given number of times."""

import os
import shutil
import socket
import subprocess
import tempfile
import unittest

from siwxbench import parse

BSTEP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bstep")
BUSYBOX = shutil.which("busybox")

# The stand-in: counts its runs per role in $COUNTS; the client's first
# $FAILS - 1 runs print what perftest prints when its calibration failed.
FAKE = """#!/bin/sh
f=$COUNTS.$1
n=$(($(cat "$f" 2>/dev/null || echo 0) + 1))
echo $n >"$f"
sleep 0.5
if [ "$1" = client ] && [ $n -lt "$FAILS" ]; then
	echo "Correlation coefficient r^2: 0.65 < 0.9"
	echo " 65536      20           0.00               0.00 		   0.000000"
else
	echo " 65536      20           1.23               1.23 		   0.002346"
fi
"""


def free_port():
    """A TCP port free on 127.0.0.1 now: ctest runs this beside other
    tests, and package builds run it in their checks at the same time."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@unittest.skipUnless(BUSYBOX, "busybox is not installed")
class Calibration(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="bstep-test-")
        self.addCleanup(shutil.rmtree, self.tmp)
        bindir = os.path.join(self.tmp, "bin")
        os.mkdir(bindir)
        for applet in ("nc", "timeout"):
            os.symlink(BUSYBOX, os.path.join(bindir, applet))
        self.fake = os.path.join(self.tmp, "perftest")
        with open(self.fake, "w") as f:
            f.write(FAKE)
        os.chmod(self.fake, 0o755)
        self.env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}",
                        CLIENT_IP="127.0.0.1", COUNTS=os.path.join(self.tmp, "runs"),
                        BENCH_STACK=f"bstep-test-{os.getpid()}", BENCH_PORT=str(free_port()))
        self.addCleanup(shutil.rmtree, f"/tmp/bench-state-{self.env['BENCH_STACK']}",
                        ignore_errors=True)

    def step(self, fails):
        """Both roles' output of one step whose first fails - 1 client runs
        could not calibrate."""
        env = dict(self.env, FAILS=str(fails))
        cmd = [BUSYBOX, "sh", BSTEP, "{}", "s.write_bw-65536", "30", self.fake, "{}"]
        srv = subprocess.Popen([c.format("server") for c in cmd], env=env,
                               stdout=subprocess.PIPE, text=True)
        cli = subprocess.run([c.format("client") for c in cmd], env=env,
                             stdout=subprocess.PIPE, text=True, timeout=120)
        return srv.communicate(timeout=60)[0], cli.stdout

    def runs(self, role):
        with open(f"{self.env['COUNTS']}.{role}") as f:
            return int(f.read())

    def test_calibrated_runs_once(self):
        srv, cli = self.step(fails=1)
        self.assertEqual((self.runs("server"), self.runs("client")), (1, 1))
        self.assertNotIn("once more", cli + srv)
        self.assertIn("BENCH-END s.write_bw-65536 role=server rc=0 client=0", srv)

    def test_both_sides_run_again_until_calibrated(self):
        srv, cli = self.step(fails=3)
        self.assertEqual((self.runs("server"), self.runs("client")), (3, 3))
        self.assertEqual(cli.count("could not calibrate its clock"), 2)
        # only the last try's output reaches the host's parser
        self.assertNotIn("Correlation coefficient", cli)
        self.assertIn("1.23", cli)
        self.assertIn("BENCH-END s.write_bw-65536 role=server rc=0 client=0", srv)

    def test_gives_up_after_three_tries(self):
        srv, cli = self.step(fails=9)
        self.assertEqual((self.runs("server"), self.runs("client")), (3, 3))
        self.assertEqual(cli.count("Correlation coefficient r^2"), 1)
        lines = cli.splitlines()
        self.assertIsNone(parse.parse_perftest(lines, "bw"))


if __name__ == "__main__":
    unittest.main()
