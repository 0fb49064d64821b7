#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The lock-savings benchmark: pfifo_bulk against its own bulk-off baseline
and the stock qdiscs, in the style of the 2014 bulk-dequeue threads.

Every configuration runs alternately in one session (A B C, B C A, ...),
N repetitions of S seconds each; figures are mean and standard deviation
over the repetitions, compared as ratios measured in the same run. Each
session has a count phase (kprobes on _raw_spin_lock and _raw_spin_trylock
and the qdisc:qdisc_dequeue histogram, all active) and a time phase (no
probes: pps, busy CPU per packet, latency), so the probes' own cost stays out
of the times. The report lists regressions first: every figure where
pfifo_bulk is worse than stock pfifo, or than pfb_locked, beyond noise. Each
table ends with ratios of means from the same run, among them those the
lockless rewrite is judged by: pfifo_bulk/pfifo_fast locks/pkt (target
<= 0.5, trylocks/pkt beside it), pps (target >= 1) and CPU ns/pkt, and
pfifo_bulk/pfb_locked for the same figures.

pfb_locked is pfifo_bulk as of another revision (--locked-ko; by default the
module of the last locked one, 3c3248f, from "make rev-modules"), loaded in
place of the checkout's while it runs: both register pfifo_bulk.

Definitions (shared/DESIGN.md): locks/pkt = _raw_spin_lock hits / device tx
packets; trylocks/pkt = _raw_spin_trylock hits / device tx packets (a
TCQ_F_NOLOCK qdisc such as pfifo_fast takes its seqlock with a trylock);
doorbells/pkt = refnic tx_doorbells / refnic tx_packets; batch =
the tracepoint's packets field; CPU/pkt = busy time in /proc/stat / tx
packets.

