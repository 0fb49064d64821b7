# SPDX-License-Identifier: GPL-2.0
"""The benchmark's vocabulary: configurations, scenarios, loads, the
figures and how they print, the ratios and targets, and the paths it uses."""

import os
import re


TOP = os.environ.get("PFB_TOP") or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TRACING = "/sys/kernel/tracing"
PKTGEN = "/proc/net/pktgen"
REFNIC_PARAMS = "/sys/module/refnic/parameters"
HANDLE = "1:"
BUCKETS = ["1", "2", "3-4", "5-8", "9-16", "17-32", "33-64", "65+"]
BUCKET_EDGES = [1, 2, 4, 8, 16, 32, 64]
# refnic's ethtool -S names of the same buckets (packets, and wire segments,
# per doorbell)
DB_BUCKETS = ["tx_doorbell_pkts_" + b for b in ("1", "2", "3_4", "5_8", "9_16",
                                                 "17_32", "33_64", "65_up")]
DB_SEG_BUCKETS = [b.replace("_pkts_", "_segs_") for b in DB_BUCKETS]
# pfb_locked, the "before": pfifo_bulk of this revision (the last locked one,
# make rev-modules) loaded in place of the checkout's module while it runs
LOCKED_REV = "3c3248f"
QDISC_MODULE = ("sch_pfifo_bulk", "net/sched/sch_pfifo_bulk.ko")
# The doorbell cost used when refnic's own default is 0: a doorbell in a
# guest is a trapped MMIO write, a VM exit and entry, about 1 us.
DOORBELL_NS = 1000
# The real NIC's traffic goes to this neighbour (RFC 2544 benchmark range),
# which exists nowhere: the VM's backend (restrict=on) drops it.
NIC_DST, NIC_SRC = "198.18.0.1", "198.18.0.2"
# paced64: the mean gap between frames of all pktgen threads together. 10,000
# frames/s, a quarter to an eighth of what a 2-vCPU TCG guest sends flat
# out: no backlog builds, so every packet leaves alone unless the qdisc
# holds it (coalescing).
PACE_GAP_US = 100
# pktgen busy-waits for a delay under 100 us (net/core/pktgen.c spin()) and
# sleeps on an hrtimer above: a spinning sender would make busy CPU per
# packet measure the spinning. A thread's delay must be at least this.
PKTGEN_SPIN_NS = 100000
# coalesce: hold until this many packets wait (the qdisc's default); the
# window defaults to what that many frames take at the pace
COALESCE_PKTS = 8
# virtio_net's doorbell: a "kick" (a notification to the device) per TX
# queue, tx_queue_N_kicks on 6.1, txN_kicks on 6.12 (which also has a total,
# tx_kicks, left out of the sum)
VIRTIO_KICKS = re.compile(r"^tx(?:_queue_)?\d+_kicks$")

REGIMES = {
    "interleaved": "interleaved vCPUs (single-threaded TCG)",
    "parallel": "parallel vCPUs (multi-threaded TCG)",
    "native": "native",
}
COUNTING = ("interleaved", "native")	# regimes where kprobes are safe

CONFIGS = {
    "bulk_off": "pfifo_bulk bulk_pkts 1",
    "pfifo_bulk": "pfifo_bulk",
    "bulk_bytes": "pfifo_bulk bulk_bytes 3000",
    # batches capped at 8 and 16 packets: where a queue that stops inside
    # a long batch breaks it up (issue 33's parallel refnic cell)
    "bulk8": "pfifo_bulk bulk_pkts 8",
    "bulk16": "pfifo_bulk bulk_pkts 16",
    "pfb_locked": "pfifo_bulk",
    # the checkout's pfifo_bulk loaded with lockless=0 (locked, like pfifo;
    # from 6.19 fed by the core's defer list) and with lockless=1 (like
    # pfifo_fast); every other pfifo_bulk configuration runs the module's
    # default mode (lockless)
    "pfifo_bulk_locked": "pfifo_bulk",
    "pfifo_bulk_lockless": "pfifo_bulk",
    "pfifo": "pfifo",
    "pfifo_fast": "pfifo_fast",
    "fq_codel": "fq_codel",
    # fq keeps at most flow_limit packets per flow, 100 by default, and
    # pktgen's frames are one flow: 1000, the backlog pfifo holds (the
    # device's txqueuelen), so that fq does not drop where the others queue
    "fq": "fq flow_limit 1000",
    # coalescing: the window is filled in from --coalesce-usecs at startup
    # (default: what COALESCE_PKTS frames take at the pace, so that a batch
    # can form in it); coalesce50 is what an operator of a fast host would
    # set, a window that TCG's pace mostly cannot fill (batches sent at once)
    "coalesce": None,
    "coalesce50": "pfifo_bulk coalesce_usecs 50 coalesce_pkts %d" % COALESCE_PKTS,
    # pfifo_bulk with "tc -s qdisc show" in a tight loop beside the load:
    # of the device under test, and of an idle pfifo_bulk on another device
    # (the same work for the loop, none of it on the qdisc under load)
    "pfifo_bulk+tcdump": "pfifo_bulk",
    "pfifo_bulk+tcdump_idle": "pfifo_bulk",
}
DUMP_LOOP = {"pfifo_bulk+tcdump": "dev", "pfifo_bulk+tcdump_idle": "idle"}
IDLE_DEV = "pfbbidle"
DEFAULT_CONFIGS = ("bulk_off", "pfifo_bulk", "pfifo_bulk_locked", "pfifo_bulk_lockless",
                   "bulk_bytes", "pfb_locked",
                   "pfifo", "pfifo_fast", "fq_codel", "fq")

