"""The cost instrument's host side: its steps, the reading of the plugin's
marker lines and bstep's BENCH-COST lines, the cost per unit, the report
and the guard, on logs written here."""

import os
import shutil
import tempfile
import unittest

from siwxbench import cost_guard, cost_parse, cost_plan, cost_profile, cost_report, cost_run


def mark_line(k, ns, **c):
    vals = {f: 0 for f in cost_parse.COUNTERS} | c
    return f"mark {k} {k} {ns} " + " ".join(f"{f}={vals[f]}" for f in cost_parse.COUNTERS)


class Boot:
    """A boot's logs in a temporary directory: each step's counts per side
    given as (path, user) totals at its end, counted from 0 at its begin."""

    def __init__(self, root, name="cost"):
        self.dir = os.path.join(root, "logs", name)
        os.makedirs(self.dir)
        self.out = {1: [], 2: []}
        self.cost = {1: ["siwx-cost 1 classes=84 profile=0"], 2: ["siwx-cost 1 classes=84 profile=0"]}
        self.k = {1: 0, 2: 0}
        self.total = {1: {"path": 0, "user": 0}, 2: {"path": 0, "user": 0}}
        self.steps = []

    def step(self, sid, server, client, rc=0, tbs=None, reps=None):
        stack, meas, which = sid.split(".")
        self.steps.append({"id": sid, "stack": stack, "meas": meas, "which": which})
        for n, role, (path, user) in ((1, "server", server), (2, "client", client)):
            self.out[n].append(f"BENCH-BEGIN {sid} role={role}")
            for what, dp, du in (("begin", 0, 0), ("end", path, user)):
                self.k[n] += 1
                self.total[n]["path"] += dp
                self.total[n]["user"] += du
                self.out[n].append(f"BENCH-COST {sid} role={role} {what} mark={self.k[n]}")
                self.cost[n].append(mark_line(self.k[n], self.k[n] * 1000, **self.total[n]))
                if what == "end" and tbs:
                    self.cost[n] += [f"tb {va:x} {ins} {ex}" for va, ins, ex in tbs[n]]
                if what == "end" and reps:
                    self.cost[n] += reps.get(n, [])
            end = f"BENCH-END {sid} role={role} rc={rc}"
            self.out[n].append(end + (f" client={rc}" if role == "server" else ""))

    def write(self):
        import json
        for n in (1, 2):
            with open(os.path.join(self.dir, f"guest{n}.out.log"), "w") as f:
                f.write("\n".join(self.out[n]) + "\n")
            with open(os.path.join(self.dir, f"guest{n}.cost"), "w") as f:
                f.write("\n".join(self.cost[n]) + "\n")
        with open(os.path.join(self.dir, "plan.json"), "w") as f:
            json.dump({"stacks": ["siwx"], "mode": "counts", "steps": self.steps}, f)


class Temp(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.root)


