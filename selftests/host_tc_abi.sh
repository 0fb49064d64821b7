#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The tc plugin's ABI with the tc that loads it. q_pfifo_bulk.so is built
# against one iproute2 source (Debian serves bookworm's 6.1.0 source but not
# trixie's 6.15.0) and is loaded by tc 6.1 and 6.15 alike. Proves, for the
# iproute2 source the plugin is built against (IPROUTE2_SRC, as for make):
# the plugin calls exactly the tc helpers listed below and no other (a new
# one must be checked and listed); each has the prototype it has in
# iproute2 v6.15.0 (read at tag v6.15.0, commit eeb22cfe; file:line per
# entry); struct qdisc_util has 6.15's layout; the enum values and buffer
# size compiled into the plugin from the headers (PRINT_*, COLOR_NONE,
# SPRINT_BSIZE, TIME_UNITS_PER_SEC) are 6.15's; the callbacks are declared
# const exactly when the source declares them so (the Makefile's probe);
# and, when a trixie build root with its tc exists, that tc exports every
# helper; Debian's patches, left out of the source, touch none of it. Fails
# when a helper's signature drifts.
#
#   selftests/host_tc_abi.sh		(IPROUTE2_SRC=DIR to check another source)

. "$(dirname "$0")/lib.sh"
require_cmd nm cc make

plugin=$PFB_TOP/tc-plugin
out=$(make -B -s -C "$plugin" 2>&1) || { echo "not ok: setup: plugin build: $out"; exit 1; }
src=$(make -s -C "$plugin" --no-print-directory print-src)

# Helper, then its type in iproute2 v6.15.0. print_color_* are behind the
# static inline print_*() of json_print.h:45-81 (_PRINT_FUNC).
read -r -d '' helpers <<'EOF'
addattr8		int (struct nlmsghdr *, int, int, __u8)			include/libnetlink.h:192
addattr32		int (struct nlmsghdr *, int, int, __u32)		include/libnetlink.h:194
addattr_nest		struct rtattr *(struct nlmsghdr *, int, int)		include/libnetlink.h:201
addattr_nest_end	int (struct nlmsghdr *, struct rtattr *)		include/libnetlink.h:202
parse_rtattr_flags	int (struct rtattr *[], int, struct rtattr *, int, unsigned short)	include/libnetlink.h:214
incomplete_command	void (void)						include/utils.h:52
duparg			void (const char *, const char *)			include/utils.h:195
get_unsigned		int (unsigned *, const char *, int)			include/utils.h:148
get_size		int (unsigned int *, const char *)			include/utils.h:165
get_time		int (unsigned int *, const char *)			include/utils.h:336
sprint_time		char *(__u32, char *)					include/utils.h:338
sprint_time64		char *(__s64, char *)					include/utils.h:339
open_json_object	void (const char *)					include/json_print.h:38
close_json_object	void (void)						include/json_print.h:39
print_nl		void (void)						include/json_print.h:43
print_color_bool	int (enum output_type, enum color_attr, const char *, const char *, bool)	include/json_print.h:66
print_color_string	int (enum output_type, enum color_attr, const char *, const char *, const char *)	include/json_print.h:69
print_color_uint	int (enum output_type, enum color_attr, const char *, const char *, unsigned int)	include/json_print.h:70
print_color_size	int (enum output_type, enum color_attr, const char *, const char *, __u32)	include/json_print.h:71
print_color_u64		int (enum output_type, enum color_attr, const char *, const char *, uint64_t)	include/json_print.h:72
print_color_float	int (enum output_type, enum color_attr, const char *, const char *, double)	include/json_print.h:79
EOF

# The plugin's undefined symbols that are not libc's (versioned) nor weak.
used=$(nm -D --undefined-only "$plugin/q_pfifo_bulk.so" | awk '$1 == "U" && $2 !~ /@/ { print $2 }' | sort)
listed=$(awk '{ print $1 }' <<< "$helpers" | sort)
check_eq "the plugin calls exactly the listed tc helpers" \
	"$(comm -3 <(echo "$used") <(echo "$listed") | tr -d '\t' | tr '\n' ' ')" ""

