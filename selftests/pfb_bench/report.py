# SPDX-License-Identifier: GPL-2.0
"""The text report: one table per scenario and load, per phase, with the
ratios, the targets' verdicts, regressions and batch histograms."""

import os

from .defs import (BUCKETS, COUNTING, FIGURES, HISTS, LOADS, MARGIN, PHASE_TITLE, PKTGEN_LOADS, REGIMES,
                   REGRESSIONS, SCENARIOS, TABLES, TOP)
from .stats import half_width, ratios, regressions, resolved
from .perf import perf_lines


def fmt(agg, key):
    if key not in agg:
        return "-"
    f = FIGURES[key][1]
    return (f + " ± " + f).format(agg[key]["mean"], agg[key]["sd"])


def fmt_ratio(r, lo, hi, margin=None):
    """A ratio with its 95 % interval. With a margin (a fraction), an
    interval wider than +-margin prints as "not resolved (+-X %)" and no
    ratio at all: a number there would read as a result (or a tie)."""
    if r is None:
        return "n/a"
    if margin is not None and not resolved(r, lo, hi, margin):
        if lo is None:
            return "not resolved (no interval: n < 2)"
        return "not resolved (±%.1f %%)" % (100 * half_width(r, lo, hi))
    if lo is None:
        return "%.3f" % r
    return "%.3f [%.3f, %.3f]" % (r, lo, hi)


def stale_code(meta):
    """Why a run's figures cannot be trusted, or None: kernel text patched
    while the vCPUs of a parallel run measured. Multi-threaded TCG keeps
    translated code that such a patch leaves stale, so the run may have
    measured code the kernel no longer has (or crashed a vCPU on it)."""
    patched = meta.get("text_patched_run")
    if meta["regime"] != "parallel" or not patched:
        return None
    return ("kernel text patched under running vCPUs (%s): multi-threaded TCG "
            "may have run stale code, the figures are not trusted" % ", ".join(patched[:3]))


def run_margin(meta):
    """The margin a run's ratios are printed with: its --margin, or the
    default for runs made before there was one."""
    return meta.get("margin", MARGIN)


def scenario_title(scen, meta):
    if scen == "nic":
        nic = meta.get("nic") or {}
        mq = (", %d TX queues: mq, the qdisc under it on each" % nic["txqs"]
              if nic.get("txqs", 1) > 1 else "")
        return "%s (%s, BQL %s%s)" % (nic.get("driver", "NIC"), meta.get("nic_dev"),
                                      "on" if nic.get("bql") else
                                      "off: stock qdiscs send batches of 1", mq)
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


def run_shape(meta, load=None):
    """How many runs of what: "n=3 x 2 s", a counted run's packets, and the
    cost regime's pilot."""
    size = ("%d pkts" % meta["count"] if meta.get("count") and
            PKTGEN_LOADS.get(load, (0, True))[1] is False else "%g s" % meta["seconds"])
    if not meta.get("pilot"):
        return "n=%d x %s" % (meta["reps"], size)
    return "n=%d (counts), pilot %d then as the spread needs, at most %d (times) x %s" % (
        meta["reps"], meta["pilot"], meta["max_runs"], size)


def table_header(scen, load, meta, cfgs=()):
    return "== %s · %s · %s · kernel %s · %s%s" % (
        scenario_title(scen, meta), load_title(load, meta.get("pace")), REGIMES[meta["regime"]],
        meta["kernel"], run_shape(meta, load), coalesce_title(meta, cfgs))


