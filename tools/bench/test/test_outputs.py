"""parse: the programs' outputs (perftest, siwx-imm-bench, rstream, NFS steps),
recorded in the QEMU guests (test/data/outputs, test/data/README.md)."""

import os
import unittest

from siwxbench import nfs, parse, rstream
from siwxbench.layout import read_log

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def lines(name):
    return read_log(os.path.join(DATA, "outputs", name)).splitlines()


class Perftest(unittest.TestCase):
    def test_write_bw(self):
        r = parse.parse_perftest(lines("ib_write_bw-65536.log"), "bw")
        self.assertEqual((r["iters"], r["bytes"]), (200, 65536))
        self.assertEqual(r["bw_MiBps"], 22.11)
        self.assertAlmostEqual(r["bw_gbps"], 0.18547212288)    # MiB/s x 8 x 2^20 / 1e9
        self.assertEqual(r["bw_peak_MiBps"], 38.55)
        self.assertEqual(r["msg_rate_mpps"], 0.000354)

    def test_send_bw(self):
        r = parse.parse_perftest(lines("ib_send_bw-65536.log"), "bw")
        self.assertEqual((r["bw_MiBps"], r["bw_peak_MiBps"], r["msg_rate_mpps"]),
                         (23.74, 41.0, 0.00038))

    def test_small_bandwidth_comes_from_the_message_rate(self):
        # ib_atomic_bw prints 0.06 MB/sec: two digits are too few, so the
        # figure is 0.008116 Mmsg/s x 8 B.
        r = parse.parse_perftest(lines("ib_atomic_bw-fetch_add.log"), "bw")
        self.assertEqual((r["iters"], r["bytes"]), (500, 8))
        self.assertAlmostEqual(r["bw_MiBps"], 0.061920166015625)
        self.assertAlmostEqual(r["bw_gbps"], 0.000519424)
        self.assertEqual(r["msg_rate_mpps"], 0.008116)
        self.assertEqual(r["bw_peak_MiBps"], 0.11)

    def test_read_lat(self):
        r = parse.parse_perftest(lines("ib_read_lat-2.log"), "lat")
        self.assertEqual(r, {"iters": 100, "bytes": 2, "lat_typical_us": 671.54,
                             "lat_avg_us": 856.75, "lat_min_us": 449.43, "lat_max_us": 4596.36,
                             "lat_p99_us": 4596.36, "lat_p999_us": 4596.36})

    def test_atomic_lat(self):
        r = parse.parse_perftest(lines("ib_atomic_lat-fetch_add.log"), "lat")
        self.assertEqual((r["bytes"], r["lat_typical_us"], r["lat_avg_us"], r["lat_max_us"]),
                         (8, 762.31, 1086.55, 8177.91))

    def test_percentiles(self):
        # The recorded runs have too few iterations for the 99th and the
        # 99.9th percentile to differ: a row as perftest prints it for more.
        out = lines("ib_read_lat-2.log")
        row = (" 8       3000          200.01         900.00      250.50   \t       260.25      "
               "\t20.00 \t\t400.75 \t\t800.25")
        i = next(i for i, l in enumerate(out) if l.startswith(" 2 "))
        r = parse.parse_perftest(out[:i] + [row] + out[i + 1:], "lat")
        self.assertEqual((r["iters"], r["lat_p99_us"], r["lat_p999_us"]), (3000, 400.75, 800.25))

    def test_no_results_row(self):
        out = lines("ib_write_bw-65536.log")
        cut = [l for l in out if not l.startswith(" 65536")]
        self.assertIsNone(parse.parse_perftest(cut, "bw"))
        self.assertIsNone(parse.parse_perftest(out[:5], "bw"))     # no '#bytes' header
        self.assertIsNone(parse.parse_perftest([], "lat"))


    def test_uncalibrated_clock_has_no_row(self):
        self.assertIsNone(parse.parse_perftest(lines("ib_write_bw-4096-uncalibrated.log"), "bw"))


