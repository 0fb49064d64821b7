// SPDX-License-Identifier: GPL-2.0
/*
 * q_pfifo_bulk.c	tc support for the pfifo_bulk qdisc, loaded by tc 6.1
 *			from its library directory as q_pfifo_bulk.so.
 *
 * Options travel as a nest of TCA_PFIFO_BULK_* attributes; only the options
 * the user gave are sent, so "change" touches nothing else and the kernel
 * keeps its defaults on "add". Every value is range-checked here first, with
 * the ranges of the kernel's policy (tools/include/pfifo_bulk_user.h), so a
 * typo is refused by tc with a message naming the option rather than by the
 * kernel. Printing goes through print_*() only, so text and -j agree, and
 * the extended statistics are a nest too: attributes this file does not know
 * (a newer qdisc) are skipped.
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
		"  limit       queue limit, %u..%u packets\n"
		"  bulk_bytes  byte cap per batch, %u..%u (tc size: 64k, 1m, 1500b...), 0 = none\n"
		"  bulk_pkts   packet cap per batch, %u..%u, 0 = none\n"
		"  mode        auto: bql when the device does BQL, else nobql\n",
		PFB_LIMIT_MIN, PFB_LIMIT_MAX, PFB_BULK_BYTES_MIN, PFB_BULK_BYTES_MAX,
		PFB_BULK_PKTS_MIN, PFB_BULK_PKTS_MAX);
}

static int illegal(const char *opt, const char *val, const char *want)
{
	fprintf(stderr, "pfifo_bulk: Illegal value for \"%s\": \"%s\" (%s)\n",
		opt, val, want);
	return -1;
}

/* A count in decimal, within [min, max]. */
static int get_count(__u32 *v, const char *arg, __u32 min, __u32 max)
{
	if (get_u32(v, arg, 10))
		return -1;
	return *v < min || *v > max ? -1 : 0;
}

static int pfifo_bulk_parse_opt(struct qdisc_util *qu, int argc, char **argv,
				struct nlmsghdr *n, const char *dev)
{
	bool has_limit = false, has_bytes = false, has_pkts = false;
	__u32 limit = 0, bulk_bytes = 0, bulk_pkts = 0;
	char want[64];
	struct rtattr *tail;
	int mode = -1;

	while (argc > 0) {
		if (strcmp(*argv, "limit") == 0) {
			NEXT_ARG();
			if (has_limit)
				duparg("limit", *argv);
			snprintf(want, sizeof(want), "%u..%u packets",
				 PFB_LIMIT_MIN, PFB_LIMIT_MAX);
			if (get_count(&limit, *argv, PFB_LIMIT_MIN, PFB_LIMIT_MAX))
				return illegal("limit", *argv, want);
			has_limit = true;
		} else if (strcmp(*argv, "bulk_bytes") == 0) {
			NEXT_ARG();
			if (has_bytes)
				duparg("bulk_bytes", *argv);
			snprintf(want, sizeof(want), "%u..%u bytes",
				 PFB_BULK_BYTES_MIN, PFB_BULK_BYTES_MAX);
			if (get_size(&bulk_bytes, *argv) ||
			    bulk_bytes > PFB_BULK_BYTES_MAX)
				return illegal("bulk_bytes", *argv, want);
			has_bytes = true;
		} else if (strcmp(*argv, "bulk_pkts") == 0) {
			NEXT_ARG();
			if (has_pkts)
				duparg("bulk_pkts", *argv);
			snprintf(want, sizeof(want), "%u..%u packets",
				 PFB_BULK_PKTS_MIN, PFB_BULK_PKTS_MAX);
			if (get_count(&bulk_pkts, *argv, PFB_BULK_PKTS_MIN,
				      PFB_BULK_PKTS_MAX))
				return illegal("bulk_pkts", *argv, want);
			has_pkts = true;
		} else if (strcmp(*argv, "mode") == 0) {
			NEXT_ARG();
			if (mode >= 0)
				duparg("mode", *argv);
			mode = pfb_mode_parse(*argv);
			if (mode < 0)
				return illegal("mode", *argv, "auto, bql or nobql");
		} else if (strcmp(*argv, "help") == 0) {
			explain();
			return -1;
		} else {
			fprintf(stderr, "pfifo_bulk: unknown parameter \"%s\"\n",
				*argv);
			explain();
			return -1;
		}
		argc--;
		argv++;
	}