class Plan(unittest.TestCase):
    def test_steps_of_a_boot(self):
        steps = cost_plan.steps(["siwx", "siw"], [cost_plan.BY_NAME[m] for m in
                                                  ("write_rt", "imm_8", "tcp_rt")], "counts", 300)
        ids = [s[0] for s in steps]
        # siw has no write-with-imm; TCP once, on the first stack's link
        self.assertEqual(ids, ["siwx.write_rt.warm", "siwx.write_rt.n1", "siwx.write_rt.n2",
                               "siw.write_rt.warm", "siw.write_rt.n1", "siw.write_rt.n2",
                               "siwx.imm_8.warm", "siwx.imm_8.n1", "siwx.imm_8.n2",
                               "tcp.tcp_rt.warm", "tcp.tcp_rt.n1", "tcp.tcp_rt.n2"])
        srv, cli = steps[1][1], steps[1][2]
        # both perftest sides get the iteration count; siwx's parameters set
        self.assertIn("ib_write_lat -R -d $DEV -F -s 8 -n 2000", srv)
        self.assertIn("-n 2000 $SERVER_IP", cli)
        self.assertIn("echo 0 > /sys/module/siwx/parameters/crc32c_impl", cli)
        self.assertIn("BENCH_COST=counts", cli)
        self.assertNotIn("mpa_crc", steps[4][2])
        self.assertIn("DEV=$DEV_siwx SERVER_IP=$SERVER_IP_siwx", steps[10][2])

    def test_octets_count_bytes(self):
        m = cost_plan.BY_NAME["tcp_1M"]
        self.assertEqual(cost_plan.units(m, 16), 16 << 20)
        step = cost_plan.steps(["rxe"], [m], "counts", 300)[2]
        self.assertIn(f"-n {48 << 20}", step[2])
        self.assertEqual(cost_plan.units(cost_plan.BY_NAME["write_rt"], 16), 16)

    def test_crc_variants(self):
        pre = {st: cost_plan.steps([st], [cost_plan.BY_NAME["write_1M"]], "counts", 9)[0][2]
               for st in ("siwx-nocrc", "siwx-crc-table")}
        self.assertIn("echo N > /sys/module/siwx/parameters/mpa_crc", pre["siwx-nocrc"])
        self.assertIn("echo 1 > /sys/module/siwx/parameters/crc32c_impl", pre["siwx-crc-table"])
        # the table CRC per octet only; without CRCs per round trip too (siw's peer)
        rt = [cost_plan.BY_NAME["write_rt"]]
        self.assertEqual(cost_plan.steps(["siwx-crc-table"], rt, "counts", 9), [])
        self.assertEqual(len(cost_plan.steps(["siwx-nocrc"], rt, "counts", 9)), 3)
        self.assertEqual(cost_plan.steps(["siwx-nocrc"], [cost_plan.BY_NAME["imm_8"]], "c", 9), [])

    def test_a_profiled_read_brings_its_write(self):
        def names(profile):
            args = type("Args", (), {"cost_profile": profile, "cost_only": None})
            return [m.name for m in cost_run.measurements(args)]
        # NFS reads its file back: the write that made it runs first
        self.assertEqual(names("nfs_read"), ["nfs_write", "nfs_read"])
        self.assertEqual(names("nfs_tcp_read"), ["nfs_tcp_write", "nfs_tcp_read"])
        self.assertEqual(names("write_rt"), ["write_rt"])

    def test_judged_by(self):
        by = {m.name: m.main for m in cost_plan.MEASUREMENTS}
        self.assertEqual((by["write_1M"], by["read_1M"], by["write_send_8"]),
                         ("total", "kernel", "total"))
        self.assertEqual((by["write_rt"], by["imm_rt"], by["send_8"]), ("kernel", "kernel", "kernel"))


class PerUnit(Temp):
    def boot(self, n2_server=(21000, 500), rc=0):
        b = Boot(self.root)
        b.step("siwx.write_rt.warm", (5000, 100), (4000, 100))
        b.step("siwx.write_rt.n1", (9000, 300), (8000, 200))
        b.step("siwx.write_rt.n2", n2_server, (20000, 400), rc=rc)
        b.write()
        return b

    def test_difference_over_difference(self):
        b = self.boot()
        pu = cost_parse.per_unit(cost_parse.step_counts(b.dir), "siwx", "write_rt")
        du = 6000 - 2000
        self.assertAlmostEqual(pu["server"]["kernel"], 12000 / du)
        self.assertAlmostEqual(pu["server"]["total"], (12000 + 200) / du)
        self.assertAlmostEqual(pu["client"]["kernel"], 12000 / du)
        self.assertAlmostEqual(pu["client"]["ns"], 0)   # both windows took 1000 ns

    def test_failed_step_gives_nothing(self):
        b = self.boot(rc=1)
        self.assertIsNone(cost_parse.per_unit(cost_parse.step_counts(b.dir), "siwx", "write_rt"))

    def test_report_and_guard(self):
        self.boot()
        rows = cost_report.write_outputs(self.root, {"command": "x", "date": "d", "git": "g",
                                                     "machine": "m"})
        server = next(r for r in rows if r["side"] == "server")
        self.assertAlmostEqual(server["kernel"], 3.0)
        for f in ("results.csv", "results.json", "summary.md"):
            self.assertTrue(os.path.getsize(os.path.join(self.root, f)) > 0)
        ok = [("siwx", "write_rt", "server", "kernel", 3.0)]
        self.assertEqual(cost_guard.check(rows, ok)[1], [])
        within = [("siwx", "write_rt", "server", "kernel", 3.0 / 1.04)]
        self.assertEqual(cost_guard.check(rows, within)[1], [])
        # the figure 10% above its budget, as a planted rise would make it
        risen = [("siwx", "write_rt", "server", "kernel", 3.0 / 1.10)]
        self.assertEqual(len(cost_guard.check(rows, risen)[1]), 1)
        missing = [("siwx", "imm_8", "sender", "total", 1.0)]
        self.assertIn("not counted", cost_guard.check(rows, missing)[1][0])

    def test_nothing_counted_fails_the_guard(self):
        self.boot(n2_server=(9000, 300))   # N2 counted as much as N1
        rows = cost_report.summarize(cost_report.collect(self.root))
        fails = cost_guard.check(rows, [("siwx", "write_rt", "server", "kernel", 3.0)])[1]
        self.assertIn("not counted", fails[0])


