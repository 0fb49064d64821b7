#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side check that the benchmark stays readable: no module of
# selftests/pfb_bench/ over 500 lines, no function over 80, every module
# says what it holds (a docstring); and bulk_bench.py's command line still
# answers --help and refuses an unknown configuration, without root. The
# checker proves itself on a module made too long on purpose.
#
#   selftests/host_bench_size.sh

. "$(dirname "$0")/lib.sh"

pkg=$PFB_TOP/selftests/pfb_bench
tmp=$(mktemp -d)
defer "rm -rf $tmp"

# sizes DIR: the modules and functions of DIR over the limits, one a line
sizes() {
	python3 - "$1" <<'PY'
import ast, os, sys
d = sys.argv[1]
for f in sorted(os.listdir(d)):
    if not f.endswith(".py"):
        continue
    src = open(os.path.join(d, f)).read()
    n = len(src.rstrip("\n").split("\n"))
    if n > 500:
        print("%s: %d lines" % (f, n))
    tree = ast.parse(src)
    if not ast.get_docstring(tree):
        print("%s: no docstring" % f)
    for x in ast.walk(tree):
        if isinstance(x, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = x.end_lineno - x.lineno + 1
            if length > 80:
                print("%s: %s() %d lines" % (f, x.name, length))
PY
}

over=$(sizes "$pkg")
check_eq "pfb_bench: no module over 500 lines, no function over 80" "$over" ""
check_cmp "pfb_bench has its modules" "$(ls "$pkg"/*.py | wc -l)" '>=' 5

# the checker itself: a function of 81 lines and a module of 501
{
	echo '"""too long on purpose"""'
	echo 'def f():'
	for i in $(seq 80); do echo "    x$i = $i"; done
	for i in $(seq 419); do echo "y$i = $i"; done
} > "$tmp/long.py"
check_eq "the checker finds a function of 81 lines and a module of 501" \
	"$(sizes "$tmp" | sort | tr '\n' ';')" "long.py: 501 lines;long.py: f() 81 lines;"

# quiet CMD...: CMD with its output dropped
quiet() {
	"$@" >/dev/null 2>&1
}
check "bulk_bench.py --help" quiet python3 "$PFB_TOP/selftests/bulk_bench.py" --help
check_fails "bulk_bench.py refuses an unknown configuration" \
	python3 "$PFB_TOP/selftests/bulk_bench.py" -c no_such_qdisc

pfb_exit
