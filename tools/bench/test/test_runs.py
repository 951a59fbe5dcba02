"""parse and report on two recorded runs of tests/vm/scenarios/bench-smoke
(test/data/run-shared: two boots shared by siwx, siwx-nocrc and
siwx-rsockets; test/data/run-separate: one boot of siwx alone), and on
copies of them broken the ways a boot breaks."""

import csv
import json
import os
import shutil
import tempfile
import unittest
from unittest import mock

from siwxbench import layout, parse, report
from siwxbench.layout import read_log

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
SHARED = os.path.join(DATA, "run-shared")
SEPARATE = os.path.join(DATA, "run-separate")


class RunCopy(unittest.TestCase):
    """Each test gets its own copy of a recorded run (the report writes
    into the run's directory)."""

    def copy(self, run):
        tmp = tempfile.mkdtemp(prefix="bench-test-")
        self.addCleanup(shutil.rmtree, tmp)
        out = os.path.join(tmp, "run")
        shutil.copytree(os.path.join(run, "logs"), os.path.join(out, "logs"))
        return out

    def edit(self, path, old, new, count=1):
        with open(path) as f:
            text = f.read()
        self.assertIn(old, text)
        with open(path, "w") as f:
            f.write(text.replace(old, new, count))


class Blocks(unittest.TestCase):
    def test_client_blocks(self):
        text = read_log(os.path.join(SHARED, "logs", "boot", "guest2.out.log"))
        blocks = parse.split_blocks(text, "client")
        self.assertEqual(len(blocks), 27)
        self.assertEqual(list(blocks)[:3], ["tcp", "siwx.write_bw-65536",
                                            "siwx-nocrc.write_bw-65536"])
        lines, fields = blocks["siwx-nocrc.write_lat-8"]
        self.assertEqual(fields, {"role": "client", "siwx_mpa_crc": "N", "rc": "0"})
        self.assertEqual(parse.parse_perftest(lines, "lat")["lat_typical_us"], 345.15)

    def test_server_blocks(self):
        text = read_log(os.path.join(SHARED, "logs", "boot", "guest1.out.log"))
        fields = parse.split_blocks(text, "server")["tcp"][1]
        self.assertEqual(fields, {"role": "server", "siwx_mpa_crc": "Y", "rc": "0",
                                  "client": "0"})

    def test_cut_short(self):
        text = read_log(os.path.join(SHARED, "logs", "boot", "guest2.out.log"))
        cut = text[:text.index("BENCH-END siwx.read_bw-65536")]
        blocks = parse.split_blocks(cut, "client")
        self.assertEqual(list(blocks)[-1], "siwx.read_bw-65536")
        self.assertEqual(blocks["siwx.read_bw-65536"][1]["status"], "unfinished")
        self.assertEqual(len(blocks), 4)

    def test_end_of_another_step_is_output(self):
        text = "BENCH-BEGIN a role=client\nx\nBENCH-END b role=client rc=0\n"
        lines, fields = parse.split_blocks(text, "client")["a"]
        self.assertEqual(lines, ["x", "BENCH-END b role=client rc=0"])
        self.assertEqual(fields["status"], "unfinished")


