"""plan: the option defaults and the steps each stack runs."""

import argparse
import unittest

from siwxbench import plan

HAVE = {"imm": True, "rsockets": True, "rsockets_why": ""}


def options(**kw):
    """The options as tools/bench/bench parses them, then their defaults."""
    a = argparse.Namespace(quick=True, sizes=None, thin=1, lat_sizes=None, bw_iters=None,
                           bw_bytes=None, lat_iters=None, atomic_iters=10000, imm_lat_iters=None,
                           imm_rate_iters=None, imm_window=32, tcp_secs=None, atomics=True,
                           imm=True, rstream=True, nfs=False, nfs_mib=None,
                           step_timeout=None, step_budget=None)
    vars(a).update(kw)
    plan.apply_defaults(a)
    return a


class Defaults(unittest.TestCase):
    def test_quick(self):
        a = options()
        self.assertEqual((a.sizes, a.lat_sizes), ([8, 65536], [8]))
        self.assertEqual((a.bw_iters, a.bw_bytes, a.bw_min_iters), (20, 2 << 20, 5))
        self.assertEqual((a.tcp_secs, a.step_timeout, a.step_budget), (2, 90, 30))

    def test_full_sweep_thinned(self):
        a = options(quick=False, thin=3, bw_bytes="64M")
        self.assertEqual(a.sizes, [8, 64, 512, 4096, 32768, 262144, 1 << 20])
        self.assertEqual(a.lat_sizes, [8, 4096])
        self.assertEqual((a.bw_iters, a.bw_bytes, a.lat_iters), (30000, 64 << 20, 3000))

    def test_no_rstream_drops_the_rstream_only_stack(self):
        stacks = ["rxe", "siw", "siwx", "siwx-nocrc", "siwx-rsockets"]
        self.assertEqual(options(rstream=False, stacks=list(stacks)).stacks, stacks[:4])
        self.assertEqual(options(stacks=list(stacks)).stacks, stacks)

    def test_sizes_given(self):
        a = options(sizes="1M,8,4kb,8", lat_sizes="64K")
        self.assertEqual((a.sizes, a.lat_sizes), ([8, 4096, 1 << 20], [65536]))

    def test_bandwidth_iterations_follow_the_bytes(self):
        a = options(quick=False)
        self.assertEqual(plan.bw_iters(a, 8), 30000)           # at most --bw-iters
        self.assertEqual(plan.bw_iters(a, 1 << 20), 256)       # 256 MiB
        a.bw_bytes = 1 << 20
        self.assertEqual(plan.bw_iters(a, 1 << 20), 20)        # at least bw_min_iters


