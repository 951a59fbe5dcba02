"""stats: medians over boots, ratios between stacks and to TCP, targets."""

import unittest

from siwxbench import stats


def m(stack, test, kind, nbytes, boot="boot", status="ok", **figs):
    """A measurement as parse.parse_round makes it."""
    out = {"stack": stack, "test": test, "kind": kind, "bytes": nbytes, "step": f"{stack}.{test}",
           "boot": boot}
    out.update(figs, status=status)
    return out


def run(status="ok", reason="", fails=()):
    return {"status": status, "reason": reason, "harness_rc": "0",
            "harness_failures": list(fails), "logs": "logs/boot"}


def part(meas, status="ok", reason="", fails=()):
    return {"run": run(status, reason, fails), "measurements": meas}


class MergeRounds(unittest.TestCase):
    def test_median_of_three_boots_keeps_every_value(self):
        boots = ("boot", "boot-round2", "boot-round3")
        parts = [part([m("siwx", "write_lat", "lat", 8, b, iters=3000, lat_typical_us=v,
                         lat_avg_us=v + 1)])
                 for b, v in zip(boots, (10.0, 30.0, 20.0))]
        merged = stats.merge_rounds(parts)
        [w] = merged["measurements"]
        self.assertEqual(w["lat_typical_us"], 20.0)
        self.assertEqual(w["lat_avg_us"], 21.0)
        self.assertEqual(w["iters"], 3000)
        self.assertEqual(w["rounds"]["lat_typical_us"], [10.0, 30.0, 20.0])
        self.assertEqual(w["boots"], list(boots))
        self.assertEqual(w["bytes"], 8)        # not a figure: not in rounds
        self.assertNotIn("bytes", w["rounds"])
        self.assertEqual(merged["run"]["rounds"], 3)
        self.assertEqual(merged["run"]["status"], "ok")

    def test_median_of_two_is_their_mean(self):
        parts = [part([m("siwx", "tcp", "tcp", None, b, shared=True, bw_gbps=v)])
                 for b, v in (("boot", 1.0), ("boot-round2", 2.0))]
        [t] = stats.merge_rounds(parts)["measurements"]
        self.assertEqual(t["bw_gbps"], 1.5)
        self.assertIs(t["shared"], True)       # a flag, not a figure
        self.assertNotIn("shared", t["rounds"])

    def test_failed_boot_is_left_out_and_noted(self):
        parts = [part([m("siwx", "read_lat", "lat", 8, "boot", lat_typical_us=4.0)]),
                 part([m("siwx", "read_lat", "lat", 8, "boot-round2", status="failed",
                         note="client rc=1: x")], status="partial", reason="r2",
                      fails=["step 3 timed out"]),
                 part([m("siwx", "read_lat", "lat", 8, "boot-round3", lat_typical_us=8.0)])]
        merged = stats.merge_rounds(parts)
        [r] = merged["measurements"]
        self.assertEqual(r["lat_typical_us"], 6.0)
        self.assertEqual(r["rounds"]["lat_typical_us"], [4.0, 8.0])
        self.assertEqual(r["boots"], ["boot", "boot-round3"])
        self.assertEqual(r["note"], "median of 2 of 3 boots (the others: client rc=1: x)")
        self.assertEqual(merged["run"]["status"], "partial")
        self.assertEqual(merged["run"]["reason"], "round 2: partial: r2")
        self.assertEqual(merged["run"]["harness_failures"], ["step 3 timed out"])

    def test_no_boot_succeeded_keeps_the_first(self):
        first = m("siw", "send_bw", "bw", 8, "boot", status="not-run", note="n1")
        parts = [part([first], status="skipped", reason="a"),
                 part([m("siw", "send_bw", "bw", 8, "boot-round2", status="failed", note="n2")],
                      status="skipped", reason="b")]
        merged = stats.merge_rounds(parts)
        self.assertIs(merged["measurements"][0], first)
        self.assertEqual(merged["run"]["status"], "skipped")
        self.assertEqual(merged["run"]["reason"], "round 1: skipped: a; round 2: skipped: b")