# refnic scenarios: (BQL on, line rate Mb/s or 0 for unlimited, description);
# "nic" is the real NIC (-d), described by its driver.
SCENARIOS = {
    "bql-bound": (True, 2, "refnic BQL on, 2 Mb/s line, completions coalesced by 16 "
                  "(device-bound: batch shape)"),
    "nobql-bound": (False, 2, "refnic BQL off, 2 Mb/s line, completions coalesced by 16 "
                    "(device-bound, a driver without BQL)"),
    "cpu-bound": (True, 0, "refnic BQL on, unlimited line, senders on every CPU "
                  "(CPU-bound: what batching saves)"),
    "cpu-nobql": (False, 0, "refnic BQL off, unlimited line, senders on every CPU "
                  "(CPU-bound, a driver without BQL)"),
    "tso": (True, 0, "refnic BQL on, unlimited line, offloads on: TCP's GSO frames reach "
            "the driver whole (TSO)"),
    "nic": (None, None, "the real NIC"),
}
# The scenarios that run refnic with its offloads (SG, checksum, TSO) on,
# and the loads they apply to; the other refnic scenarios turn them off
# ("ethtool -K DEV tso off sg off tx off"), the NIC their figures were
# first made on, and the tcp load there sends one segment per skb.
OFFLOAD_SCENARIOS = ("tso",)
OFFLOAD_LOADS = ("tcp",)

LOADS = {
    "pktgen64": "pktgen queue_xmit 64 B frames, one thread per CPU",
    "pktgen1500": "pktgen queue_xmit 1514 B frames, one thread per CPU",
    "paced64": "pktgen queue_xmit 64 B frames, one thread per CPU, paced (pktgen delay)",
    "udp": "UDP stream of 64 B datagrams, one sender per CPU",
    "tcp": "TCP_STREAM-like: a TCP flow per CPU across a refnic pair, 16 KB writes, "
           "one segment per skb (gso_max_segs 1, as with GSO off; in scenario tso, GSO frames)",
    "rr": "UDP request/response across a refnic pair, 1 in flight",
}
PAIR_ONLY = ("tcp", "rr")	# need the refnic pair: not on the real NIC
# the pktgen loads: frame size (pkt_size, without the FCS) and whether paced
PKTGEN_LOADS = {"pktgen64": (60, False), "pktgen1500": (1514, False), "paced64": (60, True)}

# Spin-lock functions counted (kprobe event, function); combined = all.
LOCKS = {
    "lock": ("pfb_bench_lock", "_raw_spin_lock"),
    "trylock": ("pfb_bench_trylock", "_raw_spin_trylock"),
    "lock_bh": ("pfb_bench_lock_bh", "_raw_spin_lock_bh"),
    "irqsave": ("pfb_bench_irqsave", "_raw_spin_lock_irqsave"),
    "lock_irq": ("pfb_bench_lock_irq", "_raw_spin_lock_irq"),
    "trylock_bh": ("pfb_bench_trylock_bh", "_raw_spin_trylock_bh"),
}

