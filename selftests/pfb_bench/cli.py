# SPDX-License-Identifier: GPL-2.0
"""The command line: options, their checks, the run (count phase, time
phase, perf), and the outputs (table.txt, results.json, plots)."""

import argparse
import json
import os
import re
import sys
import time

from .defs import (BUCKETS, COALESCE_PKTS, CONFIGS, COST_CONFIGS, COST_COUNT, COST_PILOT, COUNTING,
                   DEFAULT_CONFIGS, DOORBELL_NS, LOADS, LOCKED_REV, LOCKS, MARGIN, MAX_RUNS, PACE_GAP_US,
                   PERF_CONFIGS, PKTGEN_LOADS, PKTGEN_SPIN_NS, REGIMES, SCENARIOS, TOP)
from .system import (CLOCKSOURCE, default_locked_ko, find_nic, kernel_text, load_modules, locked_ko_problem,
                     locked_origin, log, quiet_clocksource_watchdog, read, set_doorbell, sh, text_changes)
from .probes import Probes, pace_delay_ns
from .scenarios import Bench
from .stats import aggregate, ratios
from .runs import run_phases
from .perf import perf_compare, perf_loads
from .report import load_title, report, stale_code
from .plots import headline, plot


def parse_args():
    ap = argparse.ArgumentParser(description=sys.modules[__package__].__doc__,
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
                    help="of %s (default: all; nic only with -d; tso runs the tcp load "
                    "only)" % ",".join(SCENARIOS))
    ap.add_argument("-l", "--loads", help="of %s (default: %s)" % (",".join(LOADS), ALL_LOADS))
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
    ap.add_argument("--perf", action="store_true",
                    help="perf record also where a preset has none (--cost: under icount "
                    "its samples count instructions per function)")
    ap.add_argument("--perf-seconds", type=float, help="per configuration (default: -t, "
                    "at least 3)")
    ap.add_argument("--dump-check", action="store_true",
                    help="pfifo_bulk with and without a 'tc -s qdisc show' loop (and the "
                    "loop on an idle pfifo_bulk), pktgen 64 B")
    ap.add_argument("--demo", action="store_true",
                    help="short run: pfifo_bulk, pfifo, pfifo_fast, fq_codel, fq under pktgen "
                    "64 B on refnic CPU-bound (and the NIC with -d), n=3 x 2 s, perf on refnic")
    cost_args(ap)
    ap.add_argument("--headline", nargs="+", metavar="DIR",
                    help="no run: merge the results.json of DIRs into the headline table "
                    "and plot, written to -o (host side)")
    return ap, ap.parse_args(), in_vm


ALL_LOADS = "pktgen64,pktgen1500,udp,tcp,rr"


def cost_args(ap):
    """The options of the cost regime (Documentation/benchmark.rst)."""
    ap.add_argument("--cost", action="store_true",
                    help="the cost regime: refnic CPU-bound, pktgen 64 B, -c %s, --count %d, "
                    "--pilot %d, no perf (each may be given otherwise); boot the guest with "
                    "PFB_VM_ICOUNT=1 tools/vm/run" % (COST_CONFIGS, COST_COUNT, COST_PILOT))
    ap.add_argument("--count", type=int, metavar="PKTS",
                    help="pktgen loads (not paced64): a run sends PKTS packets (all threads "
                    "together) instead of lasting -t seconds; its time is pktgen's own, from "
                    "the first frame to the last")
    ap.add_argument("--pilot", type=int, metavar="N",
                    help="time phase: N rounds first, then as many as a ±--margin 95 %% "
                    "interval of every pps ratio needs by the spread measured, at most "
                    "--max-runs (and --budget); replaces -n there")
    ap.add_argument("--margin", type=float, default=100 * MARGIN, metavar="PCT",
                    help="a ratio whose 95 percent interval is wider than ±PCT percent is "
                    "printed as 'not resolved (±X percent)' (default %g)" % (100 * MARGIN))
    ap.add_argument("--max-runs", type=int, default=MAX_RUNS, metavar="N",
                    help="with --pilot: at most N runs per configuration (default %d)" % MAX_RUNS)
    ap.add_argument("--budget", type=float, metavar="SECS",
                    help="with --pilot: no round begins that would end after SECS seconds "
                    "of a table's time phase")


