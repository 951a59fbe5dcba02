"""run.vm_command: the release and the NIC reach tests/vm/run, with every
step's server and client command in order."""

import argparse
import unittest

from siwxbench import run


class VmCommand(unittest.TestCase):
    def test_distro_nic_and_steps(self):
        a = argparse.Namespace(distro="trixie", nic="e1000")
        steps = [("s1", "srv one", "cli one", {}), ("s2", "srv two", "cli two", {})]
        cmd = run.vm_command(a, "bench-boot-1", "/logs", "siwx,siw", "/ov", 600, steps)
        self.assertTrue(cmd[0].endswith("tests/vm/run"))
        self.assertEqual(cmd[1:5], ["--distro", "trixie", "--nic", "e1000"])
        self.assertEqual(cmd[cmd.index("--peer1") + 1], "siwx,siw")
        self.assertEqual(cmd[cmd.index("--timeout") + 1], "600")
        tail = cmd[cmd.index("--timeout") + 2:]
        self.assertEqual(tail, ["--server", "srv one", "--client", "cli one",
                                "--server", "srv two", "--client", "cli two"])


if __name__ == "__main__":
    unittest.main()