# figure: (label, format, better: "low", "high" or None)
FIGURES = {
    "offered": ("offered", "{:.0f}", None),
    "sent": ("sent", "{:.0f}", "high"),
    "dropped": ("dropped", "{:.0f}", None),
    "requeues": ("requeues", "{:.0f}", None),
    "requeues_per_kpkt": ("requeues/1k sent", "{:.1f}", None),
    "stops_per_kpkt": ("queue stops/1k sent", "{:.1f}", None),
    "ring_full_per_kpkt": ("ring-full stops/1k", "{:.1f}", None),
    "offered_pps": ("offered/s", "{:.0f}", None),
    "pps": ("pps", "{:.0f}", "high"),
    "dropped_pps": ("dropped/s", "{:.0f}", None),
    "lockops_per_pkt": ("combined/sent", "{:.2f}", "low"),
    "lockops_per_offered": ("combined/offered", "{:.2f}", "low"),
    "mean_batch": ("batch (trace)", "{:.2f}", None),
    "bypass_share": ("bypassed", "{:.1%}", None),
    "mean_batch_all": ("batch (+bypass)", "{:.2f}", None),
    "qd_mean_batch": ("batch (xstats)", "{:.2f}", None),
    "doorbells_per_pkt": ("doorbells/pkt", "{:.3f}", "low"),
    # with TSO frames (refnic tx_segments > tx_packets): per wire segment
    "segs_per_pkt": ("segs/pkt", "{:.2f}", None),
    "doorbells_per_seg": ("doorbells/seg", "{:.3f}", "low"),
    "cpu_ns_per_pkt": ("CPU ns/pkt", "{:.0f}", "low"),
    "mbps": ("Mb/s rcvd", "{:.1f}", "high"),
    "svc_us_per_mb": ("CPU us/MB", "{:.0f}", "low"),
    "dumps_per_s": ("tc dumps/s", "{:.0f}", None),
    "p50_us": ("p50 us", "{:.0f}", "low"),
    "p90_us": ("p90 us", "{:.0f}", "low"),
    "p95_us": ("p95 us", "{:.0f}", "low"),
    "p99_us": ("p99 us", "{:.0f}", "low"),
    # pfifo_bulk's coalescing xstats, per run: holds, how they ended, batches
    # sent at once, the wait of a held batch's oldest packet (mean, longest)
    "held": ("held", "{:.0f}", None),
    "release_pkts": ("released by pkts", "{:.0f}", None),
    "release_timer": ("released by timer", "{:.0f}", None),
    "sent_at_once": ("sent at once", "{:.0f}", None),
    "held_mean_us": ("held mean us", "{:.0f}", None),
    "held_max_us": ("held max us", "{:.0f}", None),
    # paced loads: did pktgen sleep out its delays, or busy-wait?
    "pg_runs_per_frame": ("pktgen runs/frame", "{:.2f}", None),
    "pg_cpu_ns_per_frame": ("pktgen ns/frame", "{:.0f}", None),
}
for _n in LOCKS:
    FIGURES[_n + "_per_pkt"] = (_n + "/sent", "{:.2f}", "low")
    FIGURES[_n + "_per_offered"] = (_n + "/offered", "{:.2f}", "low")
SPLIT_LOCK_FIGS = {n + sfx for n in LOCKS for sfx in ("_per_pkt", "_per_offered")}
HISTS = {"hist": "qdisc_dequeue tracepoint", "qd_hist": "pfifo_bulk xstats",
         "db_hist": "refnic packets per doorbell", "db_seg_hist": "refnic segments per doorbell"}

COALESCE_FIGS = ("held", "release_pkts", "release_timer", "sent_at_once", "held_mean_us",
                 "held_max_us")

# a batch handed back by the driver, or cut by its queue stopping
STOP_FIGS = ("requeues_per_kpkt", "stops_per_kpkt", "ring_full_per_kpkt")