class SameBoot(Temp):
    def boot(self, name, siwx, tcp):
        """A boot whose write_rt and tcp_rt count @siwx and @tcp per round
        trip on each side."""
        b = Boot(self.root, name)
        for stack, meas, v in (("siwx", "write_rt", siwx), ("tcp", "tcp_rt", tcp)):
            m = cost_plan.BY_NAME[meas]
            du = cost_plan.units(m, m.ns[2]) - cost_plan.units(m, m.ns[1])
            b.step(f"{stack}.{meas}.warm", (10, 0), (10, 0))
            b.step(f"{stack}.{meas}.n1", (1000, 0), (1000, 0))
            n2 = 1000 + int(v * du)
            b.step(f"{stack}.{meas}.n2", (n2, 0), (n2, 0))
        b.write()

    def test_ratios_of_the_same_boot(self):
        # medians 3 and 4 (0.75x), but boot by boot 2.0x, 1.0x and 0.5x
        self.boot("cost", 2.0, 1.0)
        self.boot("cost-round2", 4.0, 4.0)
        self.boot("cost-round3", 3.0, 6.0)
        rows = cost_report.write_outputs(self.root, {"command": "x", "date": "d", "git": "g",
                                                     "machine": "m"})
        server = next(r for r in rows if r["stack"] == "siwx" and r["side"] == "server")
        self.assertAlmostEqual(server["vs_tcp"], 0.75)
        self.assertEqual([round(v, 6) for v in server["vs_tcp_boots"]], [2.0, 1.0, 0.5])
        self.assertAlmostEqual(server["vs_tcp_same"], 1.0)
        with open(os.path.join(self.root, "summary.md")) as f:
            self.assertIn("| write_rt | siwx | server | 2.000 1.000 0.500 | 1.000 |", f.read())

    def test_a_boot_without_tcp_gives_no_ratio(self):
        self.boot("cost", 2.0, 1.0)
        b = Boot(self.root, "cost-round2")
        m = cost_plan.BY_NAME["write_rt"]
        du = cost_plan.units(m, m.ns[2]) - cost_plan.units(m, m.ns[1])
        b.step("siwx.write_rt.warm", (10, 0), (10, 0))
        b.step("siwx.write_rt.n1", (1000, 0), (1000, 0))
        b.step("siwx.write_rt.n2", (1000 + 5 * du, 0), (1000 + 5 * du, 0))
        b.write()
        boots = cost_report.collect_boots(self.root)
        rows = cost_report.summarize(cost_report.collect(self.root, boots))
        cost_report.same_boot_ratios(boots, rows)
        server = next(r for r in rows if r["stack"] == "siwx" and r["side"] == "server")
        self.assertEqual([round(v, 6) for v in server["vs_tcp_boots"]], [2.0])


class Budgets(Temp):
    def test_the_tree_s_budgets_parse(self):
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        budgets = cost_guard.read_budgets(os.path.join(here, "cost-budgets.txt"))
        self.assertGreaterEqual(len(budgets), 8)
        for stack, meas, side, figure, value in budgets:
            self.assertIn(meas, cost_plan.BY_NAME)
            self.assertIn(figure, cost_parse.FIGURES)
            self.assertGreater(value, 0)

    def test_bad_line(self):
        path = os.path.join(self.root, "b.txt")
        with open(path, "w") as f:
            f.write("siwx write_rt server kernel\n")
        with self.assertRaises(ValueError):
            cost_guard.read_budgets(path)


