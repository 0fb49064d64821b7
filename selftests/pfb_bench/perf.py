# SPDX-License-Identifier: GPL-2.0
"""perf record -e cpu-clock per configuration, perf diff, and the lock
symbols ranked (when their counts are far enough apart to rank)."""

import math
import os
import re
import shutil
import subprocess
import tempfile

from .defs import LOCK_SYMBOL, PERF_HZ
from .system import log


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
    # Recorded on the machine's own disk, copied to OUTDIR at the end:
    # trixie's perf 6.12 writes from its ring buffer straight into the
    # file, and 9p (the checkout, in the VM) refuses with EFAULT.
    scratch = tempfile.mkdtemp(prefix="pfb-perf-")
    try:
        return perf_profiles(perf, bench, scen, load, configs, secs, outdir, scratch, out)
    finally:
        for name in os.listdir(scratch):
            shutil.copy(os.path.join(scratch, name), outdir)
        shutil.rmtree(scratch)


def perf_profiles(perf, bench, scen, load, configs, secs, outdir, scratch, out):
    """perf_compare's work, its data files in SCRATCH."""
    files = {}
    for cfg in configs:
        dev, ns = bench.target(scen, load)
        bench.set_qdisc(dev, ns, cfg)
        bench.wait_settled(dev, ns)
        data = os.path.join(scratch, "perf-%s-%s-%s.data" % (scen, load, cfg))
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
