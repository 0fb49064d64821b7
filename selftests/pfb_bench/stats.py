# SPDX-License-Identifier: GPL-2.0
"""Statistics: mean and standard deviation over runs, ratios of means with
a 95 % interval (Welch, log scale), targets and regressions."""

import math

from .defs import (BUCKETS, FIGURES, HISTS, RATIOS, RATIO_FIGS, REGRESSIONS, SPLIT_LOCK_FIGS, TARGETS)


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