	if (!has_limit && !has_bytes && !has_pkts && mode < 0)
		return 0;

	/* The qdisc parses TCA_OPTIONS strictly: the nest flag is required. */
	tail = addattr_nest(n, 1024, TCA_OPTIONS | NLA_F_NESTED);
	if (has_limit)
		addattr32(n, 1024, TCA_PFIFO_BULK_LIMIT, limit);
	if (has_bytes)
		addattr32(n, 1024, TCA_PFIFO_BULK_BULK_BYTES, bulk_bytes);
	if (has_pkts)
		addattr32(n, 1024, TCA_PFIFO_BULK_BULK_PKTS, bulk_pkts);
	if (mode >= 0)
		addattr8(n, 1024, TCA_PFIFO_BULK_MODE, mode);
	addattr_nest_end(n, tail);
	return 0;
}

static bool attr_u32(struct rtattr *tb[], int type, __u32 *v)
{
	if (!tb[type] || RTA_PAYLOAD(tb[type]) < sizeof(__u32))
		return false;
	*v = rta_getattr_u32(tb[type]);
	return true;
}

static bool attr_u64(struct rtattr *tb[], int type, __u64 *v)
{
	if (!tb[type] || RTA_PAYLOAD(tb[type]) < sizeof(__u64))
		return false;
	*v = rta_getattr_u64(tb[type]);
	return true;
}

static void print_mode(const char *key, struct rtattr *a)
{
	const char *name;
	char buf[16];

	if (!a || RTA_PAYLOAD(a) < sizeof(__u8))
		return;
	name = pfb_mode_name(rta_getattr_u8(a));
	if (!name) {
		snprintf(buf, sizeof(buf), "%u", rta_getattr_u8(a));
		name = buf;
	}
	print_string(PRINT_JSON, key, NULL, name);
	print_string(PRINT_FP, NULL, "%s ", key);
	print_string(PRINT_FP, NULL, "%s ", name);
}

static int pfifo_bulk_print_opt(struct qdisc_util *qu, FILE *f,
				struct rtattr *opt)
{
	struct rtattr *tb[TCA_PFIFO_BULK_MAX + 1];
	char buf[32];
	__u32 v;

	if (!opt)
		return 0;
	parse_rtattr_flags(tb, TCA_PFIFO_BULK_MAX, RTA_DATA(opt),
			   RTA_PAYLOAD(opt), NLA_F_NESTED);

	if (attr_u32(tb, TCA_PFIFO_BULK_LIMIT, &v))
		print_uint(PRINT_ANY, "limit", "limit %up ", v);
	if (attr_u32(tb, TCA_PFIFO_BULK_BULK_BYTES, &v)) {
		print_uint(PRINT_JSON, "bulk_bytes", NULL, v);
		print_string(PRINT_FP, NULL, "bulk_bytes %s ",
			     pfb_sprint_size(v, buf, sizeof(buf)));
	}
	if (attr_u32(tb, TCA_PFIFO_BULK_BULK_PKTS, &v))
		print_uint(PRINT_ANY, "bulk_pkts", "bulk_pkts %u ", v);
	print_mode("mode", tb[TCA_PFIFO_BULK_MODE]);
	print_mode("effective_mode", tb[TCA_PFIFO_BULK_EFFECTIVE_MODE]);
	if (tb[TCA_PFIFO_BULK_LOCKLESS] &&
	    RTA_PAYLOAD(tb[TCA_PFIFO_BULK_LOCKLESS]) >= sizeof(__u8)) {
		bool lockless = rta_getattr_u8(tb[TCA_PFIFO_BULK_LOCKLESS]);

		print_bool(PRINT_JSON, "lockless", NULL, lockless);
		print_string(PRINT_FP, NULL, "%s ",
			     lockless ? "lockless" : "locked");
	}
	return 0;
}

/*
 * The statistics print as up to four lines (totals, histogram, end reasons,
 * the rest); a line is printed only when the kernel sent something for it.
 */
struct xstats_printer {
	struct rtattr **tb;
	int lines;
};

static void begin_line(struct xstats_printer *p)
{
	if (p->lines++)
		print_nl();
	print_string(PRINT_FP, NULL, " ", NULL);
}