class Measure(unittest.TestCase):
    """One step's measurement from its client's and server's blocks."""
    STEP = {"id": "siwx.write_bw-4096", "test": "write_bw", "kind": "bw", "bytes": 4096,
            "stack": "siwx"}

    def measure(self, out, cfields, sfields=None, stack="siwx"):
        cli = {self.STEP["id"]: (out, cfields)}
        srv = {self.STEP["id"]: ([], sfields or {"rc": "0"})}
        return parse.measure(stack, self.STEP, "boot-round2", cli, srv)

    def test_ok(self):
        m = self.measure(lines("ib_write_bw-65536.log"),
                         {"rc": "0", "siwx_mpa_crc": "Y"}, {"rc": "0", "siwx_mpa_crc": "Y"})
        self.assertEqual((m["status"], m["mpa_crc"], m["boot"], m["bw_MiBps"]),
                         ("ok", "Y", "boot-round2", 22.11))
        # the order of the keys is the order of the CSV's rows
        self.assertEqual(list(m)[:8], ["stack", "test", "kind", "bytes", "step", "boot",
                                       "mpa_crc", "iters"])

    def test_copies_per_payload_octet(self):
        def counters(tx, tx_siwx, tx_tcp, tx_crc, rx, rx_siwx, rx_crc):
            vals = (tx, tx_siwx, tx_tcp, tx_crc, rx, rx_siwx, rx_crc)
            return {f"siwx_{k}": str(v) for k, v in zip(parse.COPY_COUNTERS, vals)}
        # The writer (client) stages and TCP copies, with CRCs; the server
        # sent only a little (no payload to speak of) and placed it all
        cli = {"rc": "0", **counters(4096, 4096, 4096, 4096, 0, 0, 0)}
        srv = {"rc": "0", **counters(0, 0, 0, 0, 4096, 4096, 4096)}
        m = self.measure(lines("ib_write_bw-65536.log"), cli, srv)
        self.assertEqual((m["copies_tx"], m["crc_tx"], m["copies_rx"], m["crc_rx"]),
                         (2.0, 1.0, 1.0, 1.0))
        self.assertNotIn("passes_tx", m)
        # With the fused counters: the CRC read in the copy's pass is no
        # extra trip; one read on its own is
        cli["siwx_tx_crc_fused"] = "4096"
        srv["siwx_rx_crc_fused"] = "0"
        m = self.measure(lines("ib_write_bw-65536.log"), cli, srv)
        self.assertEqual((m["passes_tx"], m["passes_rx"]), (2.0, 2.0))
        srv["siwx_rx_crc_fused"] = "4096"
        m = self.measure(lines("ib_write_bw-65536.log"), cli, srv)
        self.assertEqual(m["passes_rx"], 1.0)
        # Zero-copy octets the stack copied after all are copies
        cli.update(siwx_tx_copied_siwx="0", siwx_tx_copied_tcp="0",
                   siwx_tx_zerocopy_copied="2048")
        m = self.measure(lines("ib_write_bw-65536.log"), cli, srv)
        self.assertEqual(m["copies_tx"], 0.5)
        self.assertNotIn("stage_reuse_tx", m)
        # Stage pages: the share reused
        cli.update(siwx_tx_stage_new="1", siwx_tx_stage_reused="3")
        m = self.measure(lines("ib_write_bw-65536.log"), cli, srv)
        self.assertEqual(m["stage_reuse_tx"], 0.75)
        # Without counters (another stack, or no debugfs): no such figures
        m = self.measure(lines("ib_write_bw-65536.log"), {"rc": "0"})
        self.assertNotIn("copies_tx", m)
        # A counter missing or garbled: that guest does not count
        bad = dict(cli, siwx_tx_crc="x")
        m = self.measure(lines("ib_write_bw-65536.log"), bad, srv)
        self.assertEqual((m.get("copies_tx"), m["copies_rx"]), (None, 1.0))

    def test_uncalibrated_exit_0_is_a_failure(self):
        m = self.measure(lines("ib_write_bw-4096-uncalibrated.log"), {"rc": "0"})
        self.assertEqual(m["status"], "failed")
        self.assertTrue(m["note"].startswith("perftest could not calibrate its clock"))

    def test_failed_client_and_server(self):
        m = self.measure(lines("ib_write_bw-4096-uncalibrated.log"), {"rc": "1"}, {"rc": "1"})
        self.assertEqual(m["status"], "failed")
        self.assertEqual(m["note"], "client rc=1, server rc=1: "
                         "GID: 82:84:00:94:00:01:00:00:00:00:00:00:00:00:00:00 | "
                         "#bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   "
                         "MsgRate[Mpps] | Correlation coefficient r^2: 0.685159 < 0.9 | "
                         "Can't produce a report")

    def test_program_missing(self):
        out = ["timeout: failed to run command 'ib_write_bw': No such file or directory"]
        m = self.measure(out, {"rc": "127"})
        self.assertIn("client rc=127 (program missing from the guest image): timeout:",
                      m["note"])

    def test_wrong_crc_setting(self):
        m = self.measure(lines("ib_write_bw-65536.log"), {"rc": "0", "siwx_mpa_crc": "Y"},
                         {"rc": "0", "siwx_mpa_crc": "N"}, stack="siwx-nocrc")
        self.assertEqual((m["status"], m["mpa_crc"]), ("failed", "N/Y"))
        self.assertEqual(m["note"], "ran with siwx mpa_crc=N/Y, not N on both guests as "
                                    "siwx-nocrc asks")

    def test_skipped_not_run_unfinished(self):
        m = self.measure([], {"status": "skipped", "reason": "first-measurement-failed(x)"})
        self.assertEqual((m["status"], m["note"]), ("skipped", "first-measurement-failed(x)"))
        m = parse.measure("siwx", self.STEP, "boot", {}, {})
        self.assertEqual((m["status"], m["note"]), ("not-run", "boot ended before this step"))
        m = self.measure(lines("ib_write_bw-65536.log")[:3], {"status": "unfinished"})
        self.assertEqual((m["status"], m["note"]), ("unfinished", "boot ended during this step"))


