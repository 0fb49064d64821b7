# SPDX-License-Identifier: GPL-2.0
"""Statistics: mean and standard deviation over runs, ratios of means with
a 95 % interval, whether an interval resolves a margin, how many runs it
needs, targets and regressions.

The interval of a ratio of means A/B is the delta method on the log scale:
log(mean A) has a variance of about cv_A^2 / n_A (cv = sd / mean), so
log(A/B) has cv_A^2/n_A + cv_B^2/n_B, with Welch-Satterthwaite degrees of
freedom and Student's t (the runs are few: 3 to 30 per configuration, where
1.96 would be 5-30 % too narrow). exp() of its ends gives an interval that
is asymmetric about the ratio and never below 0. Why not the others:
Fieller's interval is exact for normal means but unbounded once B's mean is
not clearly non-zero, and at the spreads here (cv 0.5-30 %, B far from 0)
it agrees with the delta method to second order in cv; a bootstrap at n = 3
to 5 resamples so few distinct values that its percentiles are too narrow.
The configurations run alternately, but each is measured on its own qdisc
and the runs of A and B are treated as independent samples (not pairs), so
a configuration list of any length gives every pair the same method."""

import math

from .defs import (BUCKETS, FIGURES, HISTS, RATIOS, RATIO_FIGS, REGRESSIONS, SPLIT_LOCK_FIGS, TARGETS)


# Student's t, two-sided 95 %, by degrees of freedom
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
       2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086]


def t95(df):
    """Student's t, two-sided 95 %, for DF degrees of freedom (rounded
    down): the table up to 20, above it 1.96 + 2.5/df (within 0.002 of the
    exact quantile from 21 up: 2.080 at 21, 2.042 at 30, 2.000 at 60)."""
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


def welch_df(va, vb, na, nb):
    """Welch-Satterthwaite degrees of freedom of va + vb (the variances of
    two means, from na and nb runs)."""
    return (va + vb) ** 2 / ((va ** 2 / (na - 1)) + (vb ** 2 / (nb - 1)))


def ratio_ci(a, b):
    """(ratio of means a/b, low, high), a and b {"mean", "sd", "n"}: the 95 %
    interval of the module's docstring (delta method on the log scale,
    Welch's df, t quantile). low and high are None when a side has n < 2 or
    a mean <= 0, and both equal the ratio when neither side varied."""
    ma, mb = a["mean"], b["mean"]
    if not mb:
        return None, None, None
    r = ma / mb
    if a["n"] < 2 or b["n"] < 2 or ma <= 0 or mb <= 0:
        return r, None, None
    va, vb = (a["sd"] / ma) ** 2 / a["n"], (b["sd"] / mb) ** 2 / b["n"]
    if va + vb == 0:
        return r, r, r
    df = welch_df(va, vb, a["n"], b["n"])
    half = t95(max(1, math.floor(df))) * math.sqrt(va + vb)
    return r, r * math.exp(-half), r * math.exp(half)


def half_width(r, lo, hi):
    """The relative half-width of an interval about its ratio: the larger
    of hi/r - 1 and 1 - lo/r (on the log scale the upper side is the
    larger). None without an interval."""
    if r is None or lo is None or r <= 0:
        return None
    return max(hi / r - 1, 1 - lo / r)


def resolved(r, lo, hi, margin):
    """Whether the interval [lo, hi] pins the ratio r to within +-margin
    (a fraction: 0.02 for 2 %). No interval (n < 2) resolves nothing."""
    h = half_width(r, lo, hi)
    return h is not None and h <= margin


def runs_needed(cv_a, cv_b, margin, limit=100000):
    """Runs per configuration (the same n for both) for the 95 % interval
    of the ratio of two means, with these coefficients of variation, to be
    within +-margin: the smallest n >= 2 with t(df) * sqrt((cv_a^2 +
    cv_b^2) / n) <= log(1 + margin), df Welch's for n runs a side (the
    interval ratio_ci() will compute, if the spreads stay what they were).
    Returns limit + 1 when even LIMIT runs would not do."""
    va, vb = cv_a ** 2, cv_b ** 2
    if va + vb == 0:
        return 2
    goal = math.log(1 + margin)
    # from the normal quantile up: t only shrinks as n grows
    n = max(2, int((1.96 / goal) ** 2 * (va + vb)))
    while n <= limit:
        df = welch_df(va / n, vb / n, n, n)
        if t95(max(1, math.floor(df))) * math.sqrt((va + vb) / n) <= goal:
            # the normal start may overshoot where t is large: step down
            while n > 2:
                df = welch_df(va / (n - 1), vb / (n - 1), n - 1, n - 1)
                if t95(max(1, math.floor(df))) * math.sqrt((va + vb) / (n - 1)) > goal:
                    break
                n -= 1
            return n
        n += 1
    return limit + 1


def cv(agg):
    """sd / mean of one aggregated figure; None without a mean > 0 or n < 2."""
    if not agg or agg["n"] < 2 or agg["mean"] <= 0:
        return None
    return agg["sd"] / agg["mean"]


def plan_runs(cfgs, pairs, fig, margin, limit=100000):
    """How many runs per configuration every pair's ratio of FIG needs for a
    +-margin interval, from the runs so far. cfgs: {config: {fig: agg}} (the
    time phase's aggregates). Returns {"runs": the largest need (None when
    no pair has FIG in both configurations), "pairs": [{cand, base, cv_cand,
    cv_base, runs, ratio, low, high, resolved}]}."""
    out = []
    for cand, base in pairs:
        a, b = cfgs.get(cand, {}).get(fig), cfgs.get(base, {}).get(fig)
        ca, cb = cv(a), cv(b)
        if ca is None or cb is None:
            continue
        r, lo, hi = ratio_ci(a, b)
        out.append({"cand": cand, "base": base, "cv_cand": ca, "cv_base": cb,
                    "runs": runs_needed(ca, cb, margin, limit), "ratio": r, "low": lo,
                    "high": hi, "half_width": half_width(r, lo, hi),
                    "resolved": resolved(r, lo, hi, margin)})
    return {"runs": max((p["runs"] for p in out), default=None), "pairs": out}


def judge(r, lo, hi, target):
    """A target ("≤"|"≥", value) against a ratio and its interval: met,
    MISSED (the interval is past it), or 'not resolved' (it straddles)."""
    if r is None:
        return "n/a"
    if lo is None:
        return "n/a (no interval: n < 2)"
    op, val = target
    if (hi <= val) if op == "≤" else (lo >= val):
        return "met"
    if (lo > val) if op == "≤" else (hi < val):
        return "MISSED"
    return "not resolved"


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