class MergeRepeats(unittest.TestCase):
    def test_runs_in_one_boot_averaged(self):
        meas = [m("siwx", "imm_lat", "imm_lat", 8, lat_typical_us=10.0, iters=3000),
                m("siwx", "write_send_lat", "imm_lat", 8, lat_typical_us=12.0),
                m("siwx", "write_send_lat", "imm_lat", 8, lat_typical_us=16.0),
                m("siwx", "imm_lat", "imm_lat", 8, lat_typical_us=14.0, iters=3000)]
        imm, ws = stats.merge_repeats(meas)
        self.assertEqual((imm["test"], imm["lat_typical_us"], imm["iters"]),
                         ("imm_lat", 12.0, 3000))
        self.assertEqual((ws["test"], ws["lat_typical_us"]), ("write_send_lat", 14.0))
        self.assertEqual(imm["repeats"], 2)
        self.assertNotIn("rounds", imm)     # per-boot values are merge_rounds'

    def test_a_failed_run_is_left_out_and_noted(self):
        meas = [m("siwx", "imm_rate", "imm_rate", 8, msg_rate_mpps=0.5),
                m("siwx", "imm_rate", "imm_rate", 8, status="failed", note="client rc=1")]
        [r] = stats.merge_repeats(meas)
        self.assertEqual((r["status"], r["msg_rate_mpps"], r["repeats"]), ("ok", 0.5, 1))
        self.assertEqual(r["note"], "mean of 1 of 2 runs in this boot (the others: client rc=1)")

    def test_single_runs_untouched(self):
        one = m("siwx", "write_lat", "lat", 8, lat_typical_us=3.0)
        failed = [m("siw", "imm_lat", "imm_lat", 8, status="failed", note="a"),
                  m("siw", "imm_lat", "imm_lat", 8, status="failed", note="b")]
        out = stats.merge_repeats([one] + failed)
        self.assertIs(out[0], one)
        self.assertIs(out[1], failed[0])    # none succeeded: the first, as it is
        self.assertEqual(len(out), 2)

    def test_boots_of_averaged_runs_merge_by_median(self):
        parts = [part(stats.merge_repeats(
            [m("siwx", "imm_lat", "imm_lat", 8, b, lat_typical_us=v) for v in vals]))
            for b, vals in (("boot", (10.0, 20.0)), ("boot-round2", (30.0, 50.0)),
                            ("boot-round3", (12.0, 14.0)))]
        [r] = stats.merge_rounds(parts)["measurements"]
        self.assertEqual(r["rounds"]["lat_typical_us"], [15.0, 40.0, 13.0])
        self.assertEqual(r["lat_typical_us"], 15.0)


def boot_pair(test, kind, nbytes, metric, siwx, ref, ref_stack="siw"):
    """@test measured in two shared boots on siwx and @ref_stack, merged."""
    out = []
    for st, vals in (("siwx", siwx), (ref_stack, ref)):
        parts = [part([m(st, test, kind, nbytes, b, **{metric: v})])
                 for b, v in zip(("boot", "boot-round2"), vals)]
        out += stats.merge_rounds(parts)["measurements"]
    return out