static void print_counters(struct xstats_printer *p, const int *types,
			   const char *const *keys, int n)
{
	bool begun = false;
	__u64 v;
	int i;

	for (i = 0; i < n; i++) {
		if (!attr_u64(p->tb, types[i], &v))
			continue;
		if (!begun)
			begin_line(p);
		begun = true;
		print_string(PRINT_FP, NULL, " %s ", keys[i]);
		print_lluint(PRINT_ANY, keys[i], "%llu", v);
	}
}

static void print_hist(struct xstats_printer *p, struct rtattr *nest)
{
	struct rtattr *h[TCA_PFIFO_BULK_HIST_MAX + 1];
	bool begun = false;
	__u64 v;
	int i;

	parse_rtattr_flags(h, TCA_PFIFO_BULK_HIST_MAX, RTA_DATA(nest),
			   RTA_PAYLOAD(nest), NLA_F_NESTED);
	open_json_object("batch_hist");
	for (i = TCA_PFIFO_BULK_HIST_1; i <= TCA_PFIFO_BULK_HIST_MAX; i++) {
		if (!attr_u64(h, i, &v))
			continue;
		if (!begun) {
			begin_line(p);
			print_string(PRINT_FP, NULL, " batch_hist", NULL);
		}
		begun = true;
		print_string(PRINT_FP, NULL, " %s:", pfb_hist_keys[i]);
		print_lluint(PRINT_ANY, pfb_hist_keys[i], "%llu", v);
	}
	close_json_object();
}

static int pfifo_bulk_print_xstats(struct qdisc_util *qu, FILE *f,
				   struct rtattr *xstats)
{
	static const int totals[] = {
		TCA_PFIFO_BULK_XSTATS_BATCHES,
		TCA_PFIFO_BULK_XSTATS_BATCH_PKTS,
		TCA_PFIFO_BULK_XSTATS_BATCH_BYTES,
	};
	static const char *const totals_keys[] = {
		"batches", "batch_pkts", "batch_bytes",
	};
	static const int ends[] = {
		TCA_PFIFO_BULK_XSTATS_END_BYTES,
		TCA_PFIFO_BULK_XSTATS_END_PKTS,
		TCA_PFIFO_BULK_XSTATS_END_BUDGET,
		TCA_PFIFO_BULK_XSTATS_END_EMPTY,
	};
	static const char *const ends_keys[] = {
		"end_bytes", "end_pkts", "end_budget", "end_empty",
	};
	static const int other[] = {
		TCA_PFIFO_BULK_XSTATS_RESCHEDULES,
	};
	static const char *const other_keys[] = {
		"reschedules",
	};
	struct rtattr *tb[TCA_PFIFO_BULK_XSTATS_MAX + 1];
	struct xstats_printer p = { .tb = tb };
	__u64 batches, pkts;

	if (!xstats)
		return 0;
	parse_rtattr_flags(tb, TCA_PFIFO_BULK_XSTATS_MAX, RTA_DATA(xstats),
			   RTA_PAYLOAD(xstats), NLA_F_NESTED);

	print_counters(&p, totals, totals_keys, ARRAY_SIZE(totals));
	/* Derived here so that nobody has to divide by a zero batch count. */
	if (attr_u64(tb, TCA_PFIFO_BULK_XSTATS_BATCHES, &batches) &&
	    attr_u64(tb, TCA_PFIFO_BULK_XSTATS_BATCH_PKTS, &pkts))
		print_float(PRINT_ANY, "mean_batch", " mean_batch %.2f",
			    batches ? (double)pkts / batches : 0.0);
	if (tb[TCA_PFIFO_BULK_XSTATS_HIST])
		print_hist(&p, tb[TCA_PFIFO_BULK_XSTATS_HIST]);
	print_counters(&p, ends, ends_keys, ARRAY_SIZE(ends));
	print_counters(&p, other, other_keys, ARRAY_SIZE(other));
	return 0;
}

struct qdisc_util pfifo_bulk_qdisc_util = {
	.id		= "pfifo_bulk",
	.parse_qopt	= pfifo_bulk_parse_opt,
	.print_qopt	= pfifo_bulk_print_opt,
	.print_xstats	= pfifo_bulk_print_xstats,
};
