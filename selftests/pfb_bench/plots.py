# SPDX-License-Identifier: GPL-2.0
"""Plots (gnuplot) of a run, and the headline: several runs merged into one
table of pfifo_bulk against the stock qdiscs, and its plot."""

import json
import os
import shutil
import subprocess

from .defs import FIGURES, LOADS, PLOTTED, REGIMES, TARGETS
from .stats import judge, ratio_ci
from .report import fmt, fmt_ratio, run_margin, run_shape, scenario_title


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


HEADLINE_SCENARIOS = ("cpu-bound", "nic")
HEADLINE_BASES = ("pfifo", "pfifo_fast", "fq_codel", "fq")
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
    """One table over the results.json of DIRS: pfifo_bulk against pfifo,
    pfifo_fast, fq_codel and fq (those a run has), combined spin-lock calls per packet and pps, on refnic
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
                rows += [headline_row(meta, scen, load, cfgs, base, os.path.relpath(path, outdir))
                         for base in HEADLINE_BASES if base in cfgs]
                key = (meta["kernel"], meta["regime"], scen, load)
                if key not in seen:
                    seen.add(key)
                    figs.append((meta, scen, load, cfgs, os.path.relpath(path, outdir)))
    text = "\n".join(headline_table(rows) + headline_figures(figs))
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "headline.json"), "w") as f:
        json.dump(rows, f, indent=1)
    with open(os.path.join(outdir, "headline.txt"), "w") as f:
        f.write(text + "\n")
    return text, headline_plot(rows, outdir)


def headline_row(meta, scen, load, cfgs, base, source):
    """pfifo_bulk against BASE in one table of a run: the ratios of
    HEADLINE_FIGS and the targets' verdicts."""
    row = {"kernel": meta["kernel"], "regime": meta["regime"],
           "where": (meta["nic"]["driver"] + (" (BQL)" if meta["nic"]["bql"] else " (no BQL)")
                     if scen == "nic" else
                     "refnic CPU-bound, doorbell %d ns" % meta["doorbell_ns"]),
           "load": load, "base": base, "reps": meta["reps"],
           "seconds": meta["seconds"], "source": source, "margin": run_margin(meta)}
    for phase, k, _ in HEADLINE_FIGS:
        a = cfgs["pfifo_bulk"].get(phase, {}).get(k)
        b = cfgs[base].get(phase, {}).get(k)
        row[k] = list(ratio_ci(a, b)) if a and b else None
        target = TARGETS.get(("pfifo_bulk", base, phase, k))
        if target and row[k]:
            row[k + "_verdict"] = "%s %g: %s" % (target + (judge(*row[k], target),))
    return row


def headline_table(rows):
    """The headline's lines: one per row, its verdicts under it."""
    lines = ["HEADLINE: pfifo_bulk / base, ratio of means [95 % interval] (not resolved: "
             "wider than the run's margin, ±2 % unless --margin); lock calls "
             "= _raw_spin_lock + trylock + _bh + _irqsave + _irq + trylock_bh per sent "
             "packet (interleaved regime only: kprobes)",
             "%-21s %-12s %-34s %-9s %-11s %-25s %s" % (
                 "kernel", "regime", "driver, scenario", "load", "vs",
                 "lock calls/pkt (lower)", "pps (higher)")]
    for r in rows:
        lines.append("%-21s %-12s %-34s %-9s %-11s %-25s %s" % (
            r["kernel"], r["regime"], r["where"][:34], r["load"], r["base"],
            fmt_ratio(*r["lockops_per_pkt"], r["margin"]) if r["lockops_per_pkt"] else "-",
            fmt_ratio(*r["pps"], r["margin"]) if r["pps"] else "-"))
        verdicts = ["%s %s" % (k, r[k + "_verdict"]) for _, k, _ in HEADLINE_FIGS
                    if r.get(k + "_verdict")]
        if verdicts:
            lines.append("%-21s target (the whole interval must clear it): %s" % (
                "", "; ".join(verdicts)))
    return lines


def headline_figures(figs):
    """The absolute figures behind the headline's ratios, per run."""
    lines = ["", "the figures behind the ratios, mean ± stddev over n runs of each "
             "configuration (count phase: probes on; time phase: probes off):"]
    for meta, scen, load, cfgs, source in figs:
        lines.append("  kernel %s, %s, %s, %s, %s (%s)" % (
            meta["kernel"], REGIMES[meta["regime"]], scenario_title(scen, meta), LOADS[load],
            run_shape(meta, load), source))
        lines.append("    command: %s" % meta.get("command", "?"))
        keys = [(ph, k) for ph, k in HEADLINE_ABS
                if any(k in c.get(ph, {}) for c in cfgs.values())]
        lines.append("    %-12s" % "" + "".join("%19s" % ABS_LABEL.get((ph, k), FIGURES[k][0])
                                                 for ph, k in keys))
        for c in ("pfifo_bulk",) + HEADLINE_BASES:
            if c in cfgs:
                lines.append("    %-12s" % c + "".join("%19s" % fmt(cfgs[c].get(ph, {}), k)
                                                     for ph, k in keys))
    return lines


def headline_plot(rows, outdir):
    """The headline's plot: one bar per row and figure, with its interval."""
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
    return gnuplot(script, os.path.join(outdir, "headline"), 1200, 520)