def check_cost(ap, args):
    """The cost regime's options checked; the margin becomes a fraction."""
    if args.count is not None and args.count < os.cpu_count():
        ap.error("--count must be at least one packet per CPU (%d)" % os.cpu_count())
    if args.count is not None and not any(l in PKTGEN_LOADS and not PKTGEN_LOADS[l][1]
                                          for l in args.loads):
        ap.error("--count applies to pktgen64 and pktgen1500 only")
    if args.pilot is not None and not 2 <= args.pilot <= args.max_runs:
        ap.error("--pilot must be 2..--max-runs (%d): a spread needs two runs" % args.max_runs)
    if not 0 < args.margin < 100:
        ap.error("--margin must be a percentage between 0 and 100")
    if args.budget is not None and args.budget <= 0:
        ap.error("--budget must be > 0")
    args.margin /= 100


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


def regime_from_guest(ap, args, in_vm):
    """tools/vm/run puts the guest's TCG threading on its command line: the
    regime follows it, and counting (kprobes, tracepoints) is refused on
    multi-threaded TCG, where patching kernel text has ended in Oopses."""
    tcg = re.search(r"\bpfb\.tcg_thread=(\w+)", read("/proc/cmdline"))
    tcg_regime = {"multi": "parallel", "single": "interleaved"}.get(tcg.group(1)) if tcg else None
    if args.regime and tcg_regime and args.regime != tcg_regime:
        ap.error("--regime %s in a guest on %s-threaded TCG (regime %s)" % (
            args.regime, tcg.group(1), tcg_regime))
    return args.regime or tcg_regime or ("interleaved" if in_vm else "native")


def apply_presets(args):
    """--demo and --dump-check: their scenarios, loads and configurations."""
    if args.demo:
        args.reps, args.seconds = 3, 2
        args.scenarios = "cpu-bound" + (",nic" if args.dev else "")
        args.loads = "pktgen64"
        args.configs = args.configs or "pfifo_bulk,pfifo,pfifo_fast,fq_codel,fq"
        args.perf_seconds = args.perf_seconds or 2
    if args.cost:
        args.scenarios = args.scenarios or "cpu-bound"
        args.loads = args.loads or "pktgen64"
        args.configs = args.configs or COST_CONFIGS
        args.count = args.count or COST_COUNT
        args.pilot = args.pilot or COST_PILOT
        args.no_perf = not args.perf
    if args.dump_check:
        args.configs = "pfifo_bulk,pfifo_bulk+tcdump,pfifo_bulk+tcdump_idle"
        args.loads = "pktgen64"
        args.scenarios = args.scenarios or "cpu-bound"


def check_args(ap, args):
    """The lists split and checked, the pace and the coalescing window;
    ap.error() on anything wrong. Returns whether -c was given."""
    asked = args.configs is not None
    args.configs = args.configs.split(",") if asked else list(DEFAULT_CONFIGS)
    args.scenarios = (args.scenarios.split(",") if args.scenarios else
                      [s for s in SCENARIOS if s != "nic" or args.dev])
    args.loads = (args.loads or ALL_LOADS).split(",")
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
    check_cost(ap, args)
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
    return asked


def resolve_locked(ap, args, asked):
    """pfb_locked's module: an error when it was asked for and is missing,
    else pfb_locked is dropped from the default list with a word why."""
    if "pfb_locked" not in args.configs:
        return
    asked = asked or args.locked_ko is not None
    args.locked_ko = os.path.abspath(args.locked_ko or default_locked_ko())
    problem = locked_ko_problem(args.locked_ko)
    if problem and asked:
        ap.error("pfb_locked: " + problem)
    if problem:
        log("bench: pfb_locked skipped: " + problem)
        args.configs.remove("pfb_locked")


def run_perf(bench, args, outdir):
    """perf record of some configurations per scenario and load."""
    perf = {}
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
            perf.setdefault(scen, {})[load] = perf_compare(bench, scen, load, pcfgs, psecs,
                                                           outdir)
    return perf


