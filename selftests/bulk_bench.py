#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The pfifo_bulk benchmark: pfifo_bulk against its bulk-off baseline and the
stock qdiscs (pfifo, pfifo_fast, fq_codel), on refnic and on the VM's real
NIC, in the style of the 2014 bulk-dequeue threads.

Regimes (--regime; every table names its own):
  interleaved  single-threaded TCG, tools/vm/run's default: one vCPU runs at
               a time, so the sender that enqueues usually runs the qdisc
               itself and queues stay short. Counts and times.
  parallel     multi-threaded TCG (PFB_VM_TCG_THREAD=multi tools/vm/run -c 4):
               the vCPUs run at once, senders contend, queues build. Patching
               kernel text there (kprobes, enabling a tracepoint) has crashed
               guests, so only times are taken, batches come from the qdisc's
               own xstats and refnic's ethtool -S, and perf samples with
               cpu-clock (an hrtimer; nothing is patched). The TSC is taken
               off the clocksource watchdog first (timekeeping then reads
               HPET), whose verdict on a busy host would flip a static key;
               the report lists any kernel function patched during the run.
  native       a real host (-d DEV): counts and times.

Every configuration runs alternately in one session (A B C, B C A, ...), N
repetitions of S seconds. A count phase (kprobes on the spin-lock functions
and the qdisc:qdisc_dequeue histogram, all switched on once) and a time phase
(no probes: pps, busy CPU per packet, service demand, latency) are separate,
so the probes' cost stays out of the times. Then perf record -e cpu-clock of
some configurations per scenario, perf diff and the lock symbols ranked.

