#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host unit tests of the benchmark's statistics and run schedule on canned
numbers (selftests/host_bench_stats.sh runs them): the interval of a ratio,
the runs a margin needs, "not resolved" in place of a number, and the cost
regime's rounds with a fake measurement."""

import math
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from pfb_bench import probes, report, runs, stats  # noqa: E402 (after the path it needs)
from pfb_bench.plots import headline_table  # noqa: E402

# a number as the report prints a ratio or a bound: 0.978, 1.625
RATIO_NUMBER = re.compile(r"\d\.\d{3}")


def agg(mean, sd, n):
    return {"mean": mean, "sd": sd, "n": n}


class Interval(unittest.TestCase):
    def test_t_quantiles(self):
        # Student's t, two-sided 95 %, from published tables
        for df, t in ((1, 12.706), (4, 2.776), (10, 2.228), (20, 2.086), (30, 2.042),
                      (60, 2.000), (120, 1.980)):
            self.assertAlmostEqual(stats.t95(df), t, delta=0.002, msg="df %d" % df)

    def test_ratio_interval_by_hand(self):
        # 100 ± 5 (n 5) against 100 ± 5 (n 5): var of each log mean
        # 0.05^2/5 = 0.0005, Welch df (0.001)^2 / (2 * 0.0005^2 / 4) = 8,
        # t(8) = 2.306, half = 2.306 * sqrt(0.001) = 0.072922
        r, lo, hi = stats.ratio_ci(agg(100, 5, 5), agg(100, 5, 5))
        self.assertEqual(r, 1.0)
        self.assertAlmostEqual(lo, math.exp(-0.072922), places=5)
        self.assertAlmostEqual(hi, math.exp(0.072922), places=5)
        self.assertAlmostEqual(stats.half_width(r, lo, hi), 0.07565, places=4)

    def test_unequal_spreads(self):
        # 110 ± 11 (n 4) against 100 ± 2 (n 6): va = 0.01/4, vb = 0.0004/6,
        # df = (0.0025667)^2 / (0.0025^2/3 + 0.0000667^2/5) = 3.16 -> 3,
        # t(3) = 3.182, half = 3.182 * sqrt(0.0025667) = 0.16121
        r, lo, hi = stats.ratio_ci(agg(110, 11, 4), agg(100, 2, 6))
        self.assertAlmostEqual(r, 1.1)
        self.assertAlmostEqual(lo, 1.1 * math.exp(-0.16121), places=4)
        self.assertAlmostEqual(hi, 1.1 * math.exp(0.16121), places=4)

    def test_no_interval(self):
        self.assertEqual(stats.ratio_ci(agg(1, 0, 1), agg(1, 0.1, 3))[1:], (None, None))
        self.assertFalse(stats.resolved(1.0, None, None, 0.02))


class Planning(unittest.TestCase):
    def test_runs_needed_by_hand(self):
        # cv 5 % both, ±2 %: 1.96^2 * 0.005 / log(1.02)^2 = 49 by the normal
        # quantile; t(98) = 1.985 makes it 51 (50 gives df 98, 1.9855 *
        # sqrt(0.0001) = 0.019855 > log(1.02) = 0.019803)
        self.assertEqual(stats.runs_needed(0.05, 0.05, 0.02), 51)
        self.assertEqual(stats.runs_needed(0, 0, 0.02), 2)
        self.assertEqual(stats.runs_needed(0.3, 0.3, 0.02, limit=100), 101)

    def test_planner_agrees_with_the_interval(self):
        # the planned n gives an interval within the margin, one run fewer
        # does not: the planner and ratio_ci() compute the same interval
        for ca, cb, m in ((0.05, 0.05, 0.02), (0.01, 0.03, 0.02), (0.2, 0.1, 0.05),
                          (0.004, 0.004, 0.02), (0.08, 0.02, 0.01)):
            n = stats.runs_needed(ca, cb, m)
            r, lo, hi = stats.ratio_ci(agg(100, 100 * ca, n), agg(50, 50 * cb, n))
            self.assertLessEqual(stats.half_width(r, lo, hi), m, (ca, cb, m, n))
            if n > 2:
                r, lo, hi = stats.ratio_ci(agg(100, 100 * ca, n - 1), agg(50, 50 * cb, n - 1))
                self.assertGreater(stats.half_width(r, lo, hi), m, (ca, cb, m, n))

    def test_plan_takes_the_widest_pair(self):
        cfgs = {"a": {"pps": agg(100, 1, 5)}, "b": {"pps": agg(100, 1, 5)},
                "c": {"pps": agg(100, 8, 5)}}
        plan = stats.plan_runs(cfgs, [("a", "b"), ("a", "c")], "pps", 0.02)
        self.assertEqual(plan["runs"], stats.runs_needed(0.01, 0.08, 0.02))
        self.assertEqual([p["resolved"] for p in plan["pairs"]], [True, False])