def measure_all(args, outdir):
    """Set up, measure and tear down. Returns results, perf, the NIC's
    description, the kernel text as it was when the devices were ready,
    and the cost regime's plans."""
    bench = Bench(args)
    probes = None
    results, perf, text_ready, nic, plans = {}, {}, None, None, {}
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
        if args.regime in COUNTING:
            probes = Probes(ifindexes.values())
        runs, plans = run_phases(bench, args, probes)
        for (scen, load, cfg, phase), r in runs.items():
            results.setdefault(scen, {}).setdefault(load, {}).setdefault(cfg, {})[phase] = \
                aggregate(r)
        if not args.no_perf:
            perf = run_perf(bench, args, outdir)
        nic = bench.nic_info()
    finally:
        if probes:
            probes.close()
        bench.teardown()
        bench.use_module("checkout")
    return results, perf, nic, text_ready, plans


def run_meta(args, kernel, doorbell, nic, started, texts, clock):
    """results.json's meta: how the run was made. doorbell: (ns, origin);
    texts: kernel text at boot, when ready, at the end; clock:
    (clocksource, clocksources unbound)."""
    pace = pace_meta(args)
    return {"kernel": kernel, "regime": args.regime, "reps": args.reps,
            "seconds": args.seconds, "cpus": os.cpu_count(),
            "doorbell_ns": doorbell[0], "doorbell_origin": doorbell[1],
            # the name results.json had before (older runs carry it)
            "refnic_doorbell_ns": doorbell[0],
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
            "text_patched_setup": text_changes(texts[0], texts[1]),
            "text_patched_run": text_changes(texts[1], texts[2]),
            "clocksource": clock[0], "clocksources_unbound": clock[1],
            "margin": args.margin, "count": args.count, "pilot": args.pilot,
            "max_runs": args.max_runs if args.pilot else None, "budget": args.budget,
            "guest_clock": guest_clock()}


def guest_clock():
    """What the guest's time is: instructions executed under QEMU's icount
    (tools/vm/run PFB_VM_ICOUNT=1 puts pfb.icount=1 on the command line),
    else the host's time as the guest sees it."""
    if re.search(r"\bpfb\.icount=1\b", read("/proc/cmdline")):
        return "icount: 1 ns per guest instruction (QEMU -icount shift=0,sleep=off)"
    return "host time"


def write_outputs(results, meta, perf, outdir):
    """table.txt, results.json and the plots; the table on stdout."""
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


def main():
    ap, args, in_vm = parse_args()
    if args.headline:
        outdir = args.outdir or os.path.dirname(os.path.abspath(args.headline[0]))
        text, plots = headline(args.headline, outdir)
        print(text)
        print("headline: %s" % ", ".join([os.path.join(outdir, "headline.txt")] + plots))
        return 0
    args.regime = regime_from_guest(ap, args, in_vm)
    apply_presets(args)
    resolve_locked(ap, args, check_args(ap, args))
    if os.geteuid() != 0:
        log("SKIP: needs root")
        return 4
    text_boot = kernel_text()
    if args.dev == "auto":
        args.dev = find_nic()
        if not args.dev:
            log("bench: -d auto: no NIC (tools/vm/run -n virtio|e1000e|vmxnet3)")
            return 1
    kernel = os.uname().release
    outdir = args.outdir or os.path.join(TOP, ".vm", "bench-%s-%s-%s" % (
        kernel, args.regime, time.strftime("%Y%m%d-%H%M%S")))
    os.makedirs(outdir, exist_ok=True)
    clock = (quiet_clocksource_watchdog() if args.regime == "parallel" else
             (read(CLOCKSOURCE + "/current_clocksource").strip(), []))
    load_modules()
    doorbell = set_doorbell(args.doorbell_ns)
    started = time.time()
    results, perf, nic, text_ready, plans = measure_all(args, outdir)
    texts = (text_boot, text_ready, kernel_text())
    meta = run_meta(args, kernel, doorbell, nic, started, texts, clock)
    meta["plans"] = plans
    write_outputs(results, meta, perf, outdir)
    stale = stale_code(meta)
    if stale:
        log("bench: FAILED: " + stale)
        return 1
    return 0