class Iperf3(unittest.TestCase):
    def test_json_report(self):
        r = parse.parse_iperf3(lines("iperf3-client-2s.json"))
        self.assertEqual(r, {"bw_gbps": 0.34734414884082073, "bw_MiBps": 41.40664921293506,
                             "sender_gbps": 0.349731477996248, "seconds": 2.019446,
                             "retransmits": 0})

    def test_without_the_sender_sum(self):
        out = lines("iperf3-client-2s.json")
        text = "\n".join(out).replace('"sum_sent"', '"sum_sent_not"')
        r = parse.parse_iperf3(text.splitlines())
        self.assertEqual((r["sender_gbps"], r["retransmits"]), (0.0, None))

    def test_broken_json(self):
        out = lines("iperf3-client-2s.json")
        self.assertIsNone(parse.parse_iperf3(out[:40]))        # cut short: no closing brace
        self.assertIsNone(parse.parse_iperf3(out[:40] + ["}"]))  # not JSON
        self.assertIsNone(parse.parse_iperf3(['{"start": {}, "end": {}}']))  # no sum_received
        self.assertIsNone(parse.parse_iperf3(["iperf3: error - unable to connect to server"]))


class ImmBench(unittest.TestCase):
    def test_lat(self):
        self.assertEqual(parse.parse_imm(lines("imm-lat-imm-8.log")),
                         {"iters": 50, "bytes": 8, "lat_typical_us": 465.04,
                          "lat_avg_us": 1018.034, "lat_p99_us": 4989.916})

    def test_rate(self):
        r = parse.parse_imm(lines("imm-rate-imm-4096.log"))
        self.assertEqual((r["iters"], r["bytes"], r["msgs_per_s"], r["bw_MBps"]),
                         (500, 4096, 2326.3, 9.529))
        self.assertAlmostEqual(r["msg_rate_mpps"], 0.0023263)

    def test_bw_with_completion_events(self):
        r = parse.parse_imm(lines("imm-bw-write-65536-events.log"))
        self.assertEqual((r["iters"], r["bytes"], r["msgs_per_s"]), (40, 65536, 322.7))
        self.assertAlmostEqual(r["bw_MiBps"], 20.169258117675781)   # MB/s 21.149 in MiB/s
        self.assertAlmostEqual(r["bw_gbps"], 0.169192)

    def test_a_stalled_run_has_no_result(self):
        self.assertIsNone(parse.parse_imm(lines("imm-stalled.log")))

    def test_short_result_line(self):
        self.assertIsNone(parse.parse_imm(["result,lat,imm,8,50,465.040,1018.034"]))

    def test_last_result_counts(self):
        r = parse.parse_imm(lines("imm-lat-imm-8.log") + ["result,lat,imm,8,9,1,2,3"])
        self.assertEqual((r["iters"], r["lat_typical_us"]), (9, 1.0))