class Ratios(unittest.TestCase):
    def test_ratio_of_medians_and_per_boot(self):
        meas = boot_pair("write_lat", "lat", 8, "lat_typical_us", (10.0, 30.0), (20.0, 20.0))
        [r, rxe] = [x for x in stats.compute_ratios(meas)]
        self.assertEqual((r["name"], r["metric"]), ("siwx/siw", "lat_typical_us"))
        self.assertEqual(r["ratio"], 1.0)                # 20 / 20
        self.assertEqual(r["per_boot"], [0.5, 1.5])
        self.assertEqual((rxe["name"], rxe["ref"], rxe["ratio"]), ("siwx/rxe", None, None))

    def test_bandwidth_has_message_rate_and_tcp(self):
        meas = [m("siwx", "write_bw", "bw", 65536, bw_gbps=0.3, msg_rate_mpps=0.0006),
                m("siw", "write_bw", "bw", 65536, bw_gbps=0.2, msg_rate_mpps=0.0004),
                m("siw", "tcp", "tcp", None, bw_gbps=1.2)]
        rs = stats.compute_ratios(meas)
        got = {(r["name"], r["metric"]): r["ratio"] for r in rs}
        self.assertAlmostEqual(got[("siwx/siw", "bw_gbps")], 1.5)
        self.assertAlmostEqual(got[("siwx/siw", "msg_rate_mpps")], 1.5)
        self.assertIsNone(got[("siwx/rxe", "bw_gbps")])
        # siwx has no TCP figure of its own: the first boot's that has one
        self.assertAlmostEqual(got[("siwx/TCP", "bw_gbps")], 0.25)
        # one boot only: no per-boot ratios
        self.assertTrue(all(r.get("per_boot") is None for r in rs))
        # a variant stack that was not measured gets no rows
        self.assertFalse([r for r in rs if r["name"].startswith("siwx-nocrc")])

    def test_nfs_against_nfs_over_tcp(self):
        mib = 128 << 20
        meas = [m("siwx", "nfs_write", "nfs", mib, bw_gbps=0.4),
                m("siw", "nfs_write", "nfs", mib, bw_gbps=0.2),
                m("siwx", "nfs_tcp_write", "nfs_tcp", mib, bw_gbps=0.5, shared=True),
                m("siwx", "tcp", "tcp", None, bw_gbps=2.0)]
        got = {(r["name"], r["test"]): r["ratio"] for r in stats.compute_ratios(meas)}
        self.assertAlmostEqual(got[("siwx/siw", "nfs_write")], 2.0)
        self.assertAlmostEqual(got[("siwx/TCP", "nfs_write")], 0.8)   # NFS's TCP, not iperf3's
        self.assertFalse([k for k in got if k[1] == "nfs_tcp_write"])
        self.assertEqual(stats.primary({"kind": "nfs_tcp"})[0], "bw_gbps")

    def test_tcp_reference_prefers_the_same_boot(self):
        mib = 128 << 20
        meas = [m("siw", "nfs_tcp_read", "nfs_tcp", mib, "siw-boot", bw_gbps=0.3),
                m("siwx", "nfs_tcp_read", "nfs_tcp", mib, "siwx-boot", status="error"),
                m("siwx", "nfs_tcp_read", "nfs_tcp", mib, "siwx-boot2", bw_gbps=0.5)]
        self.assertEqual(stats.tcp_reference(meas, "siwx", "nfs_tcp_read")["bw_gbps"], 0.5)
        # none of its own that passed: the first boot's that did
        self.assertEqual(stats.tcp_reference(meas[:2], "siwx", "nfs_tcp_read")["bw_gbps"], 0.3)
        self.assertIsNone(stats.tcp_reference(meas[1:2], "siwx", "nfs_tcp_read"))

    def test_zero_reference_is_no_ratio(self):
        self.assertIsNone(stats.ratio(1.0, 0))
        self.assertIsNone(stats.ratio(None, 2.0))
        self.assertEqual(stats.ratio(3.0, 2.0), 1.5)

    def test_primary_metric_by_kind(self):
        self.assertEqual(stats.primary({"kind": "rs_lat", "lat_avg_us": 5})[:2], ("lat_avg_us", 5))
        self.assertEqual(stats.primary({"kind": "imm_rate"})[0], "msg_rate_mpps")
        self.assertEqual(stats.primary({"kind": "bw_ev"})[2:], ("Gbit/s", True))
        self.assertEqual(stats.primary({"kind": "lat"})[2:], ("us", False))