class NotResolved(unittest.TestCase):
    """An interval wider than the margin is never printed as a number."""

    def test_fmt_ratio(self):
        wide = report.fmt_ratio(0.772, 0.286, 2.090, 0.02)
        self.assertTrue(wide.startswith("not resolved (±"), wide)
        self.assertIn("170.7 %", wide)
        self.assertIsNone(RATIO_NUMBER.search(wide), wide)
        self.assertEqual(report.fmt_ratio(1.01, 0.995, 1.025, 0.02), "1.010 [0.995, 1.025]")
        self.assertEqual(report.fmt_ratio(1.0, None, None, 0.02),
                         "not resolved (no interval: n < 2)")

    def test_report_ratios(self):
        cfgs = {"pfifo_bulk": {"time": {"pps": agg(40000, 8000, 3)}},
                "pfifo_fast": {"time": {"pps": agg(45000, 9000, 3)}}}
        lines = report.report_ratios(cfgs, 0.02)
        pps = [x for x in lines if x.strip().startswith("pps")]
        self.assertEqual(len(pps), 1, lines)
        self.assertIn("not resolved", pps[0])
        self.assertIn("(target ≥ 1: not resolved)", pps[0])
        self.assertIsNone(RATIO_NUMBER.search(pps[0]), pps[0])

    def test_headline(self):
        row = {"kernel": "7.3.4+deb13-amd64", "regime": "interleaved", "where": "refnic",
               "load": "pktgen64", "base": "pfifo_fast", "margin": 0.02,
               "lockops_per_pkt": [0.613, 0.581, 0.646], "pps": [0.862, 0.530, 1.404]}
        line = headline_table([row])[2]
        self.assertEqual(line.count("not resolved"), 2, line)
        self.assertIsNone(RATIO_NUMBER.search(line), line)


