# SPDX-License-Identifier: GPL-2.0
"""The run schedule: the configurations alternate round by round (A B C,
B C A, ...; no configuration always follows the same one, whose BQL state
carries over). Either a fixed number of rounds (-n), or in the cost regime
(--pilot) rounds until the ratios are resolved: a pilot, from its spread
the rounds a +-margin interval needs (stats.plan_runs), those rounds, a
new plan from all runs when the interval is still wider, and so on, capped
by --max-runs and --budget. The measurement itself is a callback, so the
schedule runs on canned figures in the host tests."""

import time

from .defs import DECIDE_FIG, FIGURES, RATIOS
from .stats import aggregate, plan_runs
from .system import hold_log, log

# runs_needed() gives up beyond this many runs per configuration
PLAN_LIMIT = 100000


def rotation(configs, rnd):
    """The order of the configurations in round RND."""
    k = rnd % len(configs)
    return configs[k:] + configs[:k]


def run_rounds(measure, configs, first, count, runs):
    """Rounds FIRST .. FIRST+COUNT-1; runs: {config: [figures]}, appended."""
    for rnd in range(first, first + count):
        for cfg in rotation(configs, rnd):
            runs.setdefault(cfg, []).append(measure(cfg, rnd))


def decide_pairs(configs):
    """The pairs whose ratio the cost regime resolves: those of RATIOS the
    configurations have, else the first configuration against each other."""
    pairs = [(a, b) for a, b in RATIOS if a in configs and b in configs]
    return pairs or [(configs[0], c) for c in configs[1:]]


def current_plan(runs, pairs, margin):
    """plan_runs() over the runs so far."""
    return plan_runs({c: aggregate(r) for c, r in runs.items()}, pairs, DECIDE_FIG, margin,
                     PLAN_LIMIT)


def adaptive(measure, configs, opts, clock=time.time):
    """The cost regime's rounds. opts: pilot, margin, max_runs, budget
    (seconds for all rounds, None: no limit). Returns ({config: [figures]},
    the plan: the pilot's spreads, the runs needed, the rounds made, and
    why they stopped: "resolved", "--max-runs", "--budget", or that the
    load has no DECIDE_FIG)."""
    pairs = decide_pairs(configs)
    runs, started = {}, clock()
    run_rounds(measure, configs, 0, opts["pilot"], runs)
    rounds = opts["pilot"]
    plan = current_plan(runs, pairs, opts["margin"])
    pilot = {(p["cand"], p["base"]): (p["cv_cand"], p["cv_base"]) for p in plan["pairs"]}
    while True:
        if plan["runs"] is None:
            stopped = "no %s figure for this load" % FIGURES[DECIDE_FIG][0]
            break
        if all(p["resolved"] for p in plan["pairs"]):
            stopped = "resolved"
            break
        if rounds >= opts["max_runs"]:
            stopped = "--max-runs %d" % opts["max_runs"]
            break
        # the planned rounds, or one more when the plan is already met by
        # the count but the interval is not (the spread grew)
        goal = min(max(plan["runs"], rounds + 1), opts["max_runs"])
        per_round = (clock() - started) / rounds
        if opts["budget"] is not None and clock() - started + per_round > opts["budget"]:
            stopped = "--budget %g s" % opts["budget"]
            break
        if opts["budget"] is not None:
            goal = min(goal, rounds + int((opts["budget"] - (clock() - started)) // per_round))
        run_rounds(measure, configs, rounds, goal - rounds, runs)
        rounds = goal
        plan = current_plan(runs, pairs, opts["margin"])
    for p in plan["pairs"]:
        p["pilot_cv_cand"], p["pilot_cv_base"] = pilot.get((p["cand"], p["base"]), (None, None))
    plan.update(figure=DECIDE_FIG, configs=list(configs), pilot=opts["pilot"],
                max_runs=opts["max_runs"], budget=opts["budget"], rounds=rounds, stopped=stopped,
                limit=PLAN_LIMIT, seconds=round(clock() - started))
    return runs, plan


def log_fig(phase, scen, load, cfg, rnd, reps, fig):
    log("bench: %s %s %s %-20s rep %d/%s: %s" % (
        phase, scen, load, cfg, rnd + 1, reps,
        ", ".join("%s %s" % (FIGURES[k][0], FIGURES[k][1].format(v))
                  for k, v in fig.items()
                  if k in FIGURES and v is not None and
                  (k in ("lockops_per_pkt", "trylock_per_pkt", "lock_per_pkt") or
                   "_per_" not in k))))


def decide_opts(args):
    """The cost regime's options, None when rounds are fixed (-n)."""
    if not args.pilot:
        return None
    return {"pilot": args.pilot, "margin": args.margin, "max_runs": args.max_runs,
            "budget": args.budget}


def run_table(bench, args, key, probes, opts):
    """One scenario and load in one phase: its runs and, in the cost
    regime's time phase, its plan."""
    scen, load, phase = key
    reps = "?" if opts else args.reps

    def measure(cfg, rnd):
        fig = bench.measure(scen, load, cfg, args.seconds, probes)
        log_fig(phase, scen, load, cfg, rnd, reps, fig)
        return fig
    if opts:
        return adaptive(measure, args.configs, opts)
    runs = {}
    run_rounds(measure, args.configs, 0, args.reps, runs)
    return runs, None


def run_phases(bench, args, probes):
    """The count phase (probes on) then the time phase (probes off); in
    each, every configuration runs in turn, round by round. The cost
    regime decides the time phase's rounds and keeps the console quiet
    while measuring. Returns ({(scenario, load, config, phase): [figures
    of each run]}, {"scenario/load": plan})."""
    runs, plans = {}, {}
    opts = decide_opts(args)
    hold_log(bool(args.pilot or args.count))
    try:
        for phase in ("count", "time") if probes else ("time",):
            if phase == "count":
                probes.start()
            for scen in args.scenarios:
                bench.scenario(scen)
                for load in args.loads:
                    if not bench.applies(scen, load) or (phase == "count" and load == "rr"):
                        continue
                    table, plan = run_table(bench, args, (scen, load, phase),
                                            probes if phase == "count" else None,
                                            opts if phase == "time" else None)
                    for cfg, figs in table.items():
                        runs[(scen, load, cfg, phase)] = figs
                    if plan:
                        plans["%s/%s" % (scen, load)] = plan
            if phase == "count":
                probes.stop()
    finally:
        hold_log(False)
    return runs, plans