class Targets(unittest.TestCase):
    def targets(self, meas, sizes):
        return {t["name"]: t for t in stats.compute_targets(meas, sizes)}

    def test_throughput_is_the_worst_size(self):
        meas = [m(st, "write_bw", "bw", s, bw_gbps=v) for st, s, v in (
            ("siwx", 65536, 0.6), ("siw", 65536, 0.5), ("siwx", 1 << 20, 0.9),
            ("siw", 1 << 20, 1.0),
            ("siwx", 8, 0.1), ("siw", 8, 0.01))]
        t = self.targets(meas, [8, 65536, 1 << 20])["write_bw>=siw"]
        self.assertAlmostEqual(t["value"], 0.9)
        self.assertIs(t["met"], False)
        self.assertEqual(t["detail"], "64K: 1.20, 1M: 0.90")
        self.assertEqual(t["reference"], {"siwx-nocrc": None})
        # read was not measured at all
        r = self.targets(meas, [8, 65536, 1 << 20])["read_bw>=siw"]
        self.assertIsNone(r["value"])
        self.assertIsNone(r["met"])
        self.assertEqual(r["detail"], "64K: -, 1M: -")

    def test_a_size_without_its_reference_is_no_verdict(self):
        meas = [m(st, "send_bw", "bw", s, bw_gbps=v) for st, s, v in (
            ("siwx", 65536, 0.6), ("siw", 65536, 0.5), ("siwx", 1 << 20, 0.9))]
        t = self.targets(meas, [65536, 1 << 20])["send_bw>=siw"]
        self.assertIsNone(t["value"])
        self.assertEqual(t["detail"], "64K: 1.20, 1M: -")

    def test_no_large_size_in_the_sweep(self):
        t = self.targets([], [8])["send_bw>=siw"]
        self.assertEqual(t["detail"], "no size >= 64 KiB in the sweep")

    def test_latency_atomics_imm_and_tcp(self):
        meas = [m("siwx", "read_lat", "lat", 8, lat_typical_us=100.0),
                m("siw", "read_lat", "lat", 8, lat_typical_us=125.0),
                m("siwx-nocrc", "read_lat", "lat", 8, lat_typical_us=90.0),
                m("siwx", "atomic_lat", "lat", 8, lat_typical_us=105.0),
                m("siwx", "imm_lat", "imm_lat", 8, lat_typical_us=60.0),
                m("siwx", "write_send_lat", "imm_lat", 8, lat_typical_us=100.0),
                m("siw", "write_send_lat", "imm_lat", 8, lat_typical_us=120.0),
                m("siwx", "write_bw", "bw", 1 << 20, bw_gbps=0.4),
                m("siwx", "tcp", "tcp", None, bw_gbps=0.5)]
        ts = self.targets(meas, [1 << 20])
        lat = ts["read_lat-8<=siw"]
        self.assertEqual((lat["value"], lat["met"], lat["cmp"]), (0.8, True, "<="))
        self.assertEqual(lat["reference"], {"siwx-nocrc": 0.72})
        self.assertNotIn("atomic_lat-8<=siw", ts)     # atomics have targets of their own
        at = ts["atomic_lat<=1.1read8"]
        self.assertAlmostEqual(at["value"], 1.05)
        self.assertIs(at["met"], True)
        imm = ts["imm_lat<=0.75ws"]
        self.assertAlmostEqual(imm["value"], 0.6)
        self.assertIs(imm["met"], True)
        self.assertEqual(imm["reference"]["siwx imm / siw Write + Send"], 0.5)
        tcp = ts["write_bw_1M>=0.8tcp"]
        self.assertAlmostEqual(tcp["value"], 0.8)
        self.assertIs(tcp["met"], True)
        self.assertIsNone(ts["write_bw_ev_1M>=0.8tcp"]["value"])
        self.assertIsNone(ts["atomic_rate>=rxe"]["met"])

    def test_every_target_in_order(self):
        names = [t["name"] for t in stats.compute_targets(
            [m("siwx", "write_lat", "lat", 8, lat_typical_us=1.0)], [8])]
        self.assertEqual(names, [
            "write_bw>=siw", "read_bw>=siw", "send_bw>=siw", "write_rate8>=siw",
            "read_rate8>=siw", "send_rate8>=siw", "write_lat-8<=siw", "write_bw_1M>=0.8tcp",
            "write_bw_ev_1M>=0.8tcp", "atomic_lat<=1.1read8", "atomic_rate>=rxe",
            "imm_lat<=0.75ws"])


if __name__ == "__main__":
    unittest.main()