class Schedule(unittest.TestCase):
    """The cost regime's rounds, on a fake measurement: configuration
    CFG's k-th run measures SERIES[CFG][k]."""

    def fake(self, series, order):
        count = {}

        def measure(cfg, rnd):
            k = count.get(cfg, 0)
            count[cfg] = k + 1
            order.append(cfg)
            return {"pps": series[cfg][k % len(series[cfg])]}
        return measure

    def opts(self, **kw):
        o = {"pilot": 5, "margin": 0.02, "max_runs": 30, "budget": None}
        o.update(kw)
        return o

    def test_alternates(self):
        self.assertEqual(runs.rotation(["a", "b", "c"], 1), ["b", "c", "a"])
        order = []
        series = {"pfifo_bulk": [100], "pfifo_fast": [100]}
        runs.adaptive(self.fake(series, order), ["pfifo_bulk", "pfifo_fast"], self.opts())
        self.assertEqual(order[:4], ["pfifo_bulk", "pfifo_fast", "pfifo_fast", "pfifo_bulk"])

    def test_quiet_runs_resolve_after_the_pilot(self):
        series = {"pfifo_bulk": [100, 101, 99, 100.5, 99.5],
                  "pfifo_fast": [95, 95.5, 94.5, 95, 95]}
        out, plan = runs.adaptive(self.fake(series, []), ["pfifo_bulk", "pfifo_fast"],
                                  self.opts())
        self.assertEqual((plan["rounds"], plan["stopped"]), (5, "resolved"))
        self.assertEqual(len(out["pfifo_bulk"]), 5)

    def test_runs_what_the_pilot_asks(self):
        # about 3 % spread: the pilot asks for more rounds, which resolve
        a = [100, 103, 97, 102, 98, 101, 99, 100]
        series = {"pfifo_bulk": a, "pfifo_fast": [x * 0.9 for x in a]}
        _, plan = runs.adaptive(self.fake(series, []), ["pfifo_bulk", "pfifo_fast"],
                                self.opts())
        self.assertEqual(plan["stopped"], "resolved")
        self.assertGreater(plan["rounds"], 5)
        self.assertLessEqual(plan["rounds"], 30)
        self.assertTrue(plan["pairs"][0]["resolved"])
        self.assertAlmostEqual(plan["pairs"][0]["ratio"], 1 / 0.9, places=3)

    def test_capped_and_not_resolved(self):
        series = {"pfifo_bulk": [100, 140, 70, 120, 85], "pfifo_fast": [100, 60, 130, 90, 115]}
        _, plan = runs.adaptive(self.fake(series, []), ["pfifo_bulk", "pfifo_fast"],
                                self.opts(max_runs=12))
        self.assertEqual((plan["rounds"], plan["stopped"]), (12, "--max-runs 12"))
        p = plan["pairs"][0]
        self.assertFalse(p["resolved"])
        self.assertGreater(p["runs"], 12)
        text = "\n".join(report.plan_lines(plan, 0.02))
        self.assertIn("not resolved (±", text)
        self.assertIn("stopped: --max-runs 12", text)

    def test_budget(self):
        # each run takes a second, a round two: a 30 s budget holds the
        # pilot's 5 rounds and 10 more
        now = [0.0]
        series = {"pfifo_bulk": [100, 140, 70], "pfifo_fast": [100, 60, 130]}
        measure = self.fake(series, [])

        def timed(cfg, rnd):
            now[0] += 1.0
            return measure(cfg, rnd)
        _, plan = runs.adaptive(timed, ["pfifo_bulk", "pfifo_fast"], self.opts(budget=30),
                                lambda: now[0])
        self.assertEqual((plan["rounds"], plan["stopped"]), (15, "--budget 30 s"))
        self.assertEqual(now[0], 30)

    def test_load_without_pps(self):
        series = {"pfifo_bulk": [None], "pfifo_fast": [None]}
        _, plan = runs.adaptive(self.fake(series, []), ["pfifo_bulk", "pfifo_fast"],
                                self.opts(pilot=3))
        self.assertEqual(plan["rounds"], 3)
        self.assertTrue(plan["stopped"].startswith("no pps"), plan["stopped"])


class MqRoot(unittest.TestCase):
    """A device of several TX queues: mq at the root, a qdisc per queue;
    the figures are the children's, merged."""
    DUMP = [{"kind": "mq", "handle": "1:", "root": True, "packets": 5, "drops": 1},
            {"kind": "pfifo_bulk", "handle": "8001:", "parent": "1:1", "packets": 3,
             "drops": 1, "qlen": 2, "options": {"bulk_pkts": 16},
             "xstats": {"batches": 2, "batch_hist": {"1": 1, "2": 1}, "held_ns_max": 5}},
            {"kind": "pfifo_bulk", "handle": "8002:", "parent": "1:2", "packets": 2,
             "drops": 0, "qlen": 1, "options": {"bulk_pkts": 16},
             "xstats": {"batches": 1, "batch_hist": {"1": 0, "2": 1}, "held_ns_max": 9}},
            {"kind": "ingress", "handle": "ffff:", "parent": "ffff:fff1", "packets": 100}]

    def test_children_summed(self):
        q = probes.root_stats(self.DUMP)
        self.assertEqual((q["packets"], q["drops"], q["qlen"], q["batches"]), (5, 1, 3, 3))
        self.assertEqual(q["batch_hist"], {"1": 1, "2": 2})
        self.assertEqual(q["held_ns_max"], 9)
        self.assertEqual(q["options"], {"bulk_pkts": 16})

    def test_one_queue_root_alone(self):
        q = probes.root_stats([dict(self.DUMP[1], root=True, parent="root")])
        self.assertEqual((q["packets"], q["batches"]), (3, 2))


