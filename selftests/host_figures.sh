#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side check that the benchmark tables of README.rst and
# Documentation/benchmark.rst are the ones Documentation/results.json gives
# (scripts/figures writes them; a table edited by hand, or a run changed
# without rewriting its tables, fails here), and that the check itself
# catches a hand edit: one figure of the README's table changed in a copy.
#
#   selftests/host_figures.sh

. "$(dirname "$0")/lib.sh"

figures=$PFB_TOP/scripts/figures
tmp=$(mktemp -d)
defer "rm -rf $tmp"

check "README.rst and Documentation/benchmark.rst match results.json" "$figures" --check

# Every run says where its figures come from.
check "every run has kernel, host, command, date and provenance" python3 -c '
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
bad = [n for n, r in runs.items()
       if not all(r.get(k) for k in ("kernel", "host", "command", "date", "provenance"))]
print("runs without provenance:", bad) if bad else None
sys.exit(1 if bad or not runs else 0)' "$PFB_TOP/Documentation/results.json"

cp "$PFB_TOP/README.rst" "$tmp/README.rst"
# the first ratio of the README's table, one digit changed by hand
sed -i '/^\.\. begin figures cost-peers/,/^\.\. end figures cost-peers/ {
	0,/[0-9]\.[0-9][0-9][0-9] \[/ s/\([0-9]\.[0-9][0-9]\)\([0-9]\) \[/\1X \[/
}' "$tmp/README.rst"
sed -i 's/X \[/9 [/' "$tmp/README.rst"
check "the copy differs from the README" pfb_fails cmp -s "$PFB_TOP/README.rst" "$tmp/README.rst"
check_fails "a hand-edited figure fails the check" "$figures" --check "$tmp/README.rst"

# The cost table: a ratio whose interval is wider than ±2 % prints as not
# resolved, never as a number; one within it prints as the ratio.
python3 - "$tmp/cost.json" <<'PY'
import json, sys
ratio = {"parts": [{"kind": "ratio"}]}
cols = [{"header": h, "kind": "text"} for h in ("scenario, load", "qdisc", "best peer")]
cols += [dict(ratio, header=h) for h in ("pps vs best", "locks vs best")]
json.dump({"about": "canned", "runs": {"cost-canned": {
    "kernel": "7.3.4+deb13-amd64", "date": "2026-12-04", "host": "canned",
    "command": "canned", "provenance": "canned", "cost": True, "columns": cols,
    "rows": [["cpu-bound, pktgen64", "pfifo_bulk", "pfifo_fast",
              [1.0, 0.999, 1.001], [1.0, 0.95, 1.05]],
             ["cpu-bound, pktgen64", "pfifo", "-", None, None]],
    "vs_peers": {"cpu-bound, pktgen64": {
        "pfifo": [[1.011, 1.007, 1.015], [1.142, 1.0, 1.3]],
        "pfifo_fast": [[1.0, 0.999, 1.001], None]}}}}}, open(sys.argv[1], "w"))
PY
printf '.. begin figures cost-headline\n.. end figures cost-headline\n' > "$tmp/cost.rst"
printf '.. begin figures cost-peers\n.. end figures cost-peers\n' >> "$tmp/cost.rst"
"$figures" --json "$tmp/cost.json" "$tmp/cost.rst" > /dev/null
check_eq "cost table: a ±5 % interval is not resolved, a ±0.1 % one is a ratio" \
	"$(grep '^7.3 .*pfifo_fast' "$tmp/cost.rst" | sed 's/  */ /g')" \
	"7.3 cpu-bound, pktgen64 pfifo_fast 1.000 [0.999, 1.001] not resolved (±5.0 %)"
# The table against every peer: a row per figure, a column per stock
# qdisc, "-" where the run has no figure.
check_eq "peers table: pps and lock calls against each stock qdisc" \
	"$(grep '^7.3 .*\(pps\|lock\)' "$tmp/cost.rst" | sed 's/  */ /g')" \
	"7.3 cpu-bound, pktgen64 pps 1.011 [1.007, 1.015] 1.000 [0.999, 1.001] - -
7.3 cpu-bound, pktgen64 lock calls/sent not resolved (±13.8 %) - - -"
# Its summary: the ranges of the resolved cells, the count of the others.
check_eq "peers table: the summary sums up the resolved cells" \
	"$(sed -n '/^pfifo_bulk \/ each stock/,/^$/p' "$tmp/cost.rst" | tr '\n' ' ' |
	   sed 's/.*Resolved cells/Resolved cells/; s/ *$//')" \
	"Resolved cells, pps against pfifo 1.011 (lowest bound 1.007), pfifo_fast 1.000 (lowest bound 0.999); 1 cell not resolved."

# An imported run outside the cost regime asks which qdisc is ahead: an
# interval wholly above 1 prints whole, with its side, however wide; one
# across 1 is not resolved; a column measured nowhere is left out.
mkdir "$tmp/par"
python3 - "$tmp/par/results.json" <<'PY'
import json, sys
def cfg(pps):
    return {"time": {k: {"mean": v, "sd": v / 10} for k, v in
                     (("offered_pps", 2e5), ("pps", pps), ("dropped_pps", 2e5 - pps))}}
def ratio(scen, lo, hi):
    return {"scenario": scen, "load": "pktgen64", "cand": "pfifo_bulk", "base": "pfifo_fast",
            "phase": "time", "figure": "pps", "ratio": (lo + hi) / 2, "low": lo, "high": hi}
json.dump({"meta": {"kernel": "7.3.4+deb13-amd64", "regime": "parallel", "cpus": 4,
                    "reps": 12, "seconds": 2, "doorbell_ns": 1000},
           "results": {s: {"pktgen64": {"pfifo_bulk": cfg(5e4), "pfifo_fast": cfg(4e4)}}
                       for s in ("cpu-nobql", "cpu-bound")},
           "ratios": [ratio("cpu-nobql", 1.2, 1.5), ratio("cpu-bound", 0.9, 1.1)]},
          open(sys.argv[1], "w"))
PY
echo '{"about": "canned", "runs": {}}' > "$tmp/par.json"
printf '.. begin figures par-canned\n.. end figures par-canned\n' > "$tmp/par.rst"
check "a canned parallel run imports" "$figures" --json "$tmp/par.json" \
	--import-bench par-canned "$tmp/par" --host canned --date 2026-12-05 \
	--command canned "$tmp/par.rst"
check_eq "parallel table: a wide interval above 1 prints whole, one across 1 does not" \
	"$(grep '^cpu-.*pfifo_bulk' "$tmp/par.rst" | sed 's/.*pfifo_fast  *//')" \
	"1.350 [1.200, 1.500] above 1
not resolved (±10.0 %)"
check_eq "parallel table: no column of lock calls the regime never counts" \
	"$(grep -c 'lock calls\|locks vs' "$tmp/par.rst")" 0

# The parallel summaries: a range and a tally from the resolved cells only
# (the one across 1 is counted, never quoted as a figure), and the README's
# sentences indented as their markers are, inside a list item.
printf '.. begin figures parallel-headline\n.. end figures parallel-headline\n' > "$tmp/sum.rst"
printf -- '- Without BQL:\n\n  .. begin figures parallel-nobql\n  .. end figures parallel-nobql\n' >> "$tmp/sum.rst"
printf -- '- With BQL:\n\n  .. begin figures parallel-bql\n  .. end figures parallel-bql\n' >> "$tmp/sum.rst"
"$figures" --json "$tmp/par.json" "$tmp/sum.rst" > /dev/null
check_eq "parallel summary: a row per cell, driver and BQL from the scenario" \
	"$(grep '^7.3 ' "$tmp/sum.rst" | sed 's/  */ /g')" \
	"7.3 refnic no lockless pfifo_fast 1.350 [1.200, 1.500] above 1 - - / -
7.3 refnic yes lockless pfifo_fast not resolved (±10.0 %) - - / -"
check_eq "parallel summary: the unresolved cell is tallied, not quoted" \
	"$(tr '\n' ' ' < "$tmp/sum.rst" | grep -o 'With.*BQL pfifo_bulk is[^.]*\.' | sed 's/  */ /g')" \
	"Without BQL pfifo_bulk is, against the best peer's pps, lockless ahead in 1 of 1 (1.350x, lowest bound 1.200). With BQL pfifo_bulk is, against the best peer's pps, lockless not resolved in 1 of 1."
check_eq "the README's sentences keep their markers' indent, each its cells" \
	"$(for m in nobql bql; do sed -n "/^  \.\. begin figures parallel-$m/,/^  \.\. end/p" "$tmp/sum.rst" | sed -n 3p; done)" \
	"  pfifo_bulk against the best stock qdisc's pps: ahead in 1 of 1 (1.35x,
  pfifo_bulk against the best stock qdisc's pps: not resolved in 1 of 1; 4"

pfb_exit