# One compile of assertions against the source's headers; a failed one names
# what differs.
tmp=$(mktemp -d)
defer "rm -rf $tmp"
{
	echo '#include <stddef.h>'
	echo '#include "utils.h"'
	echo '#include "tc_util.h"'
	echo '#define SAME(f, t) _Static_assert(__builtin_types_compatible_p(__typeof__(f), t), "ABI: " #f " is not " #t " as in v6.15.0")'
	echo '#define AT(m, i) _Static_assert(offsetof(struct qdisc_util, m) == (i) * sizeof(void *), "ABI: qdisc_util." #m " moved")'
	awk -F'\t+' '{ printf "SAME(%s, %s);\n", $1, $2 }' <<< "$helpers"
	# tc/tc_util.h:31-46 at v6.15.0
	echo 'AT(next, 0); AT(id, 1); AT(parse_qopt, 2); AT(print_qopt, 3); AT(print_xstats, 4);'
	echo 'AT(parse_copt, 5); AT(print_copt, 6); AT(has_block, 7);'
	echo '_Static_assert(sizeof(struct qdisc_util) == 8 * sizeof(void *), "ABI: qdisc_util size");'
	# include/json_print.h:31-35, color.h:7-15, utils.h:49,62 at v6.15.0
	echo '_Static_assert(PRINT_FP == 1 && PRINT_JSON == 2 && PRINT_ANY == 4, "ABI: enum output_type");'
	echo '_Static_assert(COLOR_NONE == 6, "ABI: COLOR_NONE");'
	echo '_Static_assert(SPRINT_BSIZE == 64, "ABI: SPRINT_BSIZE");'
	echo '_Static_assert(TIME_UNITS_PER_SEC == 1000000, "ABI: TIME_UNITS_PER_SEC");'
} > "$tmp/abi.c"
err=$(cc -fsyntax-only -D_GNU_SOURCE -I"$src/include" -I"$src/include/uapi" -I"$src/tc" "$tmp/abi.c" 2>&1)
check_eq "helpers, struct qdisc_util and constants as in v6.15.0 ($src)" \
	"$(grep 'static assertion failed' <<< "$err" | grep -o '"ABI: [^"]*"' | tr -d '"')" ""
check "the assertions compiled" test -z "$(grep -v 'ABI: ' <<< "$err" | grep error)"

# The callbacks' constness follows the source: const from iproute2 6.9 on.
want=
grep -q 'int (\*parse_qopt)(const struct qdisc_util' "$src/tc/tc_util.h" && want=const
check_eq "callbacks declared ${want:-non-const} as in $src" \
	"$(make -s -C "$plugin" --no-print-directory print-qu-const)" "PFB_QU_CONST=$want"

# The source is unpacked without Debian's patches (make setup): they must
# touch nothing the tools compile: the plugin's headers, bulkctl's lib/ and
# tc/ files, the ip plugin's ip/ip_common.h (bookworm's one patch is
# ip/ip.c's).
if [ -f "$src/debian/patches/series" ]; then
	touched=$(sed -n 's|^+++ [^/]*/||p' "$src"/debian/patches/*.patch 2>/dev/null | awk '{ print $1 }')
	check_eq "Debian's patches touch nothing under include/, lib/ or tc/, nor ip/ip_common.h" \
		"$(grep -E '^(include|lib|tc)/|^ip/ip_common\.h$' <<< "$touched" | tr '\n' ' ')" ""
fi

# The tc of a trixie build root, when there is one (make setup).
for root in /var/cache/pfifo-bulk/trixie*/; do
	tc=${root}usr/sbin/tc
	[ -x "$tc" ] || continue
	exported=$(nm -D --defined-only "$tc" | awk '{ print $3 }' | sort)
	check_eq "$tc exports every helper" "$(comm -23 <(echo "$listed") <(echo "$exported") | tr '\n' ' ')" ""
done

pfb_exit
