// SPDX-License-Identifier: GPL-2.0
/*
 * q_pfifo_bulk.c	tc support for the pfifo_bulk qdisc, loaded by tc from
 *			its library directory as q_pfifo_bulk.so. Built against
 *			the iproute2 source of the tc that loads it.
 *
 * Options travel as a nest of TCA_PFIFO_BULK_* attributes; only the options
 * the user gave are sent, so "change" touches nothing else and the kernel
 * keeps its defaults on "add". Values are only parsed here (a count, a tc
 * size or time, a mode name); their ranges are the kernel's, and its extended ack,
 * which names the option and the range, is what tc prints. The callbacks take
 * a const struct qdisc_util * where the iproute2 source does (6.9 and later;
 * PFB_QU_CONST, from the Makefile's probe). Options are sent, and options
 * and statistics read and printed, by tools/include/pfifo_bulk_user.h,
 * which bulkctl shares; attributes it does not know (a newer qdisc) are
 * skipped.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utils.h"
#include "tc_util.h"
#include "pfifo_bulk_user.h"

static void explain(void)
{
	fprintf(stderr,
		"Usage: ... pfifo_bulk [ limit PACKETS ] [ bulk_bytes SIZE ] [ bulk_pkts PACKETS ]\n"
		"                      [ mode auto|bql|nobql ]\n"
		"                      [ coalesce_usecs TIME ] [ coalesce_pkts PACKETS ]\n"
		"  limit           queue limit in packets\n"
		"  bulk_bytes      byte cap per batch (tc size: 64k, 1m, 1500b...), 0 = none\n"
		"  bulk_pkts       packet cap per batch, 0 = none, 1 = bulk off\n"
		"  mode            auto: bql when the device does BQL, else nobql\n"
		"  coalesce_usecs  hold a batch back for more packets, the oldest at most\n"
		"                  this long (tc time: 800us, 1ms; a bare number is us), 0 = off\n"
		"  coalesce_pkts   release a held batch once this many packets wait\n");
}

/* Syntax only: the kernel refuses what is out of range, naming the range. */
static int illegal(int type, const char *val)
{
	fprintf(stderr, "pfifo_bulk: Illegal value for \"%s\": \"%s\" (%s)\n",
		pfb_opt_words[type], val, pfb_opt_syntax[type]);
	return -1;
}

static int pfifo_bulk_parse_opt(PFB_QU_CONST struct qdisc_util *qu, int argc,
				char **argv, struct nlmsghdr *n, const char *dev)
{
	bool has[TCA_PFIFO_BULK_MAX + 1] = {};
	__u32 val[TCA_PFIFO_BULK_MAX + 1] = {};
	int type;

	for (; argc > 0; argc--, argv++) {
		if (strcmp(*argv, "help") == 0) {
			explain();
			return -1;
		}
		type = pfb_opt_type(*argv);
		if (!type) {
			fprintf(stderr, "pfifo_bulk: unknown parameter \"%s\"\n",
				*argv);
			explain();
			return -1;
		}
		NEXT_ARG();
		if (has[type])
			duparg(pfb_opt_words[type], *argv);
		has[type] = true;
		if (pfb_opt_parse(type, *argv, &val[type]))
			return illegal(type, *argv);
	}

	pfb_add_opts(n, 1024, has, val);
	return 0;
}

static int pfifo_bulk_print_opt(PFB_QU_CONST struct qdisc_util *qu, FILE *f,
				struct rtattr *opt)
{
	struct pfb_qopt o;

	pfb_read_qopt(&o, opt);
	pfb_print_qopt(&o);
	return 0;
}

static int pfifo_bulk_print_xstats(PFB_QU_CONST struct qdisc_util *qu, FILE *f,
				   struct rtattr *xstats)
{
	struct pfb_xstats x;

	pfb_read_xstats(&x, xstats);
	pfb_print_xstats(&x);
	return 0;
}

struct qdisc_util pfifo_bulk_qdisc_util = {
	.id		= "pfifo_bulk",
	.parse_qopt	= pfifo_bulk_parse_opt,
	.print_qopt	= pfifo_bulk_print_opt,
	.print_xstats	= pfifo_bulk_print_xstats,
};