class Rounds(RunCopy):
    def test_one_boot_of_the_shared_run(self):
        p = parse.parse_round(SHARED, os.path.join(SHARED, "logs", "boot-round2"), "siwx-nocrc")
        self.assertEqual(p["run"], {"status": "ok", "reason": "", "harness_rc": "0",
                                    "harness_failures": [], "logs": "logs/boot-round2"})
        meas = {m["test"]: m for m in p["measurements"]}
        self.assertEqual(sorted(meas), ["read_bw", "read_lat", "send_bw", "send_lat", "tcp",
                                        "write_bw", "write_bw_ev", "write_lat"])
        self.assertTrue(all(m["status"] == "ok" for m in meas.values()))
        self.assertIs(meas["tcp"]["shared"], True)
        self.assertNotIn("mpa_crc", meas["tcp"])
        self.assertEqual(meas["write_lat"]["mpa_crc"], "N")
        self.assertEqual(meas["write_lat"]["lat_typical_us"], 2463.75)
        self.assertEqual(meas["write_bw_ev"]["bw_gbps"], 0.358784)

    def test_two_boots_merged(self):
        p = parse.parse_stack(SHARED, "siwx")
        self.assertEqual(p["run"]["rounds"], 2)
        m = {x["test"]: x for x in p["measurements"]}
        lat = m["write_lat"]
        self.assertEqual(lat["boots"], ["boot", "boot-round2"])
        self.assertEqual(lat["rounds"]["lat_typical_us"], [348.15, 260.2])
        self.assertAlmostEqual(lat["lat_typical_us"], 304.175)
        self.assertEqual(m["tcp"]["rounds"]["bw_gbps"], [0.3473441488408207, 0.3769383256794824])
        self.assertEqual(len([x for x in p["measurements"] if x["status"] == "ok"]), 17)

    def test_boot_dirs_in_round_order(self):
        out = self.copy(SEPARATE)
        for n in (10, 2):
            shutil.copytree(os.path.join(out, "logs", "siwx"),
                            os.path.join(out, "logs", f"siwx-round{n}"))
        os.makedirs(os.path.join(out, "logs", "siwx-roundx"))
        self.assertEqual([os.path.basename(d) for d in layout.stack_dirs(out, "siwx")],
                         ["siwx", "siwx-round2", "siwx-round10"])
        self.assertEqual(layout.stack_dirs(out, "siw"), [os.path.join(out, "logs", "siw")])
        self.assertIsNone(parse.parse_stack(out, "siw"))
        self.assertEqual(parse.parse_stack(out, "siwx")["run"]["rounds"], 3)

    def test_failures_of_one_boot(self):
        out = self.copy(SEPARATE)
        boot = os.path.join(out, "logs", "siwx")
        # the client of write_lat failed, the boot ended during read_lat,
        # and the harness said why
        self.edit(os.path.join(boot, "guest2.out.log"),
                  "BENCH-END write_lat-8 role=client rc=0",
                  "BENCH-END write_lat-8 role=client rc=1")
        log = read_log(os.path.join(boot, "guest2.out.log"))
        with open(os.path.join(boot, "guest2.out.log"), "w") as f:
            f.write(log[:log.index("BENCH-END read_lat-8")])
        with open(os.path.join(boot, "summary.txt"), "a") as f:
            f.write("FAIL: step 5 timed out after 90 s\n  client: ib_read_lat\nelapsed: 9s\n")
        p = parse.parse_round(out, boot, "siwx")
        st = {m["test"]: (m["status"], m.get("note", "")) for m in p["measurements"]}
        self.assertEqual(st["write_bw"][0], "ok")
        self.assertEqual(st["write_lat"][0], "failed")
        self.assertTrue(st["write_lat"][1].startswith("client rc=1: "), st["write_lat"])
        self.assertEqual(st["read_lat"], ("unfinished", "boot ended during this step"))
        self.assertEqual(st["send_lat"], ("not-run", "boot ended before this step"))
        self.assertEqual(p["run"]["status"], "partial")
        self.assertEqual(p["run"]["harness_failures"],
                         ["step 5 timed out after 90 s\nclient: ib_read_lat"])
        self.assertEqual(p["run"]["reason"], "step 5 timed out after 90 s / client: ib_read_lat")

    def test_no_measurement_succeeded(self):
        out = self.copy(SEPARATE)
        boot = os.path.join(out, "logs", "siwx")
        self.edit(os.path.join(boot, "guest2.out.log"), "role=client rc=0",
                  "role=client rc=1", count=-1)
        p = parse.parse_round(out, boot, "siwx")
        self.assertEqual(p["run"]["status"], "skipped")
        self.assertTrue(p["run"]["reason"].startswith(
            "no RDMA measurement succeeded: write_bw-8 failed (client rc=1: "), p["run"]["reason"])

    def test_without_a_plan(self):
        out = self.copy(SEPARATE)
        os.remove(os.path.join(out, "logs", "siwx", "plan.json"))
        self.assertIsNone(parse.parse_round(out, os.path.join(out, "logs", "siwx"), "siwx"))