class Profile(Temp):
    def test_by_function_and_object(self):
        k = 0xffffffff81000000
        b = Boot(self.root)
        b.step("siwx.write_rt.warm", (1, 1), (1, 1))
        # N1: 100 iterations' blocks, N2: 300 iterations' (per unit: 2x the difference)
        small = {1: [(k + 0x10, 10, 100), (k + 0x2010, 5, 100), (0x401000, 4, 100)],
                 2: [(k + 0x10, 10, 100)]}
        big = {1: [(k + 0x10, 10, 300), (k + 0x2010, 5, 300), (0x401000, 4, 300)],
               2: [(k + 0x10, 10, 300)]}
        b.step("siwx.write_rt.n1", (1, 1), (1, 1), tbs=small)
        b.step("siwx.write_rt.n2", (1, 1), (1, 1), tbs=big)
        b.out[1].append("COST-MODSYM ffffffff81002000 siwx_tx_run [siwx]")
        b.out[1].append("BENCH-MAPS siwx.write_rt.n2 server 00400000-00402000 r-xp 00000000 "
                        "00:02 7 /usr/bin/ib_write_lat")
        b.write()
        with open(os.path.join(b.dir, "kallsyms"), "w") as f:
            f.write(f"{k:x} T tcp_sendmsg\n{k + 0x1000:x} T other\n")
        prof = cost_profile.profile(b.dir, "siwx", "write_rt")
        server = dict(prof["server"][0])
        du = 6000 - 2000
        self.assertAlmostEqual(server["tcp_sendmsg"], 10 * 200 / du)
        self.assertAlmostEqual(server["siwx_tx_run [siwx]"], 5 * 200 / du)
        self.assertAlmostEqual(server["user: ib_write_lat"], 4 * 200 / du)
        self.assertEqual(prof["server"][0][0][0], "tcp_sendmsg")
        with open(os.path.join(self.root, "results.json"), "w") as f:
            f.write("{}")
        cost_profile.write_profile(self.root, "write_rt")
        with open(os.path.join(self.root, "profile.md")) as f:
            text = f.read()
        self.assertIn("| `siwx_tx_run [siwx]` | 0.25 | 33.3% |", text)
        self.assertIn("| `user: ib_write_lat` | 0.2 | 100.0% |", text)
        self.assertIn("| `kernel` | 0.5 | 66.7% |", text)
        self.assertIn("| `[siwx]` | 0.25 | 33.3% |", text)

    def test_rep_iterations_by_caller(self):
        k = 0xffffffff81000000
        b = Boot(self.root)
        b.step("siwx.write_rt.warm", (1, 1), (1, 1))
        # memset_erms's REP, called from __alloc_skb (called from tcp_sendmsg)
        # and from siwx_tx_run; the two return addresses in __alloc_skb differ
        rep = f"rep {k + 0x3004:x}"
        small = {1: [f"{rep} {k + 0x10:x},{k + 0x1010:x} 100", f"{rep} {k + 0x2100:x} 40"]}
        big = {1: [f"{rep} {k + 0x10:x},{k + 0x1010:x} 300", f"{rep} {k + 0x18:x} 100",
                   f"{rep} {k + 0x2100:x} 40"]}
        b.step("siwx.write_rt.n1", (1, 1), (1, 1), tbs={1: [(k, 1, 1)], 2: []}, reps=small)
        b.step("siwx.write_rt.n2", (1, 1), (1, 1), tbs={1: [(k, 1, 1)], 2: []}, reps=big)
        b.step("siwx.read_rt.warm", (1, 1), (1, 1), rc=1)
        b.out[1].append("COST-MODSYM ffffffff81002000 siwx_tx_run [siwx]")
        b.write()
        with open(os.path.join(b.dir, "kallsyms"), "w") as f:
            f.write(f"{k:x} T __alloc_skb\n{k + 0x1000:x} T tcp_sendmsg\n"
                    f"{k + 0x3000:x} T memset_erms\n")
        reps = dict(cost_profile.profile(b.dir, "siwx", "write_rt")["server"][1])
        du = 6000 - 2000
        self.assertAlmostEqual(reps[("memset_erms", "__alloc_skb", "tcp_sendmsg")], 200 / du)
        self.assertAlmostEqual(reps[("memset_erms", "__alloc_skb")], 100 / du)
        self.assertAlmostEqual(reps[("memset_erms", "siwx_tx_run [siwx]")], 0)

    def test_a_failed_step_has_no_profile(self):
        b = Boot(self.root)
        b.step("siwx.write_rt.warm", (1, 1), (1, 1))
        b.step("siwx.write_rt.n1", (1, 1), (1, 1), rc=1, tbs={1: [(1, 1, 1)], 2: []})
        b.step("siwx.write_rt.n2", (1, 1), (1, 1), tbs={1: [(1, 1, 1)], 2: []})
        b.write()
        with open(os.path.join(b.dir, "kallsyms"), "w") as f:
            f.write("ffffffff81000000 T x\n")
        self.assertIsNone(cost_profile.profile(b.dir, "siwx", "write_rt"))


if __name__ == "__main__":
    unittest.main()