Definitions (shared/DESIGN.md), per measurement window:
  offered    packets handed to the qdisc: its sent + dropped + backlog growth
  sent       the device's tx_packets; pps = sent / seconds
  dropped    the qdisc's drops
  lock, trylock, lock_bh, irqsave, lock_irq, trylock_bh
             calls of _raw_spin_lock, _raw_spin_trylock, _raw_spin_lock_bh,
             _raw_spin_lock_irqsave, _raw_spin_lock_irq, _raw_spin_trylock_bh
             (kprobe hits, all CPUs), per sent and per offered packet;
             combined = the sum of all six (a lockless qdisc moves lock work
             into trylocks; the _bh and _irqsave forms are on the path too)
  mean batch the qdisc:qdisc_dequeue events of the device (ifindex, unique
             across the namespaces of the run) and qdisc (handle 1:) that
             carry an skb (skbaddr != 0: the dequeue that ends every qdisc
             run finds nothing; 6.1 and 6.12 record it with packets 0, and
             a mean over all events counts it as an empty batch): packets
             per event, less one event of 1 per requeue (a packet the driver
             handed back leaves alone from the core's requeue list, counted
             already). For pfifo_bulk also its own xstats (batch_pkts/batches),
             which must agree within 5 %. pfifo_bulk, pfifo, pfifo_fast and
             fq_codel send a packet that finds their queue empty straight to the
             driver (TCQ_F_CAN_BYPASS), unseen by the tracepoint: "bypassed"
             is that share of the qdisc's packets, "batch (+bypass)" the
             mean counting each of them as a batch
  doorbells/pkt  refnic tx_doorbells / tx_packets (ethtool -S); virtio_net's TX
             kicks (ethtool -S, tx_queue_N_kicks on 6.1, txN_kicks on 6.12,
             summed over the TX queues) / sent; none for other drivers
  CPU ns/pkt busy time from /proc/stat (all CPUs) / sent packets
  pktgen runs/frame, pktgen ns/frame
             paced loads: times pktgen's threads went onto a CPU, and their
             CPU time (/proc/PID/schedstat), per frame pktgen made. A thread
             that sleeps out every delay runs about once per frame; well
             under 1, it busy-waited for most frames, and busy CPU per
             packet measures pktgen's waiting more than the transmit path
  service demand  busy CPU us per MB received (tcp)
  held, released by pkts, released by timer, sent at once
             pfifo_bulk's coalescing xstats per run (coalesce configurations):
             batches held back, holds ended because coalesce_pkts waited or
             by the timer, batches sent at once (their first packet came a
             window or more after the one before)
  held mean us, held max us
             how long a held batch's oldest packet waited: held_ns / holds
             released, and held_ns_max (a fresh qdisc per run: the run's)
Ratios candidate/base are ratios of means with a 95 % confidence interval
(log scale, Welch's t); a target is met only when the whole interval clears
it, a regression is listed only when the whole interval is worse by > 1 %.

refnic's doorbell costs what its module parameter doorbell_ns says; when the
module leaves it at 0 (a free doorbell), the benchmark sets 1000 ns, about a
trapped MMIO write in a guest (--doorbell-ns). Tables and results.json say
which cost the run used.

What coalescing buys (load paced64, configurations coalesce and coalesce50):
pktgen queue_xmit 64 B frames as pktgen64, each thread waiting gap x CPUs
between its frames (pktgen "delay"), so that all together send a frame
every --pace-gap-us (default 100 us: 10,000 frames/s, a quarter to an
eighth of what a 2-vCPU TCG guest sends flat out). Nothing builds a
backlog: every qdisc sends each packet alone, a doorbell each, unless it
holds them back. pktgen busy-waits for a delay under 100 us and sleeps
above: a pace whose delay per thread is under 100 us is refused, since busy
CPU per packet would then measure pktgen's waiting. That is not enough
under TCG, where timers fire late: a thread woken late is behind its
schedule and busy-waits whenever less than 100 us of a delay is left;
"pktgen runs/frame" shows how often it slept (0.04-0.33 measured: read
doorbells, holds and latency there, busy CPU on KVM or a real host).
coalesce is pfifo_bulk coalesce_usecs W coalesce_pkts 8, W = --coalesce-usecs (default 8 x the
gap, what 8 frames take at the pace, so that a batch of 8 can form in the
window); coalesce50 has the 50 us window an operator of a fast host would
set, which under TCG at this pace holds little (its frames come more than
50 us apart: sent at once). Run it in the scenarios cpu-bound (refnic's
doorbell costs) and nic (virtio_net kicks), and the load rr with the same
configurations for what the window costs in latency; the ratios compare
coalesce with pfifo_bulk, pfifo and pfifo_fast, coalesce50 with pfifo_bulk:
  bulk_bench.sh -s cpu-bound -l paced64,rr -c pfifo_bulk,coalesce,coalesce50,pfifo,pfifo_fast

--dump-check: pfifo_bulk alone, with "tc -s qdisc show" of its device in a
tight loop beside the load, and with the same loop on an idle pfifo_bulk of
another device (the loop's own CPU cost, none of it on the loaded qdisc).

Runs inside the VM (tools/vm/run) on refnic devices it creates and, with
-d auto, on the VM's NIC (tools/vm/run -n virtio|e1000e, a backend that
reaches no network); on a real host with -d DEV. --headline merges the
results of several runs into one table and plot (on the host, no root).
"""

import argparse
import bisect
import glob
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import threading
import time

TOP = os.environ.get("PFB_TOP") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACING = "/sys/kernel/tracing"
PKTGEN = "/proc/net/pktgen"
REFNIC_PARAMS = "/sys/module/refnic/parameters"
HANDLE = "1:"
BUCKETS = ["1", "2", "3-4", "5-8", "9-16", "17-32", "33-64", "65+"]
BUCKET_EDGES = [1, 2, 4, 8, 16, 32, 64]
# refnic's ethtool -S names of the same buckets (packets per doorbell)
DB_BUCKETS = ["tx_doorbell_pkts_" + b for b in ("1", "2", "3_4", "5_8", "9_16",
                                                 "17_32", "33_64", "65_up")]
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
    "pfb_locked": "pfifo_bulk",
    "pfifo": "pfifo",
    "pfifo_fast": "pfifo_fast",
    "fq_codel": "fq_codel",
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
DEFAULT_CONFIGS = ("bulk_off", "pfifo_bulk", "bulk_bytes", "pfb_locked", "pfifo",
                   "pfifo_fast", "fq_codel")

# refnic scenarios: (BQL on, line rate Mb/s or 0 for unlimited, description);
# "nic" is the real NIC (-d), described by its driver.
SCENARIOS = {
    "bql-bound": (True, 2, "refnic BQL on, 2 Mb/s line, completions coalesced by 16 "
                  "(device-bound: batch shape)"),
    "nobql-bound": (False, 2, "refnic BQL off, 2 Mb/s line, completions coalesced by 16 "
                    "(device-bound, a driver without BQL)"),
    "cpu-bound": (True, 0, "refnic BQL on, unlimited line, senders on every CPU "
                  "(CPU-bound: what batching saves)"),
    "nic": (None, None, "the real NIC"),
}

LOADS = {
    "pktgen64": "pktgen queue_xmit 64 B frames, one thread per CPU",
    "pktgen1500": "pktgen queue_xmit 1514 B frames, one thread per CPU",
    "paced64": "pktgen queue_xmit 64 B frames, one thread per CPU, paced (pktgen delay)",
    "udp": "UDP stream of 64 B datagrams, one sender per CPU",
    "tcp": "TCP_STREAM-like: a TCP flow per CPU across a refnic pair, 16 KB writes, "
           "one segment per skb (gso_max_segs 1, as with GSO off)",
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
         "db_hist": "refnic packets per doorbell"}

COALESCE_FIGS = ("held", "release_pkts", "release_timer", "sent_at_once", "held_mean_us",
                 "held_max_us")

# The tables: phase -> rows of figures (a row only when some figure has data)
TABLES = {
    "count": [("packets", ("offered", "sent", "dropped", "mean_batch", "qd_mean_batch",
                           "bypass_share", "mean_batch_all", "doorbells_per_pkt")),
              ("spin-lock calls per sent packet",
               tuple(n + "_per_pkt" for n in LOCKS) + ("lockops_per_pkt",)),
              ("spin-lock calls per offered packet",
               tuple(n + "_per_offered" for n in LOCKS) + ("lockops_per_offered",))],
    "time": [("rates", ("offered_pps", "pps", "dropped_pps", "cpu_ns_per_pkt", "qd_mean_batch",
                        "doorbells_per_pkt", "dumps_per_s")),
             ("stream", ("mbps", "svc_us_per_mb")),
             ("latency", ("p50_us", "p90_us", "p95_us", "p99_us")),
             ("coalescing, per run", COALESCE_FIGS),
             ("pktgen threads (paced)", ("pg_runs_per_frame", "pg_cpu_ns_per_frame"))],
}
PHASE_TITLE = {"count": "counts (probes on)", "time": "times (no probes)"}

# Ratios candidate/base, per phase; targets on some; regressions first.
RATIOS = (("pfifo_bulk", "bulk_off"), ("pfifo_bulk", "pfifo"), ("pfifo_bulk", "pfifo_fast"),
          ("pfifo_bulk", "fq_codel"), ("bulk_bytes", "pfifo"), ("pfifo_bulk", "pfb_locked"),
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
REGRESSIONS = (("pfifo_bulk", "pfifo"), ("pfifo_bulk", "pfifo_fast"), ("bulk_bytes", "pfifo"),
               ("pfifo_bulk", "pfb_locked"))
# perf: configurations recorded per scenario, the first present is the base
PERF_CONFIGS = ("pfifo", "bulk_off", "pfifo_bulk", "pfifo_fast")
PERF_HZ = 4000		# perf's own default frequency
LOCK_SYMBOL = re.compile(r"spin_(un)?lock|spin_trylock|queued_spin|_raw_(read|write)_")
# what the per-run plot shows, per table: (phase, figure)
PLOTTED = (("count", "lockops_per_pkt"), ("time", "pps"), ("count", "mean_batch"),
           ("time", "qd_mean_batch"), ("time", "doorbells_per_pkt"))


STARTED = time.time()


def log(msg):
    print("[%4.0f s] %s" % (time.time() - STARTED, msg), file=sys.stderr, flush=True)


def sh(cmd, check=True, ns=None):
    if ns:
        cmd = "ip netns exec %s %s" % (ns, cmd)
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    if check and r.returncode:
        raise RuntimeError("%s: %s" % (cmd, r.stderr.strip()))
    return r.stdout


def write(path, text):
    with open(path, "w") as f:
        f.write(text + "\n")


def append(path, text):
    """Append to a tracefs control file: no seek (tracefs refuses it), no
    truncation (it would remove the other triggers)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def read(path):
    with open(path) as f:
        return f.read()


# --- the kernel side -------------------------------------------------------

def vermagic(path):
    """The kernel release a module is built for, None if it is none."""
    out = sh("modinfo -F vermagic %s" % path, check=False).split()
    return out[0] if out else None


def module_cmd(name, ko):
    """Loads the checkout's module when built for this kernel, else the
    installed one."""
    path = os.path.join(TOP, ko)
    if os.path.exists(path) and vermagic(path) == os.uname().release:
        return "insmod %s" % path
    return "modprobe %s" % name


def loaded(name):
    return bool(re.search(r"^%s " % name, read("/proc/modules"), re.M))


def load_modules():
    for name, ko in (QDISC_MODULE, ("refnic", "drivers/net/refnic/refnic.ko")):
        if not loaded(name):
            sh(module_cmd(name, ko))
    sh("modprobe pktgen")


def set_doorbell(ns_wanted):
    """refnic's doorbell cost for this run: ns_wanted, or the module's
    default, or DOORBELL_NS when that is 0. Returns (ns, origin)."""
    path = os.path.join(REFNIC_PARAMS, "doorbell_ns")
    default = int(read(path))
    if ns_wanted is None and default:
        return default, "refnic's default"
    ns = DOORBELL_NS if ns_wanted is None else ns_wanted
    write(path, str(ns))
    if int(read(path)) != ns:
        raise RuntimeError("refnic refused doorbell_ns %d" % ns)
    return ns, ("--doorbell-ns" if ns_wanted is not None else
                "set by the benchmark: refnic's default is 0")


def default_locked_ko():
    return os.path.join(TOP, ".build", "rev-" + LOCKED_REV, os.uname().release,
                        "sch_pfifo_bulk.ko")


def locked_origin(path):
    """The module and, from make rev-modules, its commit."""
    try:
        commit = read(os.path.join(os.path.dirname(os.path.dirname(path)), "commit")).strip()
    except OSError:
        commit = None
    return {"ko": path, "commit": commit}


def locked_ko_problem(path):
    """Why PATH cannot serve as pfb_locked, or None."""
    if not os.path.exists(path):
        return "no %s: build it on the host with 'make rev-modules REV=%s'" % (path, LOCKED_REV)
    magic = vermagic(path)
    if not magic:
        return "%s is not a kernel module" % path
    if magic != os.uname().release:
        return "%s is built for %s, not for the running %s" % (path, magic, os.uname().release)
    return None


def kernel_text():
    """(address of _stext, bytes up to _etext) read from /proc/kcore, None
    when unreadable. The parallel regime relies on nothing patching kernel
    text while the vCPUs run at once: comparing two snapshots shows what
    was patched in between (perf record -e cpu-clock patches nothing; a
    kprobe, an enabled tracepoint, a static key flipped does)."""
    try:
        addr = {}
        with open("/proc/kallsyms") as f:
            for line in f:
                a, _, name = line.split()[:3]
                if name in ("_stext", "_etext"):
                    addr[name] = int(a, 16)
        start, end = addr["_stext"], addr["_etext"]
        with open("/proc/kcore", "rb") as f:
            hdr = f.read(64)
            phoff = struct.unpack_from("Q", hdr, 32)[0]
            phentsize, phnum = struct.unpack_from("HH", hdr, 54)
            for i in range(phnum):
                f.seek(phoff + i * phentsize)
                ptype, _, off, vaddr, _, size = struct.unpack("IIQQQQ", f.read(40))
                if ptype == 1 and vaddr <= start < vaddr + size:	# PT_LOAD
                    f.seek(off + start - vaddr)
                    return start, f.read(end - start)
    except (OSError, KeyError, ValueError, struct.error):
        return None
    return None


def text_changes(a, b):
    """The functions whose text differs between snapshots a and b, None
    when either is missing."""
    if not a or not b:
        return None
    start, x = a
    y = b[1]
    changed = []
    for i in range(0, len(x), 4096):
        if x[i:i + 4096] == y[i:i + 4096]:
            continue
        for j in range(i, min(i + 4096, len(x))):
            if x[j] != y[j]:
                changed.append(start + j)
    if not changed:
        return []
    syms = []
    with open("/proc/kallsyms") as f:
        for line in f:
            a_, t, name = line.split()[:3]
            if t in "tT":
                syms.append((int(a_, 16), name))
    syms.sort()
    addrs = [x_ for x_, _ in syms]
    out = []
    for c in changed:
        i = bisect.bisect_right(addrs, c) - 1
        name = syms[i][1] if i >= 0 else hex(c)
        if name not in out:
            out.append(name)
    return out


CLOCKSOURCE = "/sys/devices/system/clocksource/clocksource0"


def quiet_clocksource_watchdog():
    """Parallel regime: keep the kernel from patching its own text. The
    clocksource watchdog checks the TSC against HPET (or jiffies) every
    0.5 s; on a busy host a vCPU stalls between the reads, the TSC is
    marked unstable, and that flips the sched_clock_stable static key:
    text patched under running vCPUs ("Oops: int3" in sched_clock_cpu, seen
    on 6.12). Unbinding the TSC as a clocksource takes it off the watchdog
    (timekeeping moves to HPET, as 6.1 does by itself under TCG; sched_clock
    still reads the TSC) and patches nothing. Returns (clocksource in use
    afterwards, [unbound])."""
    try:
        if "tsc" in read(CLOCKSOURCE + "/available_clocksource").split():
            write(CLOCKSOURCE + "/unbind_clocksource", "tsc")
            unbound = ["tsc"]
        else:
            unbound = []
        return read(CLOCKSOURCE + "/current_clocksource").strip(), unbound
    except OSError as e:
        log("bench: cannot unbind the tsc clocksource: %s" % e)
        return None, []


def load_nic_drivers():
    """No udev in the VM: load the drivers of its network devices (PCI
    class 02, virtio device 1) by their modalias."""
    aliases = [read(os.path.join(d, "modalias")).strip()
               for d in glob.glob("/sys/bus/pci/devices/*")
               if read(os.path.join(d, "class")).startswith("0x02")]
    aliases += [read(os.path.join(d, "modalias")).strip()
                for d in glob.glob("/sys/bus/virtio/devices/*")
                if read(os.path.join(d, "device")).strip() == "0x0001"]
    for a in aliases:
        sh("modprobe -q '%s'" % a, check=False)


def find_nic():
    """The first network device on a bus (PCI, virtio), after loading its
    driver; None without one."""
    load_nic_drivers()
    for _ in range(20):
        for d in sorted(glob.glob("/sys/class/net/*")):
            if os.path.exists(os.path.join(d, "device")):
                return os.path.basename(d)
        time.sleep(0.1)
    return None


class Probes:
    """Spin-lock calls (a kprobe + hist per function in LOCKS) and batch
    sizes per device (qdisc:qdisc_dequeue hist on ifindex and packets, only
    events with an skb, only the devices under test).

    All are switched on once for the whole count phase and read as
    differences between snapshots: arming a kprobe on _raw_spin_lock
    patches code that the other CPUs run all the time, and doing that
    between every two runs has crashed a TCG guest (ftrace text poke)."""

    LOCK_SPEC = "hist:keys=common_type:vals=hitcount"

    def __init__(self, ifindexes):
        self.triggers = {name: "%s/events/kprobes/%s/trigger" % (TRACING, event)
                         for name, (event, _) in LOCKS.items()}
        self.deq_trigger = "%s/events/qdisc/qdisc_dequeue/trigger" % TRACING
        self.deq_spec = ("hist:keys=ifindex,packets:vals=hitcount:size=4096 "
                         "if skbaddr != 0 && handle == 0x10000 && (%s)" %
                         " || ".join("ifindex == %d" % i for i in sorted(ifindexes)))
        self.on = False
        self.armed = []
        try:
            for event, func in LOCKS.values():
                append("%s/kprobe_events" % TRACING, "p:%s %s\n" % (event, func))
                self.armed.append(event)
        except OSError:
            self.close()
            raise

    def specs(self):
        return [(t, self.LOCK_SPEC) for t in self.triggers.values()] + \
            [(self.deq_trigger, self.deq_spec)]

    def start(self):
        for trig, spec in self.specs():
            append(trig, spec)
        self.on = True

    def stop(self):
        if not self.on:
            return
        self.on = False
        for trig, spec in self.specs():
            try:
                append(trig, "!" + spec)
            except OSError:
                pass

    def snapshot(self, ifindex):
        """({lock name: hits}, {batch size: count}) so far, for one device."""
        counts = {}
        for name, trig in self.triggers.items():
            m = re.search(r"hitcount:\s+(\d+)", read(trig.replace("trigger", "hist")))
            counts[name] = int(m.group(1)) if m else 0
        batches = {}
        for m in re.finditer(r"ifindex:\s+(\d+), packets:\s+(\d+)\s*\}\s+hitcount:\s+(\d+)",
                             read(self.deq_trigger.replace("trigger", "hist"))):
            if int(m.group(1)) == ifindex:
                batches[int(m.group(2))] = int(m.group(3))
        return counts, batches

    def close(self):
        self.stop()
        for event in self.armed:
            try:
                append("%s/kprobe_events" % TRACING, "-:%s\n" % event)
            except OSError:
                pass
        self.armed = []


def bucketize(batches):
    out = [0] * len(BUCKETS)
    for size, hits in batches.items():
        i = 0
        while i < len(BUCKET_EDGES) and size > BUCKET_EDGES[i]:
            i += 1
        out[i] += hits
    return out


def busy_jiffies():
    f = read("/proc/stat").splitlines()[0].split()[1:]
    user, nice, system, idle, iowait, irq, softirq, steal = map(int, f[:8])
    return user + nice + system + irq + softirq + steal


def ethtool_stats(dev, ns=None):
    out = {}
    for line in sh("ethtool -S %s" % dev, check=False, ns=ns).splitlines():
        k, _, v = line.strip().partition(":")
        if v.strip().isdigit():
            out[k] = int(v)
    return out


def doorbell_count(eth):
    """The doorbells in an ethtool -S dump: refnic's tx_doorbells, else
    virtio_net's TX kicks summed over its TX queues; None when the driver
    counts neither (e1000e)."""
    if "tx_doorbells" in eth:
        return eth["tx_doorbells"]
    kicks = [v for k, v in eth.items() if VIRTIO_KICKS.match(k)]
    return sum(kicks) if kicks else None


def link_stat(dev, key, ns=None):
    if ns:
        return int(sh("cat /sys/class/net/%s/statistics/%s" % (dev, key), ns=ns))
    return int(read("/sys/class/net/%s/statistics/%s" % (dev, key)))


def qdisc_stats(dev, ns=None):
    """The root qdisc's counters (tc -s -j): packets, drops, qlen and, for
    pfifo_bulk (with our tc plugin), batches, batch_pkts, batch_hist, the
    coalescing counters (held, release_pkts, ...) and its options."""
    out = json.loads(sh("tc -s -j qdisc show dev %s" % dev, ns=ns) or "[]")
    for q in out:
        if q.get("root") or q.get("parent") in (None, "root"):
            flat = dict(q)
            flat.update(q.get("xstats") or {})
            return flat
    return {}


def count_diff(a, b, key):
    return (b.get(key) or 0) - (a.get(key) or 0)


def coalescing(q0, q1):
    """pfifo_bulk's coalescing over a window, from its xstats: holds, how
    they ended (coalesce_pkts reached, the timer), batches sent at once
    (too sparse to wait for), and how long a held batch's oldest packet
    waited, mean and longest. The longest is the qdisc's maximum since it
    was made: a fresh qdisc per measurement, so this window's."""
    released = count_diff(q0, q1, "release_pkts") + count_diff(q0, q1, "release_timer")
    fig = {k: count_diff(q0, q1, k) for k in ("held", "release_pkts", "release_timer",
                                               "sent_at_once")}
    fig["held_mean_us"] = count_diff(q0, q1, "held_ns") / released / 1e3 if released else None
    fig["held_max_us"] = (q1.get("held_ns_max") or 0) / 1e3
    return fig


# --- devices and loads -------------------------------------------------------

def pktgen_threads():
    """The pids of pktgen's kernel threads (kpktgend_N)."""
    pids = []
    for path in glob.glob("/proc/[0-9]*/comm"):
        try:
            if re.match(r"kpktgend_\d+$", read(path).strip()):
                pids.append(path.split("/")[2])
        except OSError:
            pass
    return pids


def schedstat(pids):
    """(ns on a CPU, times switched onto one) summed over PIDS, from
    /proc/PID/schedstat: exact, and it patches nothing."""
    ns = runs = 0
    for pid in pids:
        f = read("/proc/%s/schedstat" % pid).split()
        ns, runs = ns + int(f[0]), runs + int(f[2])
    return ns, runs


def pace_delay_ns(gap_us, ncpu):
    """paced64: pktgen's delay per thread for a mean gap of GAP_US between
    the frames of all NCPU threads together."""
    return int(round(gap_us * 1000 * ncpu))


class Bench:
    def __init__(self, args):
        self.args = args
        self.ncpu = os.cpu_count()
        self.dev = "pfbb0"			# refnic for pktgen and udp
        self.pair = ("pfbb1", "pfbb1p")		# refnic pair across namespaces
        self.ns = ("pfbbA", "pfbbB")
        self.nic = args.dev			# the real NIC, or None
        self.nic_added = []			# what setup added to it
        self.nic_kicks = False			# its ethtool -S counts doorbells
        self.need_refnic = any(s != "nic" for s in args.scenarios)
        self.need_pair = self.need_refnic and any(l in ("udp",) + PAIR_ONLY for l in args.loads)
        # how to load each sch_pfifo_bulk, and which one is loaded
        self.pfb_cmd = {"checkout": module_cmd(*QDISC_MODULE),
                        "locked": "insmod %s" % args.locked_ko}
        self.pfb = "checkout"
        self.background = None
        self.pg_dev = None			# the device pktgen's threads send on
        self.ifindex = {}			# of every device under test
        # tc and ip plugins of this checkout, when built
        for env, d, so in (("TC_LIB_DIR", "tc-plugin", "q_pfifo_bulk.so"),
                           ("IP_LIB_DIR", "ip-plugin", "link_refnic.so")):
            if os.path.exists(os.path.join(TOP, d, so)):
                os.environ[env] = os.path.join(TOP, d)

    # devices
    def setup(self):
        if self.need_refnic:
            sh("ip link add %s type refnic" % self.dev)
            self.quiet(self.dev)
            sh("ip link set %s up" % self.dev)
        if self.need_pair:
            a, b = self.ns
            sh("ip netns add %s" % a)
            sh("ip netns add %s" % b)
            # made in this namespace, then moved: a device keeps its
            # ifindex, so no two devices of the run share one (the
            # tracepoint knows the ifindex, not the namespace)
            sh("ip link add %s type refnic peer name %s" % self.pair)
            sh("ip link set %s netns %s" % (self.pair[0], a))
            sh("ip link set %s netns %s" % (self.pair[1], b))
            sh("ip addr add 10.77.0.1/24 dev %s" % self.pair[0], ns=a)
            sh("ip addr add 10.77.0.2/24 dev %s" % self.pair[1], ns=b)
            for i, n in enumerate(self.ns):
                self.quiet(self.pair[i], n)
                sh("ip link set lo up", ns=n)
                sh("ip link set %s up" % self.pair[i], ns=n)
            # static neighbours: no ARP traffic inside a measurement
            for i, n in enumerate(self.ns):
                other = self.pair[1 - i]
                mac = sh("cat /sys/class/net/%s/address" % other, ns=self.ns[1 - i]).strip()
                sh("ip neigh replace 10.77.0.%d lladdr %s dev %s nud permanent" %
                   (2 - i, mac, self.pair[i]), ns=n)
        if self.nic:
            self.setup_nic()

    def quiet(self, dev, ns=None):
        """No IPv6 on a device under test: no router solicitations or DAD
        inside a measurement."""
        sh("sysctl -qw net.ipv6.conf.%s.disable_ipv6=1" % dev, check=False, ns=ns)

    def setup_nic(self):
        """The real NIC up, with carrier (e1000e needs about 2 s), and a
        route to a neighbour that does not exist (NIC_DST)."""
        dev = self.nic
        self.quiet(dev)
        sh("ip link set %s up" % dev)
        for _ in range(100):
            if read("/sys/class/net/%s/carrier" % dev).strip() == "1":
                break
            time.sleep(0.1)
        else:
            raise RuntimeError("%s: no carrier after 10 s" % dev)
        if "inet " not in sh("ip -4 addr show dev %s" % dev):
            sh("ip addr add %s/32 dev %s" % (NIC_SRC, dev))
            self.nic_added.append("ip addr del %s/32 dev %s" % (NIC_SRC, dev))
        sh("ip route replace %s/32 dev %s" % (NIC_DST, dev))
        self.nic_added.append("ip route del %s/32 dev %s" % (NIC_DST, dev))
        sh("ip neigh replace %s lladdr %s dev %s nud permanent" %
           (NIC_DST, self.args.dst_mac, dev))
        self.nic_added.append("ip neigh del %s dev %s" % (NIC_DST, dev))
        # its doorbells, when the driver counts them (virtio_net's kicks);
        # ethtool -S only then, so that other drivers' runs stay as they were
        self.nic_kicks = any(VIRTIO_KICKS.match(k) for k in ethtool_stats(dev))

    def nic_info(self):
        """Driver, its version and whether it runs BQL (the limit BQL
        computed moved from 0: the driver reports completions)."""
        if not self.nic:
            return None
        info = {}
        for line in sh("ethtool -i %s" % self.nic, check=False).splitlines():
            k, _, v = line.partition(":")
            info[k.strip()] = v.strip()
        bql = glob.glob("/sys/class/net/%s/queues/tx-*/byte_queue_limits/limit" % self.nic)
        info["bql"] = any(int(read(p)) > 0 for p in bql)
        info["txqs"] = len(glob.glob("/sys/class/net/%s/queues/tx-*" % self.nic))
        info["doorbells"] = ("TX kicks (ethtool -S, summed over the TX queues)"
                             if self.nic_kicks else None)
        return info

    def teardown(self):
        self.stop_background()
        sh("echo reset > %s/pgctrl" % PKTGEN, check=False)
        for n in self.ns:
            sh("ip netns del %s" % n, check=False)
        if self.need_refnic:
            sh("ip link del %s" % self.dev, check=False)
        if self.nic:
            sh("tc qdisc del dev %s root" % self.nic, check=False)
            for cmd in reversed(self.nic_added):
                sh(cmd, check=False)

    def refnic_mode(self, dev, ns, bql, rate):
        sh("ethtool --set-priv-flags %s bql %s" % (dev, "on" if bql else "off"), ns=ns)
        sh("ethtool -s %s speed %d" % (dev, rate), ns=ns)
        # At a low line rate, completions coalesced as a real NIC does (16
        # frames or 10 ms): one completion per frame frees one slot at a
        # time, and BQL then never has room for a batch.
        if rate:
            sh("ethtool -C %s tx-usecs 10000 tx-frames 16" % dev, ns=ns)
        else:
            sh("ethtool -C %s tx-usecs 0 tx-frames 1" % dev, ns=ns)

    def scenario(self, name):
        if name == "nic":
            return
        bql, rate, _ = SCENARIOS[name]
        self.refnic_mode(self.dev, None, bql, rate)
        if self.need_pair:
            self.refnic_mode(self.pair[0], self.ns[0], bql, rate)

    def applies(self, scen, load):
        return not (scen == "nic" and load in PAIR_ONLY)

    def target(self, scen, load):
        """(device, namespace) the qdisc under test sits on."""
        if scen == "nic":
            return self.nic, None
        if load in PKTGEN_LOADS:
            return self.dev, None
        return self.pair[0], self.ns[0]

    def use_module(self, which):
        """Have the checkout's ("checkout") or the older revision's ("locked")
        sch_pfifo_bulk loaded. Both register pfifo_bulk, so they cannot be
        loaded together: our qdiscs go, one module out, the other in."""
        if which == self.pfb:
            return
        for dev, ns, there in ((self.dev, None, self.need_refnic),
                               (self.pair[0], self.ns[0], self.need_pair),
                               (self.nic, None, self.nic)):
            if there:
                sh("tc qdisc del dev %s root" % dev, check=False, ns=ns)
        name = QDISC_MODULE[0]
        for _ in range(50):
            sh("rmmod %s" % name, check=False)
            if not loaded(name):
                break
            time.sleep(0.1)		# a qdisc still going away holds it
        else:
            raise RuntimeError("cannot unload %s (a pfifo_bulk qdisc outside the bench?)" % name)
        self.pfb = None
        sh(self.pfb_cmd[which])
        self.pfb = which
        log("bench: %s: %s" % (which, self.pfb_cmd[which]))

    def set_qdisc(self, dev, ns, config):
        """A fresh qdisc for every measurement, never a change of the last."""
        if CONFIGS[config].split()[0] == "pfifo_bulk":
            self.use_module("locked" if config == "pfb_locked" else "checkout")
        sh("tc qdisc del dev %s root" % dev, check=False, ns=ns)
        sh("tc qdisc add dev %s root handle %s %s" % (dev, HANDLE, CONFIGS[config]), ns=ns)

    def wait_settled(self, dev, ns, limit=5.0):
        """Until the device's tx_packets stood still for 0.3 s (the last
        run's frames on the ring are sent), at most LIMIT seconds."""
        last, still, t0 = link_stat(dev, "tx_packets", ns), 0, time.time()
        while still < 3 and time.time() - t0 < limit:
            time.sleep(0.1)
            now = link_stat(dev, "tx_packets", ns)
            still = still + 1 if now == last else 0
            last = now

    # the "tc -s qdisc show" loop beside a load
    def start_background(self, config, dev, ns):
        which = DUMP_LOOP.get(config)
        if not which:
            return
        target = dev if which == "dev" else IDLE_DEV
        if which == "idle":
            sh("ip link add %s type refnic" % IDLE_DEV, check=False, ns=ns)
            sh("ip link set %s up" % IDLE_DEV, ns=ns)
            sh("tc qdisc replace dev %s root handle 1: pfifo_bulk" % IDLE_DEV, ns=ns)
        pre = ["ip", "netns", "exec", ns] if ns else []
        # tc -batch: one process, one dump per line, as fast as tc goes;
        # its output (one "qdisc" line per dump: the device has one qdisc)
        # counts the dumps afterwards
        batch = "/tmp/pfb-bench-dump.batch"
        with open(batch, "w") as f:
            f.write(("qdisc show dev %s\n" % target) * 200000)
        out = open("/tmp/pfb-bench-dump.out", "w")
        tc = subprocess.Popen(pre + ["tc", "-s", "-batch", batch], stdout=out,
                              stderr=subprocess.DEVNULL)
        self.background = (tc, out, ns if which == "idle" else False, time.time())

    def stop_background(self):
        """Stops the loop; dumps per second, None without a loop."""
        if not self.background:
            return None
        tc, out, idle_ns, t0 = self.background
        self.background = None
        tc.terminate()
        tc.wait()
        secs = time.time() - t0
        out.close()
        with open(out.name) as f:
            dumps = sum(1 for line in f if line.startswith("qdisc"))
        if idle_ns is not False:
            sh("ip link del %s" % IDLE_DEV, check=False, ns=idle_ns)
        return dumps / secs

    # loads
    def pktgen_devices(self, dev):
        """One pktgen device per CPU on DEV, added once and kept while DEV
        stays the target: a device removed by "reset" goes away only when
        its thread next runs, which took seconds with 4 vCPUs in parallel."""
        if self.pg_dev == dev:
            return
        write("%s/pgctrl" % PKTGEN, "reset")
        self.pg_dev = None
        for c in range(self.ncpu):
            t = "%s/kpktgend_%d" % (PKTGEN, c)
            for _ in range(300):
                try:
                    write(t, "add_device %s@%d" % (dev, c))
                    break
                except OSError:		# EBUSY: the old device is still going away
                    time.sleep(0.1)
            else:
                raise RuntimeError("pktgen: cannot add %s@%d" % (dev, c))
        self.pg_dev = dev

    def pktgen(self, dev, size, secs, delay=0):
        """pktgen on every CPU for SECS, DELAY ns between each thread's
        frames (0: flat out). Every option is set each time: the devices
        outlive a load (a paced one's delay would stay)."""
        self.pktgen_devices(dev)
        for c in range(self.ncpu):
            d = "%s/%s@%d" % (PKTGEN, dev, c)
            for cmd in ("count 0", "pkt_size %d" % size, "delay %d" % delay,
                        "xmit_mode queue_xmit",
                        "burst 1", "clone_skb 0", "dst %s" % NIC_DST,
                        "dst_mac %s" % self.args.dst_mac):
                write(d, cmd)
        # Paced, a thread that sleeps out each delay goes onto its CPU once
        # per frame; pktgen busy-waits instead whenever less than 100 us of
        # the delay is left, also after a late wakeup (its schedule is
        # absolute): its switches and CPU time per frame say which it did.
        threads = pktgen_threads() if delay else []
        sched0 = schedstat(threads)
        starter = threading.Thread(target=write, args=("%s/pgctrl" % PKTGEN, "start"))
        starter.start()
        time.sleep(secs)
        write("%s/pgctrl" % PKTGEN, "stop")
        starter.join()
        sched1 = schedstat(threads)
        offered = 0
        for c in range(self.ncpu):
            m = re.search(r"pkts-sofar:\s*(\d+)\s+errors:\s*(\d+)",
                          read("%s/%s@%d" % (PKTGEN, dev, c)))
            if m:
                offered += int(m.group(1)) + int(m.group(2))
        out = {"pktgen_offered": offered}
        if threads and offered:
            out["pg_cpu_ns_per_frame"] = (sched1[0] - sched0[0]) / offered
            out["pg_runs_per_frame"] = (sched1[1] - sched0[1]) / offered
        return out

    def load_tool(self):
        return os.path.join(TOP, "selftests", "pfb_load")

    def peer_server(self, args, secs):
        """pfb_load ARGS in the peer namespace for SECS, given time to bind."""
        server = subprocess.Popen("ip netns exec %s %s %s -t %f" %
                                  (self.ns[1], self.load_tool(), args, secs),
                                  shell=True, stdout=subprocess.PIPE, text=True)
        time.sleep(0.3)
        return server

    def senders(self, ns, args, secs):
        """pfb_load ARGS once per CPU (pinned), all for SECS: their outputs."""
        pre = "ip netns exec %s " % ns if ns else ""
        procs = [subprocess.Popen("%staskset -c %d %s %s -t %f" %
                                  (pre, c, self.load_tool(), args, secs),
                                  shell=True, stdout=subprocess.PIPE, text=True)
                 for c in range(self.ncpu)]
        return [json.loads(p.communicate()[0] or "{}") for p in procs]

    def udp(self, scen, secs):
        if scen == "nic":
            self.senders(None, "stream -d %s -p 9 -s 64" % NIC_DST, secs)
            return {}
        sink = self.peer_server("sink -p 9200 -i 500", secs + 3)
        self.senders(self.ns[0], "stream -d 10.77.0.2 -p 9200 -s 64", secs)
        out = json.loads(sink.communicate()[0])
        return {"received": out["received"]}

    def tcp(self, secs):
        sink = self.peer_server("tcpsink -p 9202 -i 1000", secs + 5)
        sent = self.senders(self.ns[0], "tcpstream -d 10.77.0.2 -p 9202 -s 16384", secs)
        out = json.loads(sink.communicate()[0])
        # a flow that never connected leaves a figure of fewer flows than
        # the table says: that is an error, not a result
        flows = sum(1 for s in sent if "bytes" in s)
        if flows != self.ncpu or out["connections"] != self.ncpu:
            raise RuntimeError("tcp: %d of %d senders ran, the sink saw %d connections" %
                               (flows, self.ncpu, out["connections"]))
        return {"rcvd_bytes": out["bytes"]}

    def rr(self, secs):
        echo = self.peer_server("echo -p 9201", secs + 1)
        out = json.loads(sh("%s rr -d 10.77.0.2 -p 9201 -s 64 -t %f" %
                            (self.load_tool(), secs), ns=self.ns[0]))
        echo.communicate()
        return {k: out[k] for k in ("p50_us", "p90_us", "p95_us", "p99_us")}

    def run_load(self, scen, load, secs):
        dev, ns = self.target(scen, load)
        if load in PKTGEN_LOADS:
            size, paced = PKTGEN_LOADS[load]
            return self.pktgen(dev, size, secs,
                               pace_delay_ns(self.args.pace_gap_us, self.ncpu) if paced else 0)
        if load == "udp":
            return self.udp(scen, secs)
        if load == "tcp":
            # one MSS per skb through the qdisc, as the 2014 figure's GSO off
            sh("ip link set %s gso_max_segs 1" % dev, ns=ns)
            try:
                return self.tcp(secs)
            finally:
                sh("ip link set %s gso_max_segs 65535" % dev, ns=ns)
        return self.rr(secs)

    # one measurement
    def snapshot(self, dev, ns, ifindex, probes):
        s = {"tx": link_stat(dev, "tx_packets", ns), "qdisc": qdisc_stats(dev, ns),
             "eth": ethtool_stats(dev, ns) if dev != self.nic or self.nic_kicks else {}}
        if probes:
            s["locks"], s["batches"] = probes.snapshot(ifindex)
        s["cpu"], s["t"] = busy_jiffies(), time.time()
        return s

    def measure(self, scen, load, config, secs, probes):
        dev, ns = self.target(scen, load)
        self.set_qdisc(dev, ns, config)
        self.wait_settled(dev, ns)
        ifindex = self.ifindex[dev]
        self.start_background(config, dev, ns)
        try:
            s0 = self.snapshot(dev, ns, ifindex, probes)
            extra = self.run_load(scen, load, secs)
            s1 = self.snapshot(dev, ns, ifindex, probes)
        finally:
            dumps = self.stop_background()
        fig = figures(s0, s1, extra, load, probes is not None, dumps)
        if scen != "nic" and SCENARIOS[scen][1]:
            # a line slower than the senders: they spin on a full queue, and
            # busy CPU per packet measures that spinning, nothing else
            fig.pop("cpu_ns_per_pkt", None)
        return fig


def figures(s0, s1, extra, load, counting, dumps):
    """The figures of one measurement from its two snapshots."""
    q0, q1 = s0["qdisc"], s1["qdisc"]
    sent = s1["tx"] - s0["tx"]
    dropped = count_diff(q0, q1, "drops")
    offered = count_diff(q0, q1, "packets") + dropped + count_diff(q0, q1, "qlen")
    secs = s1["t"] - s0["t"]
    fig = {}
    if counting:
        fig.update(offered=offered, sent=sent, dropped=dropped)
        total = 0
        for name in LOCKS:
            hits = s1["locks"][name] - s0["locks"][name]
            total += hits
            fig[name + "_per_pkt"] = hits / sent if sent else None
            fig[name + "_per_offered"] = hits / offered if offered else None
        fig["lockops_per_pkt"] = total / sent if sent else None
        fig["lockops_per_offered"] = total / offered if offered else None
        b0 = s0["batches"]
        batches = {k: v - b0.get(k, 0) for k, v in s1["batches"].items() if v > b0.get(k, 0)}
        # a packet the driver hands back (a requeue) leaves later from the
        # core's requeue list, one per dequeue: an event of 1 of its own for
        # a packet already counted in the batch it came in. Not a batch the
        # qdisc built; the xstats do not count it either.
        fig["requeues"] = count_diff(q0, q1, "requeues")
        requeued = min(fig["requeues"], batches.get(1, 0))
        if requeued:
            batches[1] -= requeued
        nb = sum(batches.values())
        traced = sum(k * v for k, v in batches.items())
        fig["mean_batch"] = traced / nb if nb else None
        fig["hist"] = bucketize(batches)
        # pfifo_bulk, pfifo, pfifo_fast, fq_codel (TCQ_F_CAN_BYPASS) hand a packet that finds
        # the queue empty and idle straight to the driver: no dequeue, no
        # event, a batch of 1 the tracepoint never sees. The qdisc counts it.
        qsent = count_diff(q0, q1, "packets")
        if qsent > 0:
            bypassed = max(0, qsent - traced)
            fig["bypass_share"] = bypassed / qsent
            fig["mean_batch_all"] = ((traced + bypassed) / (nb + bypassed)
                                     if nb + bypassed else None)
    else:
        fig.update(offered_pps=offered / secs, pps=sent / secs, dropped_pps=dropped / secs)
        hz = os.sysconf("SC_CLK_TCK")
        cpu_ns = (s1["cpu"] - s0["cpu"]) * 1e9 / hz
        fig["cpu_ns_per_pkt"] = cpu_ns / sent if sent else None
        if "rcvd_bytes" in extra:
            mb = extra["rcvd_bytes"] / 1e6
            fig["mbps"] = mb * 8 / secs
            fig["svc_us_per_mb"] = cpu_ns / 1e3 / mb if mb else None
        for k in ("p50_us", "p90_us", "p95_us", "p99_us"):
            if k in extra:
                fig[k] = extra[k]
        if load == "rr":
            # one request in flight: rates and CPU say nothing here
            for k in ("offered_pps", "pps", "dropped_pps", "cpu_ns_per_pkt"):
                fig.pop(k, None)
        if dumps is not None:
            fig["dumps_per_s"] = dumps
    # the qdisc's own batch counters (pfifo_bulk), its coalescing, and the
    # driver's doorbells
    nb = count_diff(q0, q1, "batches")
    if "batches" in q1:
        fig["qd_mean_batch"] = count_diff(q0, q1, "batch_pkts") / nb if nb else None
        h0, h1 = q0.get("batch_hist") or {}, q1.get("batch_hist") or {}
        fig["qd_hist"] = [h1.get(b, 0) - h0.get(b, 0) for b in BUCKETS]
    if "held" in q1 and (q1.get("options") or {}).get("coalesce_usecs"):
        fig.update(coalescing(q0, q1))
    e0, e1 = s0["eth"], s1["eth"]
    db0, db1 = doorbell_count(e0), doorbell_count(e1)
    if "tx_doorbells" in e1:
        # refnic: its own tx_packets, read with its doorbells
        ntx = count_diff(e0, e1, "tx_packets")
        if ntx > 0:
            fig["doorbells_per_pkt"] = (db1 - db0) / ntx
            fig["db_hist"] = [count_diff(e0, e1, k) for k in DB_BUCKETS]
    elif db0 is not None and db1 is not None and sent > 0:
        # virtio_net: kicks per sent packet (6.12 has no TX packet count
        # in ethtool -S)
        fig["doorbells_per_pkt"] = (db1 - db0) / sent
    if "pktgen_offered" in extra:
        fig["pktgen_offered"] = extra["pktgen_offered"]
    for k in ("pg_runs_per_frame", "pg_cpu_ns_per_frame"):
        if k in extra:
            fig[k] = extra[k]
    return fig


# --- statistics ----------------------------------------------------------------

# Student's t, two-sided 95 %, by degrees of freedom
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
       2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086]


def t95(df):
    if df < 1:
        return None
    return T95[int(df) - 1] if df <= len(T95) else 1.96 + 2.5 / df


def mean_sd(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None, None, 0
    m = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
    return m, sd, len(xs)


def aggregate(runs):
    """runs: the figure dicts of one (scenario, load, config, phase)."""
    agg = {}
    for key in FIGURES:
        m, sd, n = mean_sd([r.get(key) for r in runs])
        if m is not None:
            agg[key] = {"mean": m, "sd": sd, "n": n}
    for key in HISTS:
        hists = [r[key] for r in runs if r.get(key)]
        if not hists:
            continue
        shares = [[x / (sum(h) or 1) for x in h] for h in hists]
        agg[key] = {"counts": [sum(h[i] for h in hists) for i in range(len(BUCKETS))],
                    "share": [mean_sd([s[i] for s in shares])[:2] for i in range(len(BUCKETS))]}
    m = mean_sd([r.get("pktgen_offered") for r in runs])[0]
    if m is not None:
        agg["pktgen_offered"] = m
    return agg


def ratio_ci(a, b):
    """(ratio of means a/b, low, high) with a 95 % interval on the log
    scale (Welch); low and high None when a side has n < 2 or a zero."""
    ma, mb = a["mean"], b["mean"]
    if not mb:
        return None, None, None
    r = ma / mb
    if a["n"] < 2 or b["n"] < 2 or ma <= 0 or mb <= 0:
        return r, None, None
    va, vb = (a["sd"] / ma) ** 2 / a["n"], (b["sd"] / mb) ** 2 / b["n"]
    if va + vb == 0:
        return r, r, r
    df = (va + vb) ** 2 / ((va ** 2 / (a["n"] - 1)) + (vb ** 2 / (b["n"] - 1)))
    half = t95(max(1, math.floor(df))) * math.sqrt(va + vb)
    return r, r * math.exp(-half), r * math.exp(half)


def judge(r, lo, hi, target):
    """A target ("≤"|"≥", value) against a ratio and its interval: met,
    MISSED (the interval is past it), or 'within noise' (it straddles)."""
    if r is None:
        return "n/a"
    if lo is None:
        return "n/a (no interval: n < 2)"
    op, val = target
    if (hi <= val) if op == "≤" else (lo >= val):
        return "met"
    if (lo > val) if op == "≤" else (hi < val):
        return "MISSED"
    return "within noise"


def ratios(cfgs):
    """The ratios of one table: [{cand, base, phase, figure, ratio, low,
    high, target, verdict}]."""
    out = []
    for cand, base in RATIOS:
        if cand not in cfgs or base not in cfgs:
            continue
        for phase, keys in RATIO_FIGS.items():
            a, b = cfgs[cand].get(phase, {}), cfgs[base].get(phase, {})
            for k in keys:
                if k not in a or k not in b:
                    continue
                r, lo, hi = ratio_ci(a[k], b[k])
                target = TARGETS.get((cand, base, phase, k))
                out.append({"cand": cand, "base": base, "phase": phase, "figure": k,
                            "ratio": r, "low": lo, "high": hi,
                            "target": "%s %g" % target if target else None,
                            "verdict": judge(r, lo, hi, target) if target else None})
    return out


def regressions(cfgs):
    """Figures where a candidate is worse than its base beyond noise: the
    whole interval on the worse side, by more than 1 %. Spin locks are
    judged on the combined figure only: a lockless qdisc trades locks for
    trylocks by design, so a split figure alone says nothing."""
    out = []
    for cand, base in REGRESSIONS:
        if cand not in cfgs or base not in cfgs:
            continue
        for phase in ("count", "time"):
            a, b = cfgs[cand].get(phase, {}), cfgs[base].get(phase, {})
            for k, (_, _, better) in FIGURES.items():
                if not better or k not in a or k not in b or k in SPLIT_LOCK_FIGS:
                    continue
                r, lo, hi = ratio_ci(a[k], b[k])
                if lo is None:
                    continue
                if (better == "low" and lo > 1.01) or (better == "high" and hi < 0.99):
                    out.append((cand, base, phase, k, r, lo, hi))
    return out


# --- the report ------------------------------------------------------------------

def fmt(agg, key):
    if key not in agg:
        return "-"
    f = FIGURES[key][1]
    return (f + " ± " + f).format(agg[key]["mean"], agg[key]["sd"])


def fmt_ratio(r, lo, hi):
    if r is None:
        return "n/a"
    if lo is None:
        return "%.3f" % r
    return "%.3f [%.3f, %.3f]" % (r, lo, hi)


def scenario_title(scen, meta):
    if scen == "nic":
        nic = meta.get("nic") or {}
        return "%s (%s, BQL %s)" % (nic.get("driver", "NIC"), meta.get("nic_dev"),
                                    "on" if nic.get("bql") else
                                    "off: stock qdiscs send batches of 1")
    return "%s, doorbell %d ns" % (SCENARIOS[scen][2], meta["doorbell_ns"])


def load_title(load, pace):
    """A load's description; a paced one's with its pace."""
    if not PKTGEN_LOADS.get(load, (0, False))[1] or "gap_us" not in (pace or {}):
        return LOADS[load]
    return "%s: a frame every %g us from all threads (%.0f frames/s), %d ns per thread" % (
        LOADS[load], pace["gap_us"], pace["frames_per_s"], pace["delay_ns_per_thread"])


def coalesce_title(meta, cfgs):
    """The coalescing windows of the configurations of a table, or ''."""
    windows = ["%s: %s" % (c, meta["configs"][c].replace("pfifo_bulk ", ""))
               for c in cfgs if c in ("coalesce", "coalesce50") and c in meta["configs"]]
    return " · " + "; ".join(windows) if windows else ""


def table_header(scen, load, meta, cfgs=()):
    return "== %s · %s · %s · kernel %s · n=%d x %g s%s" % (
        scenario_title(scen, meta), load_title(load, meta.get("pace")), REGIMES[meta["regime"]],
        meta["kernel"], meta["reps"], meta["seconds"], coalesce_title(meta, cfgs))


def report(results, meta, perf):
    lines = ["pfifo_bulk benchmark: kernel %s, %s, %d CPUs, n=%d x %g s, configurations "
             "alternated" % (meta["kernel"], REGIMES[meta["regime"]], meta["cpus"],
                             meta["reps"], meta["seconds"]),
             "refnic doorbell cost: %d ns (%s)" % (meta["doorbell_ns"], meta["doorbell_origin"]),
             "doorbells/pkt: refnic tx_doorbells, virtio_net TX kicks (summed over its TX "
             "queues) per sent packet; blank for a driver that counts neither (e1000e)"]
    pace = meta.get("pace") or {}
    if "gap_us" in pace:
        lines.append("pace (paced64): a frame every %g us from all %d pktgen threads "
                     "together, %.0f frames/s; pktgen delay %d ns per thread" % (
                         pace["gap_us"], pace["threads"], pace["frames_per_s"],
                         pace["delay_ns_per_thread"]))
    for c in ("coalesce", "coalesce50"):
        if c in meta["configs"]:
            lines.append("%s: %s%s" % (c, meta["configs"][c], (
                " (window: %s)" % pace["coalesce_origin"]) if c == "coalesce" else ""))
    if meta.get("nic"):
        lines.append("real NIC: %s, driver %s %s, BQL %s" % (
            meta["nic_dev"], meta["nic"].get("driver"), meta["nic"].get("version"),
            "in use" if meta["nic"].get("bql") else "not in use"))
    if meta["pfb_locked"]:
        commit = (meta["pfb_locked"]["commit"] or "? ").split(" ", 1)
        lines.append("pfb_locked: pfifo_bulk as of %s %s (%s)" % (
            commit[0][:12], commit[1], os.path.relpath(meta["pfb_locked"]["ko"], TOP)))
    lines.append("clocksource %s%s" % (meta.get("clocksource"), (
        "; unbound for the run: %s (off the clocksource watchdog, whose verdict "
        "would patch kernel text)" %
        ", ".join(meta["clocksources_unbound"])) if meta.get("clocksources_unbound") else ""))
    for key, when in (("text_patched_setup", "before the measurements (drivers, devices)"),
                      ("text_patched_run", "over the measurements (start to end)")):
        v = meta.get(key)
        lines.append("kernel text patched %s: %s" % (
            when, "not checked (no /proc/kcore)" if v is None else ", ".join(v[:8]) or "none"))
    if meta["regime"] == "parallel" and meta.get("text_patched_run"):
        lines.append("WARNING: kernel text changed under running vCPUs during this run: "
                     "multi-threaded TCG may have run stale code")
    if meta["regime"] not in COUNTING:
        lines.append("no spin-lock counts or tracepoint batches in this regime (text "
                     "patching is unsafe): batches from xstats and refnic ethtool -S")
    lines.append("")
    regress = []
    for scen, loads in results.items():
        for load, cfgs in loads.items():
            for cand, base, phase, k, r, lo, hi in regressions(cfgs):
                regress.append("  %s / %s: %s %s is %s vs %s %s (ratio %s)" % (
                    scen, load, cand, FIGURES[k][0], fmt(cfgs[cand][phase], k), base,
                    fmt(cfgs[base][phase], k), fmt_ratio(r, lo, hi)))
    lines.append("REGRESSIONS (the 95 %% interval of the ratio worse by > 1 %%; spin locks "
                 "on the combined figure: %s):" % ", ".join("%s vs %s" % p for p in REGRESSIONS))
    lines.extend(regress or ["  none"])
    lines.append("")
    for scen, loads in results.items():
        for load, cfgs in loads.items():
            lines.append(table_header(scen, load, meta, cfgs))
            for phase, rows in TABLES.items():
                if not any(phase in c for c in cfgs.values()):
                    continue
                lines.append("%s, %s:" % (PHASE_TITLE[phase], REGIMES[meta["regime"]]))
                for title, keys in rows:
                    keys = [k for k in keys if any(k in c.get(phase, {}) for c in cfgs.values())]
                    if not keys:
                        continue
                    lines.append("  %-22s" % (title + ":") +
                                 "".join("%19s" % FIGURES[k][0] for k in keys))
                    for cfg, agg in cfgs.items():
                        lines.append("  %-22s" % cfg +
                                     "".join("%19s" % fmt(agg.get(phase, {}), k) for k in keys))
            agree = batch_agreement(cfgs)
            if agree:
                lines.append("batch means, tracepoint vs pfifo_bulk xstats (same runs): " +
                             ", ".join("%s %+.1f %%%s" % (c, 100 * d, "" if abs(d) <= 0.05
                                                          else " (MORE THAN 5 %)")
                                       for c, d in agree))
            rows = {}
            for r in ratios(cfgs):
                text = "%s (%s) %s" % (FIGURES[r["figure"]][0], r["phase"],
                                       fmt_ratio(r["ratio"], r["low"], r["high"]))
                if r["target"]:
                    text += " (target %s: %s)" % (r["target"], r["verdict"])
                rows.setdefault("%s/%s" % (r["cand"], r["base"]), []).append(text)
            if rows:
                lines.append("ratios of means, same run, 95 % interval:")
                for pair, t in rows.items():
                    lines.append("  %s:" % pair)
                    lines.extend("      " + x for x in t)
            for key, what in HISTS.items():
                # the tracepoint's from the count phase; xstats and doorbells
                # from the time phase (the only one in the parallel regime)
                for phase in ("count",) if key == "hist" else ("time",):
                    hc = [(c, a[phase][key]) for c, a in cfgs.items() if key in a.get(phase, {})]
                    if not hc:
                        continue
                    lines.append("batch histogram (%s, %s phase), share of batches ± sd "
                                 "over runs:" % (what, phase))
                    lines.append("  %-22s" % "" + "".join("%12s" % b for b in BUCKETS))
                    for c, h in hc:
                        lines.append("  %-22s" % c + "".join(
                            "%12s" % ("%.1f±%.1f%%" % (100 * m, 100 * (sd or 0)))
                            for m, sd in h["share"]))
            p = (perf or {}).get(scen, {}).get(load)
            if p:
                lines.extend(perf_lines(p))
            lines.append("")
    return "\n".join(lines)


def batch_agreement(cfgs):
    """[(config, xstats mean / tracepoint mean - 1)] for pfifo_bulk configs
    measured both ways in the same count runs."""
    out = []
    for c, a in cfgs.items():
        cnt = a.get("count", {})
        if "mean_batch" in cnt and "qd_mean_batch" in cnt and cnt["mean_batch"]["mean"]:
            out.append((c, cnt["qd_mean_batch"]["mean"] / cnt["mean_batch"]["mean"] - 1))
    return out


# --- perf ------------------------------------------------------------------------

def perf_cmd(perf):
    """perf, and in the VM perf in a mount namespace of its own with an
    empty /lib/modules: perf walks that tree (over 9p there) on every start,
    which took 10 s of a 13 s perf record under TCG. Symbols come from
    /proc/kallsyms (modules included)."""
    if not os.environ.get("PFB_VM"):
        return [perf]
    return ["unshare", "-m", "sh", "-c",
            'mount -t tmpfs none /lib/modules && exec "$@"', "sh", perf]


def perf_report(perf, data):
    """({symbol: samples}, total samples) of one perf.data, or an error."""
    r = subprocess.run(perf_cmd(perf) + ["report", "-i", data, "--stdio", "-n", "--sort", "sym",
                        "--kallsyms=/proc/kallsyms"], capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("perf report %s: %s" % (data, r.stderr.strip()[-500:]))
    syms = {}
    for line in r.stdout.splitlines():
        m = re.match(r"\s*[\d.]+%\s+(\d+)\s+\[.\]\s+(\S+)", line)
        if m:
            syms[m.group(2)] = syms.get(m.group(2), 0) + int(m.group(1))
    if not syms:
        raise RuntimeError("perf report %s: no samples" % data)
    return syms, sum(syms.values())


def perf_compare(bench, scen, load, configs, secs, outdir):
    """perf record -a -e cpu-clock of each configuration under the load,
    perf diff against the first, the lock symbols ranked. Errors are kept
    as errors."""
    perf = shutil.which("perf")
    if not perf:
        return {"error": "perf not found"}
    out = {"configs": configs, "seconds": secs, "profiles": {}, "errors": []}
    files = {}
    for cfg in configs:
        dev, ns = bench.target(scen, load)
        bench.set_qdisc(dev, ns, cfg)
        bench.wait_settled(dev, ns)
        data = os.path.join(outdir, "perf-%s-%s-%s.data" % (scen, load, cfg))
        # With -a, perf enables its events just before it starts the
        # workload, after a setup that takes seconds under TCG: the
        # workload says "go" when sampling is on and ends when its stdin
        # closes, so the profile covers the load and nothing else.
        # -B -N: no build-id pass over the data at the end (slow in TCG)
        rec = subprocess.Popen(perf_cmd(perf) + ["record", "-q", "-B", "-N", "-a",
                                                 "-e", "cpu-clock",
                                "-F", str(PERF_HZ),
                                "-o", data, "--", "sh", "-c", "echo go; read x; exit 0"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        go = rec.stdout.readline().strip()
        if go == "go":
            bench.start_background(cfg, dev, ns)
            try:
                bench.run_load(scen, load, secs)
            finally:
                bench.stop_background()
        err = rec.communicate()[1]	# closes the workload's stdin: it ends
        if go != "go" and not rec.returncode:
            out["errors"].append("perf record (%s): never started sampling" % cfg)
            continue
        if rec.returncode:
            out["errors"].append("perf record (%s): exit %d: %s" % (cfg, rec.returncode,
                                                                   err.strip()[-500:]))
            continue
        log("bench: perf %s %s %s recorded" % (scen, load, cfg))
        try:
            syms, total = perf_report(perf, data)
        except RuntimeError as e:
            out["errors"].append(str(e))
            continue
        log("bench: perf %s %s %s: %d samples" % (scen, load, cfg, total))
        files[cfg] = data
        out["profiles"][cfg] = {"total": total,
                                "locks": {s: n for s, n in syms.items() if LOCK_SYMBOL.search(s)}}
    if len(files) >= 2:
        names = list(files)
        r = subprocess.run(perf_cmd(perf) + ["diff", "--kallsyms=/proc/kallsyms"] +
                           [files[c] for c in names], capture_output=True, text=True)
        log("bench: perf diff %s %s done" % (scen, load))
        path = os.path.join(outdir, "perf-diff-%s-%s.txt" % (scen, load))
        with open(path, "w") as f:
            f.write("# perf diff %s\n" % " ".join(names))
            f.write(r.stdout)
            if r.returncode:
                f.write("# ERROR: exit %d\n%s" % (r.returncode, r.stderr))
        if r.returncode or not r.stdout.strip():
            out["errors"].append("perf diff: exit %d: %s" % (r.returncode,
                                                              r.stderr.strip()[-500:]))
        else:
            out["diff_file"] = os.path.relpath(path, outdir)
            out["diff_configs"] = names
            out["diff_locks"] = [l.rstrip() for l in r.stdout.splitlines()
                                 if not l.startswith("#") and LOCK_SYMBOL.search(l)]
    return out


def perf_loads(bench, scen, loads):
    """The loads perf records in a scenario: the first pktgen load, and tcp
    (the 2014 TCP_STREAM figure)."""
    pktgen = [l for l in loads if l.startswith("pktgen")][:1]
    return [l for l in pktgen + [l for l in loads if l == "tcp"] if bench.applies(scen, l)]


def perf_lines(p):
    lines = ["perf (cpu-clock, %d Hz per CPU, %g s per configuration): lock symbols, "
             "share of all samples (samples)" % (PERF_HZ, p.get("seconds", 0))]
    for e in p.get("errors", []) + ([p["error"]] if "error" in p else []):
        lines.append("  PERF ERROR: " + e)
    profs = p.get("profiles", {})
    if profs:
        syms = sorted({s for pr in profs.values() for s in pr["locks"]},
                      key=lambda s: -max(pr["locks"].get(s, 0) for pr in profs.values()))
        lines.append("  %-36s" % "symbol" + "".join("%22s" % c for c in profs))
        lines.append("  %-36s" % "(all samples)" +
                     "".join("%22d" % pr["total"] for pr in profs.values()))
        for s in syms[:10]:
            lines.append("  %-36s" % s + "".join(
                "%22s" % ("%.2f%% (%d)" % (100.0 * pr["locks"].get(s, 0) / pr["total"],
                                           pr["locks"].get(s, 0)))
                for pr in profs.values()))
        # ranks hold when neighbours differ by more than 2 sqrt(n) samples
        for c, pr in profs.items():
            ranked = sorted(pr["locks"].values(), reverse=True)[:4]
            ok = all(a - b > 2 * math.sqrt(a + b) for a, b in zip(ranked, ranked[1:]))
            lines.append("  %s: top lock symbols %s (Poisson, 2 sigma)" % (
                c, "rank apart" if ok else "do not all rank apart: more seconds needed"))
    if p.get("diff_locks"):
        lines.append("  perf diff %s (baseline %s; %s): lock rows:" % (
            " ".join(p["diff_configs"]), p["diff_configs"][0], p["diff_file"]))
        lines.extend("    " + l.strip() for l in p["diff_locks"][:8])
    return lines


# --- plots ---------------------------------------------------------------------

def gnuplot(script_lines, out_base, width, height):
    """Render a gnuplot script to out_base.png and .svg; the files made."""
    if not shutil.which("gnuplot"):
        return []
    made = []
    for term, ext in (("pngcairo size %d,%d" % (width, height), "png"),
                      ("svg size %d,%d" % (width, height), "svg")):
        out = out_base + "." + ext
        head = ["set terminal %s noenhanced" % term, "set output '%s'" % out]
        r = subprocess.run(["gnuplot"], input="\n".join(head + script_lines), text=True,
                           capture_output=True)
        if r.returncode and ext == "png":
            # pngcairo may be missing in gnuplot-nox: the plain png terminal
            head[0] = "set terminal png size %d,%d noenhanced" % (width, height)
            r = subprocess.run(["gnuplot"], input="\n".join(head + script_lines), text=True,
                               capture_output=True)
        if r.returncode == 0:
            made.append(out)
    return made


def plot(results, outdir, regime):
    """Per table: combined spin-lock calls per packet, pps, mean batch
    (tracepoint and xstats), doorbells per packet, by configuration."""
    dat = os.path.join(outdir, "plot.dat")
    panels = []
    with open(dat, "w") as f:
        idx = 0
        for scen, loads in results.items():
            for load, cfgs in loads.items():
                figs = [(ph, k) for ph, k in PLOTTED
                        if any(k in c.get(ph, {}) for c in cfgs.values())]
                if not figs:
                    continue
                f.write("# %s %s\n" % (scen, load))
                for cfg, a in cfgs.items():
                    row = [cfg]
                    for ph, k in figs:
                        v = a.get(ph, {}).get(k)
                        row += ["%g" % v["mean"], "%g" % v["sd"]] if v else ["0", "0"]
                    f.write(" ".join(row) + "\n")
                f.write("\n\n")
                panels.append((idx, "%s, %s, %s" % (scen, load, regime), figs))
                idx += 1
    if not panels:
        return []
    cols = max(len(p[2]) for p in panels)
    script = ["set multiplot layout %d,%d" % (len(panels), cols),
              "set style data histogram", "set style histogram errorbars gap 1 lw 1",
              "set style fill solid 0.6", "set xtics rotate by -30", "set key off",
              "set yrange [0:*]"]
    for idx, title, figs in panels:
        for i in range(cols):
            if i >= len(figs):
                script.append("set multiplot next")
                continue
            col = 2 + 2 * i
            script.append("set title '%s: %s'" % (title, FIGURES[figs[i][1]][0]))
            script.append("plot '%s' index %d using %d:%d:xtic(1)" % (dat, idx, col, col + 1))
    script.append("unset multiplot")
    return gnuplot(script, os.path.join(outdir, "bench"), 400 * cols, 320 * len(panels))


# --- the headline (host side, over several runs) ------------------------------------

HEADLINE_SCENARIOS = ("cpu-bound", "nic")
HEADLINE_BASES = ("pfifo", "pfifo_fast")
HEADLINE_FIGS = (("count", "lockops_per_pkt", "combined spin-lock calls/pkt"),
                 ("time", "pps", "pps"))
# the absolute figures printed under the headline, per run
HEADLINE_ABS = (("time", "offered_pps"), ("time", "pps"), ("time", "dropped_pps"),
                ("count", "offered"), ("count", "sent"), ("count", "dropped"),
                ("count", "lockops_per_pkt"), ("count", "lockops_per_offered"),
                ("count", "mean_batch"), ("count", "qd_mean_batch"),
                ("time", "qd_mean_batch"))
# the same figure in both phases: say which
ABS_LABEL = {("count", "qd_mean_batch"): "xstats (count)",
             ("time", "qd_mean_batch"): "xstats (time)"}


def headline(dirs, outdir):
    """One table over the results.json of DIRS: pfifo_bulk against pfifo and
    pfifo_fast, combined spin-lock calls per packet and pps, on refnic
    CPU-bound and the real NIC, per kernel and regime; and its plot."""
    rows, figs, seen = [], [], set()
    for d in dirs:
        path = d if d.endswith(".json") else os.path.join(d, "results.json")
        with open(path) as f:
            res = json.load(f)
        meta = res["meta"]
        for scen in HEADLINE_SCENARIOS:
            for load, cfgs in res["results"].get(scen, {}).items():
                if not load.startswith("pktgen") or "pfifo_bulk" not in cfgs:
                    continue
                for base in HEADLINE_BASES:
                    if base not in cfgs:
                        continue
                    row = {"kernel": meta["kernel"], "regime": meta["regime"],
                           "where": (meta["nic"]["driver"] + (" (BQL)" if meta["nic"]["bql"]
                                                              else " (no BQL)")
                                     if scen == "nic" else
                                     "refnic CPU-bound, doorbell %d ns" % meta["doorbell_ns"]),
                           "load": load, "base": base, "reps": meta["reps"],
                           "seconds": meta["seconds"], "source": os.path.relpath(path, outdir)}
                    for phase, k, _ in HEADLINE_FIGS:
                        a = cfgs["pfifo_bulk"].get(phase, {}).get(k)
                        b = cfgs[base].get(phase, {}).get(k)
                        row[k] = list(ratio_ci(a, b)) if a and b else None
                        target = TARGETS.get(("pfifo_bulk", base, phase, k))
                        if target and row[k]:
                            row[k + "_verdict"] = "%s %g: %s" % (target + (
                                judge(*row[k], target),))
                    rows.append(row)
                key = (meta["kernel"], meta["regime"], scen, load)
                if key not in seen:
                    seen.add(key)
                    figs.append((meta, scen, load, cfgs, os.path.relpath(path, outdir)))
    lines = ["HEADLINE: pfifo_bulk / base, ratio of means [95 % interval]; lock calls "
             "= _raw_spin_lock + trylock + _bh + _irqsave + _irq + trylock_bh per sent "
             "packet (interleaved regime only: kprobes)",
             "%-21s %-12s %-34s %-9s %-11s %-25s %s" % (
                 "kernel", "regime", "driver, scenario", "load", "vs",
                 "lock calls/pkt (lower)", "pps (higher)")]
    for r in rows:
        lines.append("%-21s %-12s %-34s %-9s %-11s %-25s %s" % (
            r["kernel"], r["regime"], r["where"][:34], r["load"], r["base"],
            fmt_ratio(*r["lockops_per_pkt"]) if r["lockops_per_pkt"] else "-",
            fmt_ratio(*r["pps"]) if r["pps"] else "-"))
        verdicts = ["%s %s" % (k, r[k + "_verdict"]) for _, k, _ in HEADLINE_FIGS
                    if r.get(k + "_verdict")]
        if verdicts:
            lines.append("%-21s target (the whole interval must clear it): %s" % (
                "", "; ".join(verdicts)))
    lines += ["", "the figures behind the ratios, mean ± stddev over n runs of each "
              "configuration (count phase: probes on; time phase: probes off):"]
    for meta, scen, load, cfgs, source in figs:
        lines.append("  kernel %s, %s, %s, %s, n=%d x %g s (%s)" % (
            meta["kernel"], REGIMES[meta["regime"]], scenario_title(scen, meta), LOADS[load],
            meta["reps"], meta["seconds"], source))
        lines.append("    command: %s" % meta.get("command", "?"))
        keys = [(ph, k) for ph, k in HEADLINE_ABS
                if any(k in c.get(ph, {}) for c in cfgs.values())]
        lines.append("    %-12s" % "" + "".join("%19s" % ABS_LABEL.get((ph, k), FIGURES[k][0])
                                                 for ph, k in keys))
        for c in ("pfifo_bulk",) + HEADLINE_BASES:
            if c in cfgs:
                lines.append("    %-12s" % c + "".join("%19s" % fmt(cfgs[c].get(ph, {}), k)
                                                     for ph, k in keys))
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "headline.json"), "w") as f:
        json.dump(rows, f, indent=1)
    text = "\n".join(lines)
    with open(os.path.join(outdir, "headline.txt"), "w") as f:
        f.write(text + "\n")
    # the plot: one bar per row and figure, with its interval
    dat = os.path.join(outdir, "headline.dat")
    with open(dat, "w") as f:
        for _, k, _ in HEADLINE_FIGS:
            for r in rows:
                v = r.get(k)
                if not v or v[0] is None:
                    continue
                label = "%s %s %s / %s" % (".".join(r["kernel"].split(".")[:2]),
                                           r["regime"][:5], r["where"].split(",")[0]
                                           .split(" (")[0].replace("refnic CPU-bound", "refnic"),
                                           r["base"])
                if True:
                    f.write('"%s" %g %g %g\n' % (label, v[0], v[1] if v[1] is not None else v[0],
                                                 v[2] if v[2] is not None else v[0]))
            f.write("\n\n")
    script = ["set multiplot layout 1,%d" % len(HEADLINE_FIGS),
              "set style data histogram", "set style histogram errorbars gap 1 lw 1",
              "set style fill solid 0.6", "set xtics rotate by -40 font ',8'", "set key off",
              "set logscale y", "set yrange [0.1:10]",
              "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2"]
    for i, (_, _, title) in enumerate(HEADLINE_FIGS):
        script.append("set title 'pfifo_bulk / base: %s'" % title)
        script.append("plot '%s' index %d using 2:3:4:xtic(1)" % (dat, i))
    script.append("unset multiplot")
    plots = gnuplot(script, os.path.join(outdir, "headline"), 1200, 520)
    return text, plots


# --- main ----------------------------------------------------------------------

def parse_args():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    in_vm = bool(os.environ.get("PFB_VM"))
    ap.add_argument("-n", "--reps", type=int, default=3 if in_vm else 10)
    ap.add_argument("-t", "--seconds", type=float, default=2 if in_vm else 10)
    ap.add_argument("-c", "--configs",
                    help="default: %s (pfb_locked when its module is built); also "
                    "pfifo_bulk+tcdump (a 'tc -s qdisc show' loop of the device beside the "
                    "load), pfifo_bulk+tcdump_idle (the same loop on an idle pfifo_bulk "
                    "of another device), coalesce (pfifo_bulk coalesce_usecs "
                    "--coalesce-usecs coalesce_pkts %d) and coalesce50 (coalesce_usecs 50 "
                    "coalesce_pkts %d)" %
                    (",".join(DEFAULT_CONFIGS), COALESCE_PKTS, COALESCE_PKTS))
    ap.add_argument("--locked-ko", metavar="PATH",
                    help="sch_pfifo_bulk.ko for pfb_locked, loaded in place of the checkout's "
                    "while pfb_locked runs (default: .build/rev-%s/$(uname -r)/sch_pfifo_bulk.ko "
                    "from 'make rev-modules REV=%s')" % (LOCKED_REV, LOCKED_REV))
    ap.add_argument("-s", "--scenarios",
                    help="of %s (default: all; nic only with -d)" % ",".join(SCENARIOS))
    ap.add_argument("-l", "--loads", default="pktgen64,pktgen1500,udp,tcp,rr",
                    help="of %s" % ",".join(LOADS))
    ap.add_argument("--pace-gap-us", type=float, default=PACE_GAP_US, metavar="US",
                    help="paced64: the mean gap between frames of all pktgen threads "
                    "together (default %g us: %.0f frames/s); each thread waits gap x CPUs. "
                    "pktgen busy-waits for a delay under %d us (net/core/pktgen.c spin()), "
                    "which would make busy CPU per packet measure the waiting: a gap "
                    "whose delay per thread is under that is refused" % (
                        PACE_GAP_US, 1e6 / PACE_GAP_US, PKTGEN_SPIN_NS // 1000))
    ap.add_argument("--coalesce-usecs", type=int, metavar="US",
                    help="the window of the configuration coalesce (default: %d x the pace "
                    "gap, what %d frames take at that pace, so that a batch of %d can form "
                    "in it)" % (COALESCE_PKTS, COALESCE_PKTS, COALESCE_PKTS))
    ap.add_argument("-d", "--dev", help="a real NIC ('auto': the VM's NIC, its driver "
                    "loaded); scenario 'nic'")
    ap.add_argument("--dst-mac", default="02:00:00:00:00:02",
                    help="destination MAC of the NIC's traffic (a neighbour that is not there)")
    ap.add_argument("--regime", choices=list(REGIMES),
                    help="how the vCPUs run (default: interleaved in the VM, native "
                    "elsewhere); parallel measures no counts")
    ap.add_argument("--doorbell-ns", type=int,
                    help="refnic's doorbell cost (default: the module's, or %d ns when that "
                    "is 0)" % DOORBELL_NS)
    ap.add_argument("-o", "--outdir")
    ap.add_argument("--no-perf", action="store_true")
    ap.add_argument("--perf-seconds", type=float, help="per configuration (default: -t, "
                    "at least 3)")
    ap.add_argument("--dump-check", action="store_true",
                    help="pfifo_bulk with and without a 'tc -s qdisc show' loop (and the "
                    "loop on an idle pfifo_bulk), pktgen 64 B")
    ap.add_argument("--demo", action="store_true",
                    help="short run: pfifo_bulk, pfifo, pfifo_fast under pktgen 64 B on "
                    "refnic CPU-bound (and the NIC with -d), n=3 x 2 s, perf on refnic")
    ap.add_argument("--headline", nargs="+", metavar="DIR",
                    help="no run: merge the results.json of DIRs into the headline table "
                    "and plot, written to -o (host side)")
    return ap, ap.parse_args(), in_vm


def pace_problem(args):
    """Why the pace cannot be used, or None. Checked only when paced64
    runs: other loads do not use it."""
    if args.pace_gap_us <= 0:
        return "--pace-gap-us must be > 0"
    if "paced64" not in args.loads:
        return None
    ncpu = os.cpu_count()
    delay = pace_delay_ns(args.pace_gap_us, ncpu)
    if delay < PKTGEN_SPIN_NS:
        return ("--pace-gap-us %g: a pktgen delay of %d ns per thread (%d CPUs) is under "
                "%d us, where pktgen busy-waits between frames (net/core/pktgen.c spin()) "
                "and busy CPU per packet would measure the waiting: use a gap of at least "
                "%g us" % (args.pace_gap_us, delay, ncpu, PKTGEN_SPIN_NS // 1000,
                           PKTGEN_SPIN_NS / 1000 / ncpu))
    return None


def pace_meta(args):
    """The pace and the coalescing windows, for the report and results.json."""
    ncpu = os.cpu_count()
    out = {"coalesce_usecs": args.coalesce_usecs, "coalesce_origin": args.coalesce_origin,
           "coalesce_pkts": COALESCE_PKTS}
    if "paced64" in args.loads:
        out.update(gap_us=args.pace_gap_us, frames_per_s=1e6 / args.pace_gap_us,
                   delay_ns_per_thread=pace_delay_ns(args.pace_gap_us, ncpu), threads=ncpu)
    return out


def main():
    ap, args, in_vm = parse_args()
    if args.headline:
        outdir = args.outdir or os.path.dirname(os.path.abspath(args.headline[0]))
        text, plots = headline(args.headline, outdir)
        print(text)
        print("headline: %s" % ", ".join([os.path.join(outdir, "headline.txt")] + plots))
        return 0
    # tools/vm/run puts the guest's TCG threading on its command line: the
    # regime follows it, and counting (kprobes, tracepoints) is refused on
    # multi-threaded TCG, where patching kernel text has ended in Oopses
    tcg = re.search(r"\bpfb\.tcg_thread=(\w+)", read("/proc/cmdline"))
    tcg_regime = {"multi": "parallel", "single": "interleaved"}.get(tcg.group(1)) if tcg else None
    if args.regime and tcg_regime and args.regime != tcg_regime:
        ap.error("--regime %s in a guest on %s-threaded TCG (regime %s)" % (
            args.regime, tcg.group(1), tcg_regime))
    args.regime = args.regime or tcg_regime or ("interleaved" if in_vm else "native")
    if args.demo:
        args.reps, args.seconds = 3, 2
        args.scenarios = "cpu-bound" + (",nic" if args.dev else "")
        args.loads = "pktgen64"
        args.configs = args.configs or "pfifo_bulk,pfifo,pfifo_fast"
        args.perf_seconds = args.perf_seconds or 2
    if args.dump_check:
        args.configs = "pfifo_bulk,pfifo_bulk+tcdump,pfifo_bulk+tcdump_idle"
        args.loads = "pktgen64"
        args.scenarios = args.scenarios or "cpu-bound"
    asked = args.configs is not None
    args.configs = args.configs.split(",") if asked else list(DEFAULT_CONFIGS)
    args.scenarios = (args.scenarios.split(",") if args.scenarios else
                      [s for s in SCENARIOS if s != "nic" or args.dev])
    args.loads = args.loads.split(",")
    for name, table in (("configs", CONFIGS), ("scenarios", SCENARIOS), ("loads", LOADS)):
        bad = [x for x in getattr(args, name) if x not in table]
        if bad:
            ap.error("unknown %s: %s (known: %s)" % (name, ",".join(bad), ",".join(table)))
    if "nic" in args.scenarios and not args.dev:
        ap.error("scenario nic needs -d DEV or -d auto")
    if args.dev and "nic" not in args.scenarios:
        ap.error("-d %s without the scenario nic" % args.dev)
    if args.reps < 1 or args.seconds <= 0:
        ap.error("-n must be >= 1 and -t > 0")
    if args.doorbell_ns is not None and args.doorbell_ns < 0:
        ap.error("--doorbell-ns must be >= 0")
    problem = pace_problem(args)
    if problem:
        ap.error(problem)
    args.coalesce_origin = ("--coalesce-usecs" if args.coalesce_usecs is not None else
                            "%d x the pace gap" % COALESCE_PKTS)
    if args.coalesce_usecs is None:
        args.coalesce_usecs = int(round(COALESCE_PKTS * args.pace_gap_us))
    if not 1 <= args.coalesce_usecs <= 10000000:
        ap.error("--coalesce-usecs must be 1..10000000 (the qdisc's range; 0, off, is "
                 "pfifo_bulk)")
    CONFIGS["coalesce"] = "pfifo_bulk coalesce_usecs %d coalesce_pkts %d" % (
        args.coalesce_usecs, COALESCE_PKTS)
    if "pfb_locked" in args.configs:
        asked = asked or args.locked_ko is not None
        args.locked_ko = os.path.abspath(args.locked_ko or default_locked_ko())
        problem = locked_ko_problem(args.locked_ko)
        if problem and asked:
            ap.error("pfb_locked: " + problem)
        if problem:
            log("bench: pfb_locked skipped: " + problem)
            args.configs.remove("pfb_locked")
    if os.geteuid() != 0:
        log("SKIP: needs root")
        return 4
    text_boot = kernel_text()
    if args.dev == "auto":
        args.dev = find_nic()
        if not args.dev:
            log("bench: -d auto: no NIC (tools/vm/run -n virtio|e1000e)")
            return 1

    kernel = os.uname().release
    outdir = args.outdir or os.path.join(TOP, ".vm", "bench-%s-%s-%s" % (
        kernel, args.regime, time.strftime("%Y%m%d-%H%M%S")))
    os.makedirs(outdir, exist_ok=True)
    clocksource, unbound = (quiet_clocksource_watchdog() if args.regime == "parallel" else
                            (read(CLOCKSOURCE + "/current_clocksource").strip(), []))
    load_modules()
    doorbell_ns, doorbell_origin = set_doorbell(args.doorbell_ns)
    bench = Bench(args)
    counting = args.regime in COUNTING
    probes = None
    results, perf = {}, {}
    started = time.time()
    text_ready = None
    try:
        bench.setup()
        ifindexes = bench.ifindex
        for scen in args.scenarios:
            for load in args.loads:
                if bench.applies(scen, load):
                    dev, ns = bench.target(scen, load)
                    ifindexes[dev] = int(sh("cat /sys/class/net/%s/ifindex" % dev, ns=ns))
        if len(set(ifindexes.values())) != len(ifindexes):
            raise RuntimeError("devices under test share an ifindex: %s" % ifindexes)
        text_ready = kernel_text()
        if counting:
            probes = Probes(ifindexes.values())
        # The count phase (probes on) then the time phase (probes off); in
        # each, every configuration runs in turn, repetition by repetition.
        runs = {}
        for phase in ("count", "time") if counting else ("time",):
            if phase == "count":
                probes.start()
            for scen in args.scenarios:
                bench.scenario(scen)
                for load in args.loads:
                    if not bench.applies(scen, load) or (phase == "count" and load == "rr"):
                        continue
                    for rep in range(args.reps):
                        # rotated each repetition: no configuration always
                        # follows the same one (BQL state carries over)
                        k = rep % len(args.configs)
                        for cfg in args.configs[k:] + args.configs[:k]:
                            fig = bench.measure(scen, load, cfg, args.seconds,
                                                probes if phase == "count" else None)
                            runs.setdefault((scen, load, cfg, phase), []).append(fig)
                            log("bench: %s %s %s %-20s rep %d/%d: %s" % (
                                phase, scen, load, cfg, rep + 1, args.reps,
                                ", ".join("%s %s" % (FIGURES[k][0], FIGURES[k][1].format(v))
                                          for k, v in fig.items()
                                          if k in FIGURES and v is not None and
                                          (k in ("lockops_per_pkt", "trylock_per_pkt",
                                                 "lock_per_pkt") or "_per_" not in k))))
            if phase == "count":
                probes.stop()
        for (scen, load, cfg, phase), r in runs.items():
            results.setdefault(scen, {}).setdefault(load, {}).setdefault(cfg, {})[phase] = \
                aggregate(r)
        if not args.no_perf:
            pcfgs = [c for c in PERF_CONFIGS if c in args.configs] or args.configs[:2]
            if args.dump_check:
                pcfgs = args.configs
            psecs = args.perf_seconds or max(args.seconds, 5)
            for scen in args.scenarios:
                if args.demo and scen != "cpu-bound":
                    continue
                bench.scenario(scen)
                for load in perf_loads(bench, scen, args.loads):
                    log("bench: perf %s %s: %s" % (scen, load, ",".join(pcfgs)))
                    perf.setdefault(scen, {})[load] = perf_compare(
                        bench, scen, load, pcfgs, psecs, outdir)
        nic = bench.nic_info()
    finally:
        if probes:
            probes.close()
        bench.teardown()
        bench.use_module("checkout")
    text_end = kernel_text()

    pace = pace_meta(args)
    meta = {"kernel": kernel, "regime": args.regime, "reps": args.reps,
            "seconds": args.seconds, "cpus": os.cpu_count(),
            "doorbell_ns": doorbell_ns, "doorbell_origin": doorbell_origin,
            # the name results.json had before (README refers to it)
            "refnic_doorbell_ns": doorbell_ns,
            "driver": "refnic" + (" and %s" % args.dev if args.dev else ""),
            "nic_dev": args.dev, "nic": nic,
            "configs": {c: CONFIGS[c] for c in args.configs},
            "pfb_locked": locked_origin(args.locked_ko) if "pfb_locked" in args.configs else None,
            "scenarios": {s: SCENARIOS[s][2] for s in args.scenarios},
            "loads": {l: load_title(l, pace) for l in args.loads}, "buckets": BUCKETS,
            "pace": pace,
            "doorbells": {"refnic": "tx_doorbells (ethtool -S)",
                          "nic": (nic or {}).get("doorbells")},
            "locks": {n: f for n, (_, f) in LOCKS.items()},
            "command": " ".join(sys.argv), "wall_seconds": round(time.time() - started),
            "text_patched_setup": text_changes(text_boot, text_ready),
            "text_patched_run": text_changes(text_ready, text_end),
            "clocksource": clocksource, "clocksources_unbound": unbound}
    text = report(results, meta, perf)
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump({"meta": meta, "results": results,
                   "ratios": [dict(scenario=s, load=l, **r) for s, loads in results.items()
                              for l, cfgs in loads.items() for r in ratios(cfgs)],
                   "perf": perf}, f, indent=1)
    with open(os.path.join(outdir, "table.txt"), "w") as f:
        f.write(text + "\n")
    plots = plot(results, outdir, meta["regime"])
    print(text)
    print("outputs: %s" % ", ".join([os.path.join(outdir, "table.txt"),
                                     os.path.join(outdir, "results.json")] + plots))
    return 0


if __name__ == "__main__":
    sys.exit(main())