class Report(RunCopy):
    """The outputs from the recorded logs are those the bench wrote when
    it ran (expected/: results.csv and summary.md as tools/bench/bench
    wrote them in the guests' run; plots are not drawn here)."""

    def check(self, run):
        out = self.copy(run)
        with open(os.path.join(run, "expected", "meta.json")) as f:
            meta = json.load(f)
        with mock.patch.object(report, "plots", return_value=None), \
                mock.patch.object(report, "say"):
            report.report(out, meta)
        for name in ("results.csv", "summary.md"):
            with self.subTest(name=name):
                self.assertEqual(read_log(os.path.join(out, name)),
                                 read_log(os.path.join(run, "expected", name)))
        with open(os.path.join(out, "results.json")) as f:
            return json.load(f)

    def test_shared_boots(self):
        res = self.check(SHARED)
        self.assertEqual(res["stacks_order"], ["siwx", "siwx-nocrc", "siwx-rsockets"])
        r = next(x for x in res["ratios"] if x["name"] == "siwx-rsockets/siwx"
                 and x["test"] == "rstream_rate")
        self.assertAlmostEqual(r["ratio"], 1.487357036083741)
        self.assertEqual(r["per_boot"], [1.9875105485232067, 1.190136054421769])

    def test_separate_boot(self):
        res = self.check(SEPARATE)
        self.assertEqual(res["stacks_order"], ["siwx"])

    def test_rows_of_what_was_not_measured(self):
        out = self.copy(SEPARATE)
        self.edit(os.path.join(out, "logs", "siwx", "guest2.out.log"),
                  "BENCH-END write_lat-8 role=client rc=0",
                  "BENCH-END write_lat-8 role=client rc=2")
        with mock.patch.object(report, "plots", return_value=None), \
                mock.patch.object(report, "say"):
            report.report(out, {"command": "c", "date": "d", "git": "g", "machine": "m"})
        with open(os.path.join(out, "results.csv")) as f:
            rows = [r for r in csv.reader(f) if r[2] == "write_lat"]
        self.assertEqual(len(rows), 3)   # the measurement, siwx/siw and siwx/rxe
        self.assertEqual(rows[0][:4] + rows[0][5:8], ["measurement", "siwx", "write_lat", "8",
                                                      "", "", "failed"])
        self.assertTrue(rows[0][8].startswith("client rc=2: "), rows[0])
        self.assertEqual(rows[1][:8], ["ratio", "siwx/siw", "write_lat", "8", "lat_typical_us", "",
                                       "x", "missing"])
        summary = read_log(os.path.join(out, "summary.md"))
        self.assertIn("| write_lat | 8 | lat_typical_us | failed | - | - |", summary)
        self.assertIn("## Not measured\n\n- siwx write_lat 8: failed: client rc=2: ", summary)

    def test_plots_note_in_summary(self):
        out = self.copy(SEPARATE)
        note = "plots skipped: python3-matplotlib is not installed (scripts/packages/bench.txt)"
        with mock.patch.object(report, "plots", return_value=note), \
                mock.patch.object(report, "say"):
            report.report(out, {"command": "c", "date": "d", "git": "g", "machine": "m"})
        self.assertTrue(read_log(os.path.join(out, "summary.md")).endswith(f"\n\n{note}\n"))



class NfsSection(unittest.TestCase):
    """summary.md's NFS table: each RDMA stack and TCP, their ratios."""

    def meas(self, stack, test, kind, mibps, status="ok"):
        return {"stack": stack, "test": test, "kind": kind, "bytes": 128 << 20,
                "status": status, "bw_MiBps": mibps}

    def test_table(self):
        meas = [self.meas("siwx", "nfs_write", "nfs", 40.0),
                self.meas("siw", "nfs_write", "nfs", 20.0),
                self.meas("siwx", "nfs_tcp_write", "nfs_tcp", 50.0),
                self.meas("siw", "nfs_tcp_write", "nfs_tcp", 50.0),
                self.meas("siwx", "nfs_read", "nfs", 30.0),
                self.meas("siw", "nfs_read", "nfs", None, status="failed"),
                self.meas("siwx", "nfs_tcp_read", "nfs_tcp", 60.0)]
        res = {"measurements": meas, "stacks_order": ["siw", "siwx", "rxe"]}
        L = report._nfs(res)
        self.assertEqual(L[1], "## NFS (v4.2; MiB/s)")
        self.assertEqual(L[3], "| operation | file | siwx | siw | TCP | siwx/siw | siwx/TCP | "
                               "siw/TCP |")
        self.assertEqual(L[5:], ["| write | 128M | 40 | 20 | 50 | 2 | 0.8 | 0.4 |",
                                 "| read | 128M | 30 | failed | 60 | - | 0.5 | - |"])
        self.assertEqual(report._nfs({"measurements": [], "stacks_order": ["siwx"]}), [])


if __name__ == "__main__":
    unittest.main()