def report_head(meta):
    """The run's conditions: kernel, regime, doorbell, pace, windows, the NIC,
    pfb_locked, the clocksource and any kernel text patched."""
    lines = ["pfifo_bulk benchmark: kernel %s, %s, %d CPUs, %s, configurations "
             "alternated" % (meta["kernel"], REGIMES[meta["regime"]], meta["cpus"],
                             run_shape(meta, "pktgen64")),
             "guest clock: %s" % meta.get("guest_clock", "host time"),
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
    stale = stale_code(meta)
    if stale:
        lines.append("FAILED: " + stale)
    if meta["regime"] not in COUNTING:
        lines.append("no spin-lock counts or tracepoint batches in this regime (text "
                     "patching is unsafe): batches from xstats and refnic ethtool -S")
    return lines


def report_regressions(results, margin):
    """The regressions of every table, listed before the tables."""
    regress = []
    for scen, loads in results.items():
        for load, cfgs in loads.items():
            for cand, base, phase, k, r, lo, hi in regressions(cfgs):
                regress.append("  %s / %s: %s %s is %s vs %s %s (ratio %s)" % (
                    scen, load, cand, FIGURES[k][0], fmt(cfgs[cand][phase], k), base,
                    fmt(cfgs[base][phase], k), fmt_ratio(r, lo, hi, margin)))
    return ["REGRESSIONS (the 95 %% interval of the ratio worse by > 1 %%; spin locks "
            "on the combined figure: %s):" % ", ".join("%s vs %s" % p for p in REGRESSIONS)
            ] + (regress or ["  none"])


def report_phases(scen, load, cfgs, meta):
    """The header of one table and its figures, phase by phase."""
    lines = [table_header(scen, load, meta, cfgs)]
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
    return lines


def report_ratios(cfgs, margin):
    """How the tracepoint's and the xstats' batch means agree, and the
    ratios of means with their intervals and verdicts; an interval wider
    than +-margin as "not resolved"."""
    lines = []
    agree = batch_agreement(cfgs)
    if agree:
        lines.append("batch means, tracepoint vs pfifo_bulk xstats (same runs): " +
                     ", ".join("%s %+.1f %%%s" % (c, 100 * d, "" if abs(d) <= 0.05
                                                  else " (MORE THAN 5 %)")
                               for c, d in agree))
    rows = {}
    for r in ratios(cfgs):
        text = "%s (%s) %s" % (FIGURES[r["figure"]][0], r["phase"],
                               fmt_ratio(r["ratio"], r["low"], r["high"], margin))
        if r["target"]:
            text += " (target %s: %s)" % (r["target"], r["verdict"])
        rows.setdefault("%s/%s" % (r["cand"], r["base"]), []).append(text)
    if rows:
        lines.append("ratios of means, same run, 95 %% interval (wider than ±%g %%: "
                     "not resolved):" % (100 * margin))
        for pair, t in rows.items():
            lines.append("  %s:" % pair)
            lines.extend("      " + x for x in t)
    return lines


def report_hists(cfgs):
    """The batch histograms: share of batches per bucket, ± sd over runs."""
    lines = []
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
    return lines


def report(results, meta, perf):
    """The whole text report of a run."""
    margin = run_margin(meta)
    lines = report_head(meta) + [""] + report_regressions(results, margin) + [""]
    for scen, loads in results.items():
        for load, cfgs in loads.items():
            lines += report_phases(scen, load, cfgs, meta)
            lines += plan_lines((meta.get("plans") or {}).get("%s/%s" % (scen, load)), margin)
            lines += report_ratios(cfgs, margin)
            lines += report_hists(cfgs)
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


def plan_lines(plan, margin):
    """What the pilot measured and what the runs resolved: each
    configuration's spread, the runs a +-margin interval needs, the runs
    made and why they stopped."""
    if not plan:
        return []
    lines = ["runs decided by the spread (%s of %s): pilot %d rounds, then up to %d; "
             "%d made, stopped: %s" % (plan["figure"], ", ".join(plan["configs"]),
                                        plan["pilot"], plan["max_runs"], plan["rounds"],
                                        plan["stopped"])]
    for p in plan["pairs"]:
        need = p["runs"]
        lines.append("  %s/%s: spread (sd/mean) %.2f %% and %.2f %% in the pilot, %.2f %% and "
                     "%.2f %% over all runs; a ±%g %% interval needs %s runs each; %s" % (
                         p["cand"], p["base"], 100 * p["pilot_cv_cand"],
                         100 * p["pilot_cv_base"], 100 * p["cv_cand"], 100 * p["cv_base"],
                         100 * margin,
                         need if need <= plan["limit"] else "over %d" % plan["limit"],
                         fmt_ratio(p["ratio"], p["low"], p["high"], margin)))
    return lines