Runs inside the VM (tools/vm/run) on refnic devices it creates, or on a real
host with -d DEV (pktgen only; dst MAC with --dst-mac).
"""

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import threading
import time

TOP = os.environ.get("PFB_TOP") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACING = "/sys/kernel/tracing"
PKTGEN = "/proc/net/pktgen"
HANDLE = "1:"
BUCKETS = ["1", "2", "3-4", "5-8", "9-16", "17-32", "33-64", "65+"]
BUCKET_EDGES = [1, 2, 4, 8, 16, 32, 64]
# pfb_locked, the "before": pfifo_bulk of this revision (the last locked one,
# make rev-modules) loaded in place of the checkout's module while it runs
LOCKED_REV = "3c3248f"
QDISC_MODULE = ("sch_pfifo_bulk", "net/sched/sch_pfifo_bulk.ko")

CONFIGS = {
    "bulk_off": "pfifo_bulk bulk_pkts 1",
    "pfifo_bulk": "pfifo_bulk",
    "bulk_bytes": "pfifo_bulk bulk_bytes 3000",
    "pfb_locked": "pfifo_bulk",
    "pfifo": "pfifo",
    "pfifo_fast": "pfifo_fast",
    "fq_codel": "fq_codel",
}

# name: (refnic BQL on, line rate Mb/s or 0 for unlimited, description)
SCENARIOS = {
    "bql-bound": (True, 2, "refnic BQL on, 2 Mb/s line, completions coalesced by 16 (device-bound: batching)"),
    "nobql-bound": (False, 2, "refnic BQL off, 2 Mb/s line, completions coalesced by 16 (device-bound, no-BQL driver)"),
    "cpu-bound": (True, 0, "refnic BQL on, unlimited line (CPU-bound: cost)"),
}

LOADS = {
    "pktgen64": "pktgen queue_xmit 64 B frames, one thread per CPU",
    "pktgen1500": "pktgen queue_xmit 1514 B frames, one thread per CPU",
    "stream": "UDP stream across a refnic pair, one sender per CPU",
    "rr": "UDP request/response across a refnic pair, 1 in flight",
}

# figure: (label, format, better) -- better is "low" or "high"
FIGURES = {
    "pps": ("pps", "{:.0f}", "high"),
    "locks_per_pkt": ("locks/pkt", "{:.2f}", "low"),
    "trylocks_per_pkt": ("trylocks/pkt", "{:.2f}", "low"),
    "doorbells_per_pkt": ("doorbells/pkt", "{:.3f}", "low"),
    "mean_batch": ("mean batch", "{:.2f}", "high"),
    "cpu_ns_per_pkt": ("CPU ns/pkt", "{:.0f}", "low"),
    "p50_us": ("p50 us", "{:.0f}", "low"),
    "p90_us": ("p90 us", "{:.0f}", "low"),
    "p95_us": ("p95 us", "{:.0f}", "low"),
    "p99_us": ("p99 us", "{:.0f}", "low"),
}
# The report. Regressions first: every figure where a candidate is worse
# than its base beyond noise, for these (candidate, base) pairs.
REGRESSIONS = (("pfifo_bulk", "pfifo"), ("bulk_bytes", "pfifo"), ("pfifo_bulk", "pfb_locked"))
# Ratios candidate/base of these figures, measured in the same run, and the
# lockless rewrite's targets for some of them.
_BATCHING = ("locks_per_pkt", "doorbells_per_pkt", "pps", "cpu_ns_per_pkt", "p99_us")
_LOCKLESS = ("locks_per_pkt", "trylocks_per_pkt", "pps", "cpu_ns_per_pkt")
RATIOS = (
    ("pfifo_bulk", "bulk_off", _BATCHING),
    ("pfifo_bulk", "pfifo", _BATCHING),
    ("pfifo_bulk", "pfifo_fast", _LOCKLESS),
    ("pfifo_bulk", "pfb_locked", _LOCKLESS),
)
TARGETS = {
    ("pfifo_bulk", "pfifo_fast", "locks_per_pkt"): ("≤", 0.5),
    ("pfifo_bulk", "pfifo_fast", "pps"): ("≥", 1.0),
}
# figures in plot.dat (mean and sd columns in this order) and in the plot
PLOTTED = ("locks_per_pkt", "trylocks_per_pkt", "doorbells_per_pkt", "mean_batch")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


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


class Probes:
    """Spin lock calls (a kprobe + hist per function in COUNTERS) and batch
    sizes per device (qdisc:qdisc_dequeue hist on ifindex and packets).

    All are switched on once for the whole count phase and read as
    differences between snapshots: arming a kprobe on _raw_spin_lock
    patches code that the other CPUs run all the time, and doing that
    between every two runs has crashed a TCG guest (ftrace text poke)."""

    # figure: (kprobe event, kernel function)
    COUNTERS = {
        "locks": ("pfb_bench_lock", "_raw_spin_lock"),
        "trylocks": ("pfb_bench_trylock", "_raw_spin_trylock"),
    }
    LOCK_SPEC = "hist:keys=common_type:vals=hitcount"
    DEQ_SPEC = ("hist:keys=ifindex,packets:vals=hitcount:size=4096 "
                "if handle == 0x10000 && packets > 0")

    def __init__(self):
        self.triggers = {name: "%s/events/kprobes/%s/trigger" % (TRACING, event)
                         for name, (event, _) in self.COUNTERS.items()}
        self.deq_trigger = "%s/events/qdisc/qdisc_dequeue/trigger" % TRACING
        self.on = False
        try:
            for event, func in self.COUNTERS.values():
                append("%s/kprobe_events" % TRACING, "p:%s %s\n" % (event, func))
        except OSError:
            self.close()
            raise

    def specs(self):
        return [(t, self.LOCK_SPEC) for t in self.triggers.values()] + \
            [(self.deq_trigger, self.DEQ_SPEC)]

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
        """({counter: hits}, {batch size: count}) so far, for one device."""
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
        for event, _ in self.COUNTERS.values():
            try:
                append("%s/kprobe_events" % TRACING, "-:%s\n" % event)
            except OSError:
                pass


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


def link_stat(dev, key, ns=None):
    if ns:
        return int(sh("cat /sys/class/net/%s/statistics/%s" % (dev, key), ns=ns))
    return int(read("/sys/class/net/%s/statistics/%s" % (dev, key)))


# --- devices and loads -------------------------------------------------------

class Bench:
    def __init__(self, args):
        self.args = args
        self.ncpu = os.cpu_count()
        self.dev = args.dev or "pfbb0"
        self.pair = ("pfbb1", "pfbb1p")
        self.ns = ("pfbbA", "pfbbB")
        self.real = bool(args.dev)
        self.tc = "tc"
        # how to load each sch_pfifo_bulk, and which one is loaded
        self.pfb_cmd = {"checkout": module_cmd(*QDISC_MODULE),
                        "locked": "insmod %s" % args.locked_ko}
        self.pfb = "checkout"
        # tc and ip plugins of this checkout, when built
        for env, d, so in (("TC_LIB_DIR", "tc-plugin", "q_pfifo_bulk.so"),
                           ("IP_LIB_DIR", "ip-plugin", "link_refnic.so")):
            if os.path.exists(os.path.join(TOP, d, so)):
                os.environ[env] = os.path.join(TOP, d)

    # devices
    def setup(self):
        if not self.real:
            sh("ip link add %s type refnic" % self.dev)
            sh("ip link set %s up" % self.dev)
        need_pair = any(l in ("stream", "rr") for l in self.args.loads)
        if need_pair and not self.real:
            a, b = self.ns
            sh("ip netns add %s" % a)
            sh("ip netns add %s" % b)
            sh("ip link add %s netns %s type refnic peer name %s netns %s" %
               (self.pair[0], a, self.pair[1], b))
            sh("ip addr add 10.77.0.1/24 dev %s" % self.pair[0], ns=a)
            sh("ip addr add 10.77.0.2/24 dev %s" % self.pair[1], ns=b)
            for i, n in enumerate(self.ns):
                sh("ip link set lo up", ns=n)
                sh("ip link set %s up" % self.pair[i], ns=n)
            # static neighbours: no ARP traffic inside a measurement
            for i, n in enumerate(self.ns):
                other = self.pair[1 - i]
                mac = sh("cat /sys/class/net/%s/address" % other, ns=self.ns[1 - i]).strip()
                sh("ip neigh replace 10.77.0.%d lladdr %s dev %s nud permanent" %
                   (2 - i, mac, self.pair[i]), ns=n)

    def teardown(self):
        sh("echo stop > %s/pgctrl" % PKTGEN, check=False)
        for n in self.ns:
            sh("ip netns del %s" % n, check=False)
        if not self.real:
            sh("ip link del %s" % self.dev, check=False)

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
        bql, rate, _ = SCENARIOS[name]
        if self.real:
            return
        self.refnic_mode(self.dev, None, bql, rate)
        if any(l in ("stream", "rr") for l in self.args.loads):
            self.refnic_mode(self.pair[0], self.ns[0], bql, rate)

    def target(self, load):
        """(device, namespace) the qdisc under test sits on for a load."""
        if load.startswith("pktgen"):
            return self.dev, None
        return self.pair[0], self.ns[0]

    def use_module(self, which):
        """Have the checkout's ("checkout") or the older revision's ("locked")
        sch_pfifo_bulk loaded. Both register pfifo_bulk, so they cannot be
        loaded together: our qdiscs go, one module out, the other in."""
        if which == self.pfb:
            return
        for dev, ns in ((self.dev, None), (self.pair[0], self.ns[0])):
            sh("%s qdisc del dev %s root" % (self.tc, dev), check=False, ns=ns)
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

    def set_qdisc(self, load, config):
        """A fresh qdisc for every measurement, never a change of the last."""
        dev, ns = self.target(load)
        if CONFIGS[config].split()[0] == "pfifo_bulk":
            self.use_module("locked" if config == "pfb_locked" else "checkout")
        sh("%s qdisc del dev %s root" % (self.tc, dev), check=False, ns=ns)
        sh("%s qdisc add dev %s root handle %s %s" %
           (self.tc, dev, HANDLE, CONFIGS[config]), ns=ns)

    # loads
    def pktgen(self, size, secs):
        # reset stops the threads of the last run and frees their devices
        write("%s/pgctrl" % PKTGEN, "reset")
        for c in range(self.ncpu):
            t = "%s/kpktgend_%d" % (PKTGEN, c)
            for _ in range(50):
                try:
                    write(t, "add_device %s@%d" % (self.dev, c))
                    break
                except OSError:		# EBUSY: the old device is still going away
                    time.sleep(0.1)
            else:
                raise RuntimeError("pktgen: cannot add %s@%d" % (self.dev, c))
            d = "%s/%s@%d" % (PKTGEN, self.dev, c)
            for cmd in ("count 0", "pkt_size %d" % size, "xmit_mode queue_xmit",
                        "burst 1", "clone_skb 0", "dst 198.18.0.1",
                        "dst_mac %s" % self.args.dst_mac):
                write(d, cmd)
        starter = threading.Thread(target=write, args=("%s/pgctrl" % PKTGEN, "start"))
        starter.start()
        time.sleep(secs)
        write("%s/pgctrl" % PKTGEN, "stop")
        starter.join()
        return {}

    def load_tool(self):
        return os.path.join(TOP, "selftests", "pfb_load")

    def peer_server(self, args, secs):
        """pfb_load ARGS in the peer namespace for SECS, given time to bind."""
        server = subprocess.Popen("ip netns exec %s %s %s -t %f" %
                                  (self.ns[1], self.load_tool(), args, secs),
                                  shell=True, stdout=subprocess.PIPE, text=True)
        time.sleep(0.2)
        return server

    def stream(self, secs):
        tool = self.load_tool()
        sink = self.peer_server("sink -p 9200 -i 500", secs + 2)
        senders = [subprocess.Popen("ip netns exec %s taskset -c %d %s stream -d 10.77.0.2 "
                                    "-p 9200 -s 64 -t %f" % (self.ns[0], c, tool, secs),
                                    shell=True, stdout=subprocess.PIPE, text=True)
                   for c in range(self.ncpu)]
        for s in senders:
            s.communicate()
        out = json.loads(sink.communicate()[0])
        return {"received": out["received"]}

    def rr(self, secs):
        tool = self.load_tool()
        echo = self.peer_server("echo -p 9201", secs + 1)
        out = json.loads(sh("%s rr -d 10.77.0.2 -p 9201 -s 64 -t %f" % (tool, secs),
                            ns=self.ns[0]))
        echo.communicate()
        return {k: out[k] for k in ("p50_us", "p90_us", "p95_us", "p99_us")}

    def run_load(self, load, secs):
        if load == "pktgen64":
            return self.pktgen(60, secs)
        if load == "pktgen1500":
            return self.pktgen(1514, secs)
        if load == "stream":
            return self.stream(secs)
        return self.rr(secs)

    # one measurement
    def measure(self, load, config, secs, probes):
        dev, ns = self.target(load)
        self.set_qdisc(load, config)
        time.sleep(0.2)
        ifindex = int(sh("cat /sys/class/net/%s/ifindex" % dev, ns=ns))
        if probes:
            counts0, batches0 = probes.snapshot(ifindex)
        tx0 = link_stat(dev, "tx_packets", ns)
        eth0 = ethtool_stats(dev, ns)
        cpu0, t0 = busy_jiffies(), time.time()
        extra = self.run_load(load, secs)
        cpu1, t1 = busy_jiffies(), time.time()
        tx = link_stat(dev, "tx_packets", ns) - tx0
        eth1 = ethtool_stats(dev, ns)
        fig = {"tx_packets": tx}
        if probes:
            counts1, batches1 = probes.snapshot(ifindex)
            batches = {k: v - batches0.get(k, 0) for k, v in batches1.items()
                       if v > batches0.get(k, 0)}
            hist = bucketize(batches)
            nb = sum(batches.values())
            for name in counts1:
                fig[name + "_per_pkt"] = (counts1[name] - counts0[name]) / tx if tx else None
            fig["mean_batch"] = (sum(k * v for k, v in batches.items()) / nb) if nb else None
            fig["batch_hist"] = hist
            if "tx_doorbells" in eth1 and eth1.get("tx_packets", 0) > eth0.get("tx_packets", 0):
                fig["doorbells_per_pkt"] = ((eth1["tx_doorbells"] - eth0["tx_doorbells"]) /
                                            (eth1["tx_packets"] - eth0["tx_packets"]))
        else:
            fig["pps"] = tx / (t1 - t0)
            hz = os.sysconf("SC_CLK_TCK")
            fig["cpu_ns_per_pkt"] = (cpu1 - cpu0) * 1e9 / hz / tx if tx else None
            fig.update(extra)
            if load == "rr":
                # one request in flight: rates and CPU say nothing here
                del fig["pps"], fig["cpu_ns_per_pkt"]
        return fig


# --- statistics and report ---------------------------------------------------

def mean_sd(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None, None
    m = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
    return m, sd


def aggregate(runs):
    """runs: list of figure dicts of one (scenario, load, config)."""
    agg = {}
    for key in FIGURES:
        m, sd = mean_sd([r.get(key) for r in runs])
        if m is not None:
            agg[key] = {"mean": m, "sd": sd, "n": len([r for r in runs if r.get(key) is not None])}
    hists = [r["batch_hist"] for r in runs if "batch_hist" in r]
    if hists:
        agg["batch_hist"] = [sum(h[i] for h in hists) for i in range(len(BUCKETS))]
    return agg


def worse(key, a, b):
    """True when a (the candidate) is worse than b (its base) beyond noise:
    the difference exceeds two standard errors and 1 %."""
    if key not in a or key not in b:
        return False
    ma, mb = a[key]["mean"], b[key]["mean"]
    se = math.sqrt(a[key]["sd"] ** 2 / a[key]["n"] + b[key]["sd"] ** 2 / b[key]["n"])
    diff = ma - mb if FIGURES[key][2] == "low" else mb - ma
    return diff > 2 * se and diff > 0.01 * abs(mb)


def fmt(agg, key):
    if key not in agg:
        return "-"
    f = FIGURES[key][1]
    return (f + " ± " + f).format(agg[key]["mean"], agg[key]["sd"])


def ratios(cfgs):
    """Ratios of one table: [{cand, base, figure, ratio, target, met}];
    ratio None when the base is 0."""
    out = []
    for cand, base, keys in RATIOS:
        if cand not in cfgs or base not in cfgs:
            continue
        for k in keys:
            if k not in cfgs[cand] or k not in cfgs[base]:
                continue
            b = cfgs[base][k]["mean"]
            r = cfgs[cand][k]["mean"] / b if b else None
            target = TARGETS.get((cand, base, k))
            met = None
            if target and r is not None:
                met = r <= target[1] if target[0] == "≤" else r >= target[1]
            out.append({"cand": cand, "base": base, "figure": k, "ratio": r,
                        "target": "%s %g" % target if target else None, "met": met})
    return out


def all_ratios(results):
    return [dict(scenario=scen, load=load, **r)
            for scen, loads in results.items() for load, cfgs in loads.items()
            for r in ratios(cfgs)]


def report(results, meta):
    lines = []
    lines.append("pfifo_bulk benchmark: kernel %s, %s, n=%d x %g s, configurations alternated" %
                 (meta["kernel"], meta["driver"], meta["reps"], meta["seconds"]))
    if meta.get("refnic_doorbell_ns") is not None:
        lines.append("refnic doorbell cost: %d ns (module parameter doorbell_ns)" %
                     meta["refnic_doorbell_ns"])
    if meta["pfb_locked"]:
        commit = (meta["pfb_locked"]["commit"] or "? ").split(" ", 1)
        lines.append("pfb_locked: pfifo_bulk as of %s %s (%s)" % (
            commit[0][:12], commit[1], os.path.relpath(meta["pfb_locked"]["ko"], TOP)))
    lines.append("")
    regress = []
    for scen, loads in results.items():
        for load, cfgs in loads.items():
            for cand, base in REGRESSIONS:
                if cand not in cfgs or base not in cfgs:
                    continue
                for key in FIGURES:
                    if worse(key, cfgs[cand], cfgs[base]):
                        regress.append("  %s / %s: %s %s is %s vs %s %s" %
                                       (scen, load, cand, FIGURES[key][0],
                                        fmt(cfgs[cand], key), base, fmt(cfgs[base], key)))
    pairs = [p for p in REGRESSIONS if p[0] in meta["configs"] and p[1] in meta["configs"]]
    lines.append("REGRESSIONS (worse beyond 2 standard errors and 1 %%: %s):" %
                 (", ".join("%s vs %s" % p for p in pairs) or "no pair measured"))
    lines.extend(regress or ["  none"])
    lines.append("")
    for scen, loads in results.items():
        for load, cfgs in loads.items():
            lines.append("== %s; %s" % (SCENARIOS[scen][2], LOADS[load]))
            keys = [k for k in FIGURES if any(k in c for c in cfgs.values())]
            head = "%-11s" % "config" + "".join("%18s" % FIGURES[k][0] for k in keys)
            lines.append(head)
            for cfg, agg in cfgs.items():
                lines.append("%-11s" % cfg + "".join("%18s" % fmt(agg, k) for k in keys))
            rows = {}
            for r in ratios(cfgs):
                # three decimals where a target is judged on the exact ratio
                text = "%s %s" % (FIGURES[r["figure"]][0], "n/a" if r["ratio"] is None else
                                  ("%.3f" if r["target"] else "%.2f") % r["ratio"])
                if r["target"]:
                    text += " (target %s: %s)" % (r["target"], {True: "met", False: "MISSED",
                                                                None: "n/a"}[r["met"]])
                rows.setdefault("%s/%s" % (r["cand"], r["base"]), []).append(text)
            if rows:
                lines.append("ratios (same run):")
                lines.extend("  %-22s %s" % (pair + ":", ", ".join(t)) for pair, t in rows.items())
            hist_cfgs = [(c, a["batch_hist"]) for c, a in cfgs.items() if "batch_hist" in a]
            if hist_cfgs:
                lines.append("batch histogram (share of batches): " + " ".join("%6s" % b for b in BUCKETS))
                for c, h in hist_cfgs:
                    tot = sum(h) or 1
                    lines.append("  %-11s" % c + " " * 23 + " ".join("%5.1f%%" % (100.0 * x / tot) for x in h))
            lines.append("")
    return "\n".join(lines)


def plot(results, outdir):
    """locks/pkt, trylocks/pkt, doorbells/pkt and mean batch per
    configuration."""
    if not shutil.which("gnuplot"):
        return None
    dat = os.path.join(outdir, "plot.dat")
    panels = []
    with open(dat, "w") as f:
        idx = 0
        for scen, loads in results.items():
            for load, cfgs in loads.items():
                if not any("locks_per_pkt" in a for a in cfgs.values()):
                    continue
                f.write("# %s %s\n" % (scen, load))
                for cfg, a in cfgs.items():
                    row = [cfg]
                    for k in PLOTTED:
                        row += ["%g" % a[k]["mean"], "%g" % a[k]["sd"]] if k in a else ["0", "0"]
                    f.write(" ".join(row) + "\n")
                f.write("\n\n")
                panels.append((idx, "%s, %s" % (scen, load)))
                idx += 1
    if not panels:
        return None
    outputs = []
    size = "size %d,%d" % (400 * len(PLOTTED), 320 * len(panels))
    for term, ext in (("pngcairo " + size, "png"), ("svg " + size, "svg")):
        out = os.path.join(outdir, "bench." + ext)
        script = ["set terminal %s noenhanced" % term, "set output '%s'" % out,
                  "set multiplot layout %d,%d" % (len(panels), len(PLOTTED)),
                  "set style data histogram",
                  "set style histogram errorbars gap 1 lw 1", "set style fill solid 0.6",
                  "set xtics rotate by -30", "set key off", "set yrange [0:*]"]
        for idx, title in panels:
            for i, k in enumerate(PLOTTED):
                col = 2 + 2 * i
                script.append("set title '%s: %s'" % (title, FIGURES[k][0]))
                script.append("plot '%s' index %d using %d:%d:xtic(1)" % (dat, idx, col, col + 1))
        script.append("unset multiplot")
        r = subprocess.run(["gnuplot"], input="\n".join(script), text=True, capture_output=True)
        if r.returncode == 0:
            outputs.append(out)
        elif ext == "png":
            # pngcairo may be missing in gnuplot-nox: fall back to png
            script[0] = "set terminal png %s noenhanced" % size
            if subprocess.run(["gnuplot"], input="\n".join(script), text=True).returncode == 0:
                outputs.append(out)
    return outputs


def perf_diff(bench, outdir, secs):
    """perf record -a of bulk off and pfifo_bulk under pktgen 64 B, perf diff."""
    perf = shutil.which("perf")
    if not perf:
        return None
    files = {}
    load = "pktgen64"
    for cfg in ("bulk_off", "pfifo_bulk"):
        bench.set_qdisc(load, cfg)
        data = os.path.join(outdir, "perf-%s.data" % cfg)
        rec = subprocess.Popen([perf, "record", "-q", "-a", "-e", "cpu-clock", "-o", data,
                                "--", "sleep", str(secs)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.1)
        bench.run_load(load, secs)
        rec.wait()
        files[cfg] = data
    # --kallsyms: perf 6.1 resolves a newer kernel's symbols from there
    r = subprocess.run([perf, "diff", "--kallsyms=/proc/kallsyms",
                        files["bulk_off"], files["pfifo_bulk"]],
                       capture_output=True, text=True)
    text = r.stdout or r.stderr
    with open(os.path.join(outdir, "perf-diff.txt"), "w") as f:
        f.write(text)
    rows = [l for l in text.splitlines() if l.strip() and not l.startswith("#")]
    spin = [l for l in rows if "_raw_spin_lock" in l]
    return {"top": rows[:12], "raw_spin_lock": spin}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    in_vm = bool(os.environ.get("PFB_VM"))
    ap.add_argument("-n", "--reps", type=int, default=3 if in_vm else 10)
    ap.add_argument("-t", "--seconds", type=float, default=2 if in_vm else 10)
    ap.add_argument("-c", "--configs",
                    help="default: all of %s (pfb_locked when its module is built)" %
                    ",".join(CONFIGS))
    ap.add_argument("--locked-ko", metavar="PATH",
                    help="sch_pfifo_bulk.ko for pfb_locked, loaded in place of the checkout's "
                    "while pfb_locked runs (default: .build/rev-%s/$(uname -r)/sch_pfifo_bulk.ko "
                    "from 'make rev-modules REV=%s')" % (LOCKED_REV, LOCKED_REV))
    ap.add_argument("-s", "--scenarios", default="bql-bound,nobql-bound,cpu-bound")
    ap.add_argument("-l", "--loads", default="pktgen64,pktgen1500,stream,rr")
    ap.add_argument("-d", "--dev", help="a real NIC instead of refnic (pktgen loads only)")
    ap.add_argument("--dst-mac", default="02:00:00:00:00:02")
    ap.add_argument("-o", "--outdir")
    ap.add_argument("--no-perf", action="store_true")
    ap.add_argument("--demo", action="store_true",
                    help="short run: pktgen 64 B, device-bound BQL on and off, n=2 x 2 s")
    args = ap.parse_args()
    if args.demo:
        args.reps, args.seconds = 2, 2
        args.scenarios, args.loads = "bql-bound,nobql-bound", "pktgen64"
        args.no_perf = True
    asked = args.configs is not None
    args.configs = args.configs.split(",") if asked else list(CONFIGS)
    args.scenarios = args.scenarios.split(",")
    args.loads = args.loads.split(",")
    for name, table in (("configs", CONFIGS), ("scenarios", SCENARIOS), ("loads", LOADS)):
        bad = [x for x in getattr(args, name) if x not in table]
        if bad:
            ap.error("unknown %s: %s (known: %s)" % (name, ",".join(bad), ",".join(table)))
    if "pfb_locked" in args.configs:
        asked = asked or args.locked_ko is not None
        args.locked_ko = os.path.abspath(args.locked_ko or default_locked_ko())
        problem = locked_ko_problem(args.locked_ko)
        if problem and asked:
            ap.error("pfb_locked: " + problem)
        if problem:
            log("bench: pfb_locked skipped: " + problem)
            args.configs.remove("pfb_locked")
    if args.dev:
        args.scenarios = ["cpu-bound"]
        args.loads = [l for l in args.loads if l.startswith("pktgen")]
    if os.geteuid() != 0:
        log("SKIP: needs root")
        return 4

    kernel = os.uname().release
    outdir = args.outdir or os.path.join(TOP, ".vm", "bench-%s-%s" % (kernel, time.strftime("%Y%m%d-%H%M%S")))
    os.makedirs(outdir, exist_ok=True)
    load_modules()
    bench = Bench(args)
    probes = None
    results = {}
    try:
        bench.setup()
        probes = Probes()
        # Phase 1 counts (probes on), phase 2 times (probes off); inside
        # each, every configuration runs in turn, repetition by repetition.
        runs = {}
        for phase in ("count", "time"):
            if phase == "count":
                probes.start()
            for scen in args.scenarios:
                bench.scenario(scen)
                for load in args.loads:
                    if phase == "count" and load == "rr":
                        continue
                    for rep in range(args.reps):
                        # rotated each repetition: no configuration always
                        # follows the same one (BQL state carries over)
                        k = rep % len(args.configs)
                        for cfg in args.configs[k:] + args.configs[:k]:
                            fig = bench.measure(load, cfg, args.seconds,
                                                probes if phase == "count" else None)
                            key = (scen, load, cfg)
                            runs.setdefault(key, [{} for _ in range(args.reps)])[rep].update(
                                {k: v for k, v in fig.items() if k != "tx_packets"})
                            log("bench: %s %s %s %-10s rep %d/%d: %s" % (
                                phase, scen, load, cfg, rep + 1, args.reps,
                                ", ".join("%s %s" % (FIGURES[k][0], FIGURES[k][1].format(v))
                                          for k, v in fig.items()
                                          if k in FIGURES and v is not None)))
            probes.stop()
        for (scen, load, cfg), r in runs.items():
            results.setdefault(scen, {}).setdefault(load, {})[cfg] = aggregate(r)
        perf = None
        if not args.no_perf and "pktgen64" in args.loads:
            bench.scenario(args.scenarios[0])
            perf = perf_diff(bench, outdir, args.seconds)
    finally:
        if probes:
            probes.close()
        bench.teardown()
        bench.use_module("checkout")

    meta = {"kernel": kernel, "reps": args.reps, "seconds": args.seconds,
            "driver": "driver %s" % (args.dev if args.dev else "refnic"),
            # the emulated doorbell cost the refnic runs had
            "refnic_doorbell_ns": None if args.dev else
            int(read("/sys/module/refnic/parameters/doorbell_ns")),
            "cpus": os.cpu_count(), "configs": {c: CONFIGS[c] for c in args.configs},
            "pfb_locked": locked_origin(args.locked_ko) if "pfb_locked" in args.configs else None,
            "scenarios": {s: SCENARIOS[s][2] for s in args.scenarios},
            "loads": {l: LOADS[l] for l in args.loads}, "buckets": BUCKETS}
    text = report(results, meta)
    if perf:
        text += "\nperf diff (baseline bulk_off -> pfifo_bulk, cpu-clock, %s):\n" % args.scenarios[0]
        text += "\n".join(perf["top"]) + "\n"
        text += "_raw_spin_lock: " + (" | ".join(s.strip() for s in perf["raw_spin_lock"])
                                     or "not among the sampled symbols") + "\n"
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump({"meta": meta, "results": results, "ratios": all_ratios(results),
                   "perf": perf}, f, indent=1)
    with open(os.path.join(outdir, "table.txt"), "w") as f:
        f.write(text + "\n")
    plots = plot(results, outdir) or []
    print(text)
    print("outputs: %s" % ", ".join([os.path.join(outdir, "table.txt"),
                                     os.path.join(outdir, "results.json")] + plots))
    return 0


if __name__ == "__main__":
    sys.exit(main())