class Stops(unittest.TestCase):
    def test_stop_figures(self):
        # 2000 packets sent, 30 requeued, 50 queue stops of which 20 for a
        # full ring (6.1's ethtool -S has both counters)
        q0, q1 = {"requeues": 10}, {"requeues": 40}
        e0 = {"tx_stops": 100, "tx_ring_full": 5}
        e1 = {"tx_stops": 150, "tx_ring_full": 25}
        fig = probes.stop_figures(q0, q1, e0, e1, 2000)
        self.assertEqual(fig, {"requeues": 30, "requeues_per_kpkt": 15.0,
                               "stops_per_kpkt": 25.0, "ring_full_per_kpkt": 10.0})

    def test_stop_figures_without_driver_counters(self):
        # a NIC without them (6.9+ refnic keeps stops in qstats; e1000e):
        # the requeues alone, and nothing per packet when none was sent
        fig = probes.stop_figures({}, {"requeues": 3}, {}, {"tx_ring_full": 0}, 1000)
        self.assertEqual(fig, {"requeues": 3, "requeues_per_kpkt": 3.0,
                               "ring_full_per_kpkt": 0.0})
        self.assertEqual(probes.stop_figures({}, {}, {}, {}, 0), {"requeues": 0})


class StaleCode(unittest.TestCase):
    """A parallel run under which kernel text was patched fails; the
    interleaved regime patches text safely (kprobes, tracepoints)."""

    def test_parallel_run_with_text_patched_fails(self):
        meta = {"regime": "parallel", "text_patched_run": ["flow_hash_from_keys"]}
        self.assertIn("flow_hash_from_keys", report.stale_code(meta))

    def test_trusted_runs(self):
        for meta in ({"regime": "parallel", "text_patched_run": []},
                     {"regime": "parallel", "text_patched_run": None},
                     {"regime": "interleaved", "text_patched_run": ["x"]}):
            self.assertIsNone(report.stale_code(meta), meta)


class Drain(unittest.TestCase):
    """A timed run's end: the backlog still drains while tc and ethtool
    read, so ethtool -S counts packets that s1's tx_packets does not."""

    @staticmethod
    def snap(t, tx, eth_pkts, qpkts):
        # a driver without BQL: a doorbell and a segment per packet
        return {"tx": tx, "qdisc": {"packets": qpkts, "drops": 0, "qlen": 0, "requeues": 0},
                "eth": {"tx_doorbells": eth_pkts, "tx_segments": eth_pkts},
                "cpu": 0, "t": t}

    def test_drained_counters_per_packet(self):
        s0 = self.snap(0.0, 1000, 1000, 1000)
        # 30,000 sent in the window; 3,000 more drained before ethtool read
        s1 = self.snap(2.0, 31000, 34000, 31000)
        fig = probes.figures(s0, s1, {}, "pktgen64", False, None)
        self.assertEqual(fig["doorbells_per_pkt"], 1.1)	# what the tables showed
        # the backlog drained: 4,000 in all, both counters read at rest
        s1["drained"] = {"tx": 35000, "qdisc": s1["qdisc"],
                         "eth": {"tx_doorbells": 35000, "tx_segments": 35000}}
        fig = probes.figures(s0, s1, {}, "pktgen64", False, None)
        self.assertEqual(fig["doorbells_per_pkt"], 1.0)
        self.assertNotIn("segs_per_pkt", fig)
        self.assertEqual(fig["pps"], 15000.0)	# the window's, not the drain's


if __name__ == "__main__":
    unittest.main()
