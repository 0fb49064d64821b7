// SPDX-License-Identifier: GPL-2.0
/*
 * Build-time probe (see Makefile): do the struct qdisc_util callbacks of the
 * iproute2 source in use take a const struct qdisc_util * (iproute2 6.9 and
 * later, commit 8576afbb "tc: make qdisc_util arg const") or a plain one?
 * Compiled with -DPFB_QU_CONST=const and with it empty, incompatible
 * function pointers an error as gcc 14 makes them: the one that compiles is
 * how q_pfifo_bulk.c declares its callbacks. The layout is the same either
 * way, so the plugin's ABI does not depend on the answer.
 */
#include "utils.h"
#include "tc_util.h"

static int parse(PFB_QU_CONST struct qdisc_util *qu, int argc, char **argv,
		 struct nlmsghdr *n, const char *dev)
{
	return 0;
}

static int print(PFB_QU_CONST struct qdisc_util *qu, FILE *f,
		 struct rtattr *opt)
{
	return 0;
}

struct qdisc_util probe_qdisc_util = {
	.parse_qopt	= parse,
	.print_qopt	= print,
	.print_xstats	= print,
};