class Rstream(unittest.TestCase):
    def test_bw(self):
        r = rstream.parse(lines("rstream-custom-65536.log"), "rs_bw", 65536)
        self.assertEqual((r["iters"], r["xfers"], r["bytes"], r["seconds"]), (1, 100, 65536, 0.81))
        # 2 x 1 x 100 x 64 KiB in 0.81 s, not the 0.13 printed
        self.assertAlmostEqual(r["bw_gbps"], 0.12945382716049383)

    def test_lat_and_rate(self):
        out = lines("rstream-custom-65536.log")
        self.assertEqual(rstream.parse(out, "rs_lat", 65536)["lat_avg_us"], 4044.55)
        rate = rstream.parse(out, "rs_rate", 65536)
        self.assertEqual(rate["usec_per_xfer"], 4044.55)
        self.assertAlmostEqual(rate["msg_rate_mpps"], 1 / 4044.55)

    def test_lat_64(self):
        r = rstream.parse(lines("rstream-lat-64.log"), "rs_lat", 64)
        self.assertEqual(r, {"iters": 100, "xfers": 1, "bytes": 64, "seconds": 0.24,
                             "lat_avg_us": 1210.97})

    def test_rate_64(self):
        r = rstream.parse(lines("rstream-rate-64-patched.log"), "rs_rate", 64)
        self.assertEqual((r["iters"], r["xfers"], r["usec_per_xfer"]), (2, 256, 59.25))
        self.assertEqual(r["msg_rate_mpps"], 1 / 59.25)

    def test_counts(self):
        self.assertEqual([rstream.count(s) for s in ("1", "1k", "20", "3m")],
                         [1, 1000, 20, 3000000])

    def test_no_row(self):
        self.assertIsNone(rstream.parse(lines("rstream-custom-65536.log")[:1], "rs_lat", 64))
        self.assertIsNone(rstream.parse(["rstream: connect: Connection refused"], "rs_bw", 64))



class Nfs(unittest.TestCase):
    def test_write_over_rdma(self):
        r = parse.parse_output("nfs", lines("nfs-bw-write-rdma-32M.log"), 32 << 20)
        self.assertEqual((r["bytes"], r["seconds"]), (32 << 20, 1.99))
        self.assertAlmostEqual(r["bw_MiBps"], 32 / 1.99)
        self.assertAlmostEqual(r["bw_gbps"], (32 << 20) * 8 / 1.99 / 1e9)

    def test_read_over_tcp(self):
        r = parse.parse_output("nfs_tcp", lines("nfs-bw-read-tcp-32M.log"), 32 << 20)
        self.assertAlmostEqual(r["bw_MiBps"], 32 / 1.68)

    def test_no_or_broken_result_line(self):
        self.assertIsNone(nfs.parse(["FAIL: /mnt/bench is not over rdma: ''"]))
        self.assertIsNone(nfs.parse(["nfs-bw,write,rdma,33554432"]))
        self.assertIsNone(nfs.parse(["nfs-bw,write,rdma,33554432,0"]))   # too fast to time


if __name__ == "__main__":
    unittest.main()