# The tables: phase -> rows of figures (a row only when some figure has data)
TABLES = {
    "count": [("packets", ("offered", "sent", "dropped", "mean_batch", "qd_mean_batch",
                           "bypass_share", "mean_batch_all", "doorbells_per_pkt",
                           "segs_per_pkt", "doorbells_per_seg")),
              ("batches broken up", STOP_FIGS),
              ("spin-lock calls per sent packet",
               tuple(n + "_per_pkt" for n in LOCKS) + ("lockops_per_pkt",)),
              ("spin-lock calls per offered packet",
               tuple(n + "_per_offered" for n in LOCKS) + ("lockops_per_offered",))],
    "time": [("rates", ("offered_pps", "pps", "dropped_pps", "cpu_ns_per_pkt", "qd_mean_batch",
                        "doorbells_per_pkt", "segs_per_pkt", "doorbells_per_seg",
                        "dumps_per_s")),
             ("batches broken up", STOP_FIGS),
             ("stream", ("mbps", "svc_us_per_mb")),
             ("latency", ("p50_us", "p90_us", "p95_us", "p99_us")),
             ("coalescing, per run", COALESCE_FIGS),
             ("pktgen threads (paced)", ("pg_runs_per_frame", "pg_cpu_ns_per_frame"))],
}
PHASE_TITLE = {"count": "counts (probes on)", "time": "times (no probes)"}

# Ratios candidate/base, per phase; targets on some; regressions first.
RATIOS = (("pfifo_bulk", "bulk_off"), ("pfifo_bulk", "pfifo"), ("pfifo_bulk", "pfifo_fast"),
          ("pfifo_bulk", "fq_codel"), ("pfifo_bulk", "fq"), ("bulk_bytes", "pfifo"),
          ("bulk8", "pfifo"), ("bulk16", "pfifo"), ("bulk16", "pfifo_bulk"),
          ("pfifo_bulk", "pfb_locked"), ("pfifo_bulk", "pfifo_bulk_locked"),
          ("pfifo_bulk_locked", "pfifo"), ("pfifo_bulk_locked", "pfifo_fast"),
          ("pfifo_bulk_lockless", "pfifo_bulk_locked"), ("pfifo_bulk_lockless", "pfifo"),
          ("pfifo_bulk_lockless", "pfifo_fast"),
          ("pfifo_bulk+tcdump", "pfifo_bulk"), ("pfifo_bulk+tcdump", "pfifo_bulk+tcdump_idle"),
          ("coalesce", "pfifo_bulk"), ("coalesce", "pfifo"), ("coalesce", "pfifo_fast"),
          ("coalesce50", "pfifo_bulk"))
RATIO_FIGS = {
    "count": ("lockops_per_pkt", "lockops_per_offered", "lock_per_pkt", "trylock_per_pkt",
              "mean_batch", "qd_mean_batch", "doorbells_per_pkt"),
    "time": ("pps", "cpu_ns_per_pkt", "svc_us_per_mb", "mbps", "qd_mean_batch",
             "doorbells_per_pkt", "p50_us", "p99_us"),
}
TARGETS = {
    ("pfifo_bulk", "pfifo_fast", "count", "lockops_per_pkt"): ("≤", 0.5),
    ("pfifo_bulk", "pfifo_fast", "time", "pps"): ("≥", 1.0),
}
REGRESSIONS = (("pfifo_bulk", "pfifo"), ("pfifo_bulk", "pfifo_fast"), ("pfifo_bulk", "fq_codel"),
               ("pfifo_bulk", "fq"), ("bulk_bytes", "pfifo"), ("pfifo_bulk", "pfb_locked"))
# A ratio whose 95 % interval is wider than +-MARGIN prints as "not
# resolved (+-X %)" (--margin); the cost regime runs until its DECIDE_FIG
# ratios resolve it, or until --max-runs or --budget
MARGIN = 0.02
DECIDE_FIG = "pps"
# the cost regime (--cost): packets per run (all pktgen threads together),
# pilot rounds, the cap on runs per configuration (issue 33's fallback: 30),
# its configurations (pfifo_bulk and the stock peers)
COST_COUNT = 100000
COST_PILOT = 5
MAX_RUNS = 30
COST_CONFIGS = "pfifo_bulk,pfifo,pfifo_fast,fq_codel,fq"
# perf: configurations recorded per scenario, the first present is the base
PERF_CONFIGS = ("pfifo", "bulk_off", "pfifo_bulk", "pfifo_bulk_locked", "pfifo_fast")
PERF_HZ = 4000		# perf's own default frequency
LOCK_SYMBOL = re.compile(r"spin_(un)?lock|spin_trylock|queued_spin|_raw_(read|write)_")
# what the per-run plot shows, per table: (phase, figure)
PLOTTED = (("count", "lockops_per_pkt"), ("time", "pps"), ("count", "mean_batch"),
           ("time", "qd_mean_batch"), ("time", "doorbells_per_pkt"))