class Steps(unittest.TestCase):
    def test_separate_boot_siwx(self):
        steps, unsup = plan.make_plan(options(), "siwx", HAVE)
        ids = [s[0] for s in steps]
        self.assertEqual(ids[:4], ["tcp", "write_bw-8", "write_bw-65536", "read_bw-8"])
        self.assertIn("write_bw_ev-1048576", ids)
        self.assertEqual(ids[-3:], ["rstream_lat-64", "rstream_rate-64", "rstream_bw-65536"])
        self.assertEqual(unsup, [])
        sid, srv, cli, meta = steps[1]
        self.assertEqual(cli, "echo Y > /sys/module/siwx/parameters/mpa_crc; /overlay/bstep "
                              "client write_bw-8 90 ib_write_bw -R -d $DEV -F -s 8 -n 20 "
                              "$SERVER_IP")
        self.assertEqual(meta, {"test": "write_bw", "kind": "bw", "bytes": 8, "stack": "siwx"})

    def test_shared_boot_variant(self):
        steps, unsup = plan.make_plan(options(), "siwx-nocrc", HAVE, shared=True, tcp=False)
        ids = [s[0] for s in steps]
        self.assertEqual(len(ids), 10)      # 3 ops x 2 sizes, write_bw_ev, 3 ops x 1 size
        self.assertTrue(all(i.startswith("siwx-nocrc.") for i in ids))
        self.assertFalse([i for i in ids if "atomic" in i or "imm" in i or "rstream" in i])
        self.assertTrue(steps[0][1].startswith(
            "export BENCH_STACK=siwx-nocrc DEV=$DEV_siwx SERVER_IP=$SERVER_IP_siwx "
            "CLIENT_IP=$CLIENT_IP_siwx; echo N > /sys/module/siwx/parameters/mpa_crc; "))
        self.assertEqual(unsup, [])

    def test_siw_lists_what_it_cannot_do(self):
        steps, unsup = plan.make_plan(options(), "siw", HAVE)
        self.assertEqual([(u["test"], u.get("reason")) for u in unsup],
                         [("atomic_bw", None), ("atomic_lat", None), ("imm_lat", None),
                          ("imm_rate", None)])
        self.assertIn("write_send_lat-8", [s[0] for s in steps])

    def test_imm_pairs_run_abba(self):
        # Each pair twice, A B B A, A alternating from round to round
        def order(rnd):
            steps, _ = plan.make_plan(options(rstream=False), "siwx", HAVE, rnd=rnd)
            return [s[0] for s in steps if "imm" in s[0] or "write_send" in s[0]]
        self.assertEqual(order(1), ["imm_lat-8", "write_send_lat-8", "write_send_lat-8-again",
                                    "imm_lat-8-again", "imm_rate-8", "write_send_rate-8",
                                    "write_send_rate-8-again", "imm_rate-8-again"])
        self.assertEqual(order(2), ["write_send_lat-8", "imm_lat-8", "imm_lat-8-again",
                                    "write_send_lat-8-again", "write_send_rate-8", "imm_rate-8",
                                    "imm_rate-8-again", "write_send_rate-8-again"])

    def test_imm_abba_across_stacks(self):
        # In a shared boot every stack runs A, then every stack B, B, A
        a = options(rstream=False)
        plans = [plan.make_plan(a, st, HAVE, shared=True)[0] for st in ("siwx", "rxe")]
        ids = [s[0] for s in plan.interleave(plans) if "imm_lat" in s[0] or "write_send_lat" in s[0]]
        self.assertEqual(ids, ["siwx.imm_lat-8", "rxe.imm_lat-8", "siwx.write_send_lat-8",
                               "rxe.write_send_lat-8", "siwx.write_send_lat-8-again",
                               "rxe.write_send_lat-8-again", "siwx.imm_lat-8-again",
                               "rxe.imm_lat-8-again"])

    def test_without_imm_bench_or_patched_library(self):
        have = {"imm": False, "rsockets": False, "rsockets_why": "not built"}
        _, unsup = plan.make_plan(options(), "siwx-rsockets", have)
        self.assertEqual([(u["test"], u["reason"]) for u in unsup],
                         [("rstream_lat", "not built"), ("rstream_rate", "not built"),
                          ("rstream_bw", "not built")])

    def test_nfs_over_tcp_once_then_each_rdma_stack(self):
        a = options(nfs=True)
        self.assertEqual(a.nfs_mib, 8)
        self.assertEqual(options(quick=False, nfs=True).nfs_mib, 128)

        def nfs_steps(stack, tcp, shared=True):
            steps, _ = plan.make_plan(a, stack, HAVE, shared=shared, tcp=tcp)
            return [(s[0], s[3]["stack"]) for s in steps if "nfs" in s[0]]
        self.assertEqual(nfs_steps("siwx", True), [
            ("nfs_tcp_write-8388608", "*"), ("siwx.nfs_write-8388608", "siwx"),
            ("nfs_tcp_read-8388608", "*"), ("siwx.nfs_read-8388608", "siwx")])
        self.assertEqual(nfs_steps("siw", False), [("siw.nfs_write-8388608", "siw"),
                                                   ("siw.nfs_read-8388608", "siw")])
        # rxe carries no NFS here; siwx without CRCs only TCP's, when first
        self.assertEqual(nfs_steps("rxe", False), [])
        self.assertEqual(nfs_steps("siwx-nocrc", True), [("nfs_tcp_write-8388608", "*"),
                                                         ("nfs_tcp_read-8388608", "*")])
        steps, _ = plan.make_plan(a, "siw", HAVE, tcp=True)
        srv, cli = next((s[1], s[2]) for s in steps if s[0] == "nfs_read-8388608")
        self.assertTrue(srv.endswith("/overlay/bstep server nfs_read-8388608 90 "
                                     "sh /overlay/nfs.sh bench-serve"), srv)
        self.assertTrue(cli.endswith(" sh /overlay/nfs.sh bench-bw $SERVER_IP rdma read 8"), cli)
        self.assertFalse([s for s in plan.make_plan(options(), "siwx", HAVE)[0]
                          if "nfs" in s[0]])

    def test_interleave_takes_turns(self):
        a = [("a.x", 1), ("a.y", 2)]
        b = [("b.x", 3), ("b.z", 4), ("b.y", 5)]
        self.assertEqual(plan.interleave([a, b]),
                         [("a.x", 1), ("b.x", 3), ("a.y", 2), ("b.y", 5), ("b.z", 4)])


if __name__ == "__main__":
    unittest.main()
