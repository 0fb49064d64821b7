/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tc plugin (tc-plugin/q_pfifo_bulk.c) and bulkctl share: the kind,
 * the option words and mode names, how an option's value parses
 * (pfb_opt_parse()) and the options go into a request (pfb_add_opts()), and
 * how a dump's options and extended statistics are read (pfb_read_qopt(),
 * pfb_read_xstats()) and print (pfb_print_qopt(), pfb_print_xstats()).
 * Both tools use iproute2's helpers: the plugin those of the tc that loads
 * it, bulkctl the same functions compiled from the iproute2 source
 * (tools/bulkctl/Makefile), so "tc -s [-j] qdisc show" and "bulkctl [-s]
 * [-j] show" cannot drift apart, and both take what tc takes: counts in
 * any base (get_unsigned(.., 0)), sizes as get_size(), times as get_time()
 * ("800us", "1ms"; a bare number is microseconds), and refuse what those
 * would silently turn into another value (pfb_opt_parse()). JSON carries the
 * kernel's numbers only (times in their units); text prints sizes and
 * times as tc prints them.
 *
 * Ranges are not here: the kernel checks them (its netlink policy) and its
 * extended ack names the option and the range; the tools only parse.
 *
 * Include after iproute2's "utils.h" and <linux/pkt_sched_pfifo_bulk.h>.
 */
#ifndef PFIFO_BULK_USER_H
#define PFIFO_BULK_USER_H

#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/pkt_sched_pfifo_bulk.h>

#define PFB_KIND	"pfifo_bulk"

/* The words of the options one sets, by attribute (none: dump only). */
static const char *const pfb_opt_words[TCA_PFIFO_BULK_MAX + 1] = {
	[TCA_PFIFO_BULK_LIMIT]		= "limit",
	[TCA_PFIFO_BULK_BULK_BYTES]	= "bulk_bytes",
	[TCA_PFIFO_BULK_BULK_PKTS]	= "bulk_pkts",
	[TCA_PFIFO_BULK_MODE]		= "mode",
	[TCA_PFIFO_BULK_COALESCE_USECS]	= "coalesce_usecs",
	[TCA_PFIFO_BULK_COALESCE_PKTS]	= "coalesce_pkts",
};

/* What a value of each option looks like, for the tools' messages. */
static const char *const pfb_opt_syntax[TCA_PFIFO_BULK_MAX + 1] = {
	[TCA_PFIFO_BULK_LIMIT]		= "a number of packets",
	[TCA_PFIFO_BULK_BULK_BYTES]	= "a size: 1500, 64k, 1m...",
	[TCA_PFIFO_BULK_BULK_PKTS]	= "a number of packets",
	[TCA_PFIFO_BULK_MODE]		= "auto, bql or nobql",
	[TCA_PFIFO_BULK_COALESCE_USECS]	= "a time: 800us, 1ms...",
	[TCA_PFIFO_BULK_COALESCE_PKTS]	= "a number of packets",
};

static const char *const pfb_mode_names[TC_PFIFO_BULK_MODE_MAX + 1] = {
	[TC_PFIFO_BULK_MODE_AUTO]	= "auto",
	[TC_PFIFO_BULK_MODE_BQL]	= "bql",
	[TC_PFIFO_BULK_MODE_NOBQL]	= "nobql",
	[TC_PFIFO_BULK_MODE_NONE]	= "none",	/* effective mode only */
};

/* Batch histogram buckets: JSON keys and text labels. */
static const char *const pfb_hist_keys[TCA_PFIFO_BULK_HIST_MAX + 1] = {
	[TCA_PFIFO_BULK_HIST_1]		= "1",
	[TCA_PFIFO_BULK_HIST_2]		= "2",
	[TCA_PFIFO_BULK_HIST_3_4]	= "3-4",
	[TCA_PFIFO_BULK_HIST_5_8]	= "5-8",
	[TCA_PFIFO_BULK_HIST_9_16]	= "9-16",
	[TCA_PFIFO_BULK_HIST_17_32]	= "17-32",
	[TCA_PFIFO_BULK_HIST_33_64]	= "33-64",
	[TCA_PFIFO_BULK_HIST_65_UP]	= "65+",
};

/* The waits, in nanoseconds: sprint_time64() in text. */
static const char *const pfb_time_keys[TCA_PFIFO_BULK_XSTATS_MAX + 1] = {
	[TCA_PFIFO_BULK_XSTATS_HELD_NS]		= "held_ns",
	[TCA_PFIFO_BULK_XSTATS_HELD_NS_MAX]	= "held_ns_max",
};

static const char *const pfb_time_fmts[TCA_PFIFO_BULK_XSTATS_MAX + 1] = {
	[TCA_PFIFO_BULK_XSTATS_HELD_NS]		= " held_ns %s",
	[TCA_PFIFO_BULK_XSTATS_HELD_NS_MAX]	= " held_ns_max %s",
};

/* The attribute a word sets, 0 when it is not an option. */
static inline int pfb_opt_type(const char *word)
{
	int t;

	for (t = TCA_PFIFO_BULK_LIMIT; t <= TCA_PFIFO_BULK_MAX; t++)
		if (pfb_opt_words[t] && strcmp(word, pfb_opt_words[t]) == 0)
			return t;
	return 0;
}

/* The u8 attributes of TCA_OPTIONS; all others are u32. */
static inline bool pfb_opt_is_u8(int type)
{
	return type == TCA_PFIFO_BULK_MODE ||
	       type == TCA_PFIFO_BULK_EFFECTIVE_MODE ||
	       type == TCA_PFIFO_BULK_LOCKLESS;
}

/* Only the modes one can ask for: auto, bql, nobql. */
static inline int pfb_mode_parse(const char *s)
{
	int i;

	for (i = TC_PFIFO_BULK_MODE_AUTO; i <= TC_PFIFO_BULK_MODE_NOBQL; i++)
		if (strcmp(s, pfb_mode_names[i]) == 0)
			return i;
	return -1;
}

/*
 * A time as get_time() reads it, in microseconds, but only where get_time()
 * gives the value written: it stores whatever the double becomes, so "nan",
 * "-1", "4294967297" (1us) or "1e-9s" (0: coalescing off) would pass. The
 * unit's size in microseconds is get_time() of "1<unit>", which also
 * refuses an unknown unit.
 */
static inline int pfb_time_parse(const char *s, __u32 *v)
{
	char *unit, one[8];
	unsigned int scale;
	double t = strtod(s, &unit);

	if (unit == s ||
	    snprintf(one, sizeof(one), "1%s", unit) >= (int)sizeof(one) ||
	    get_time(&scale, one))
		return -1;
	t *= scale;
	if (!(t >= 0 && t <= UINT32_MAX) || (t > 0 && t < 1))
		return -1;
	return get_time(v, s);
}

/*
 * @s as the value of option @type into @v; -1 when it does not parse, or
 * when iproute2's parser would turn it into another value: a number not
 * starting with a digit (or a point: ".5ms"), since strtoul() and strtod()
 * skip spaces and take a sign ("-18446744073709551615" is 1, "-0k" 0), a
 * size that is not 0 but becomes 0 ("0.5": no cap), a time as
 * pfb_time_parse() says.
 */
static inline int pfb_opt_parse(int type, const char *s, __u32 *v)
{
	int mode;

	if (type != TCA_PFIFO_BULK_MODE && !isdigit((unsigned char)*s) && *s != '.')
		return -1;
	switch (type) {
	case TCA_PFIFO_BULK_BULK_BYTES:
		return get_size(v, s) || (!*v && strtod(s, NULL) != 0) ? -1 : 0;
	case TCA_PFIFO_BULK_COALESCE_USECS:
		return pfb_time_parse(s, v);
	case TCA_PFIFO_BULK_MODE:
		mode = pfb_mode_parse(s);
		*v = mode;
		return mode < 0 ? -1 : 0;
	default:
		return get_unsigned(v, s, 0) ? -1 : 0;
	}
}

/*
 * The options given (@has[type]), and only those, as the TCA_OPTIONS nest
 * of request @n: nothing at all keeps the kernel's defaults, and "change"
 * touches nothing else.
 */
static inline void pfb_add_opts(struct nlmsghdr *n, int maxlen, const bool *has,
				const __u32 *val)
{
	struct rtattr *tail = NULL;
	int type;

	for (type = TCA_PFIFO_BULK_LIMIT; type <= TCA_PFIFO_BULK_MAX; type++) {
		if (!has[type])
			continue;
		/* The qdisc parses TCA_OPTIONS strictly: the nest flag is required. */
		if (!tail)
			tail = addattr_nest(n, maxlen, TCA_OPTIONS | NLA_F_NESTED);
		if (pfb_opt_is_u8(type))
			addattr8(n, maxlen, type, val[type]);
		else
			addattr32(n, maxlen, type, val[type]);
	}
	if (tail)
		addattr_nest_end(n, tail);
}

/*
 * A dump, as both tools read it: only attributes of the right length are
 * marked present; unknown ones (a newer kernel) are not kept.
 */
struct pfb_qopt {
	bool has[TCA_PFIFO_BULK_MAX + 1];
	uint32_t v[TCA_PFIFO_BULK_MAX + 1];	/* u8 attributes widened */
};

struct pfb_xstats {
	bool has[TCA_PFIFO_BULK_XSTATS_MAX + 1];
	uint64_t v[TCA_PFIFO_BULK_XSTATS_MAX + 1];
	bool has_bucket[TCA_PFIFO_BULK_HIST_MAX + 1];
	uint64_t hist[TCA_PFIFO_BULK_HIST_MAX + 1];
};

/*
 * Reading a dump's nests (TCA_OPTIONS, the xstats) with iproute2's parser,
 * as both tools do: an attribute counts only at its exact size.
 */
static inline bool pfb_attr_get(const struct rtattr *a, unsigned int len, void *v)
{
	if (!a || RTA_PAYLOAD(a) != len)
		return false;
	memcpy(v, RTA_DATA(a), len);
	return true;
}

static inline void pfb_read_qopt(struct pfb_qopt *o, struct rtattr *opt)
{
	struct rtattr *tb[TCA_PFIFO_BULK_MAX + 1];
	uint8_t u8 = 0;
	int t;

	memset(o, 0, sizeof(*o));
	if (!opt)
		return;
	parse_rtattr_nested(tb, TCA_PFIFO_BULK_MAX, opt);
	for (t = TCA_PFIFO_BULK_LIMIT; t <= TCA_PFIFO_BULK_MAX; t++) {
		if (!pfb_opt_is_u8(t))
			o->has[t] = pfb_attr_get(tb[t], 4, &o->v[t]);
		else if ((o->has[t] = pfb_attr_get(tb[t], 1, &u8)))
			o->v[t] = u8;
	}
}

static inline void pfb_read_xstats(struct pfb_xstats *x, struct rtattr *xstats)
{
	struct rtattr *tb[TCA_PFIFO_BULK_XSTATS_MAX + 1];
	struct rtattr *h[TCA_PFIFO_BULK_HIST_MAX + 1];
	int t;

	memset(x, 0, sizeof(*x));
	if (!xstats)
		return;
	parse_rtattr_nested(tb, TCA_PFIFO_BULK_XSTATS_MAX, xstats);
	for (t = TCA_PFIFO_BULK_XSTATS_BATCHES; t <= TCA_PFIFO_BULK_XSTATS_MAX; t++)
		x->has[t] = pfb_attr_get(tb[t], 8, &x->v[t]);
	x->has[TCA_PFIFO_BULK_XSTATS_HIST] = tb[TCA_PFIFO_BULK_XSTATS_HIST];
	if (!tb[TCA_PFIFO_BULK_XSTATS_HIST])
		return;
	parse_rtattr_nested(h, TCA_PFIFO_BULK_HIST_MAX, tb[TCA_PFIFO_BULK_XSTATS_HIST]);
	for (t = TCA_PFIFO_BULK_HIST_1; t <= TCA_PFIFO_BULK_HIST_MAX; t++)
		x->has_bucket[t] = pfb_attr_get(h[t], 8, &x->hist[t]);
}

static inline const char *pfb_mode_str(uint32_t m)
{
	return m <= TC_PFIFO_BULK_MODE_MAX ? pfb_mode_names[m] : "unknown";
}

/* The options, in tc's layout: "limit 1000p bulk_bytes 64Kb ...". */
static inline void pfb_print_qopt(const struct pfb_qopt *o)
{
	char b[SPRINT_BSIZE];
	bool on;

	if (o->has[TCA_PFIFO_BULK_LIMIT])
		print_uint(PRINT_ANY, "limit", "limit %up ",
			   o->v[TCA_PFIFO_BULK_LIMIT]);
	/* 0 is "no cap": JSON keeps the number, text says nothing */
	if (o->has[TCA_PFIFO_BULK_BULK_BYTES]) {
		print_uint(PRINT_JSON, "bulk_bytes", NULL,
			   o->v[TCA_PFIFO_BULK_BULK_BYTES]);
		if (o->v[TCA_PFIFO_BULK_BULK_BYTES])
			print_size(PRINT_FP, NULL, "bulk_bytes %s ",
				   o->v[TCA_PFIFO_BULK_BULK_BYTES]);
	}
	if (o->has[TCA_PFIFO_BULK_BULK_PKTS]) {
		print_uint(PRINT_JSON, "bulk_pkts", NULL,
			   o->v[TCA_PFIFO_BULK_BULK_PKTS]);
		if (o->v[TCA_PFIFO_BULK_BULK_PKTS])
			print_uint(PRINT_FP, NULL, "bulk_pkts %u ",
				   o->v[TCA_PFIFO_BULK_BULK_PKTS]);
	}
	if (o->has[TCA_PFIFO_BULK_MODE])
		print_string(PRINT_ANY, "mode", "mode %s ",
			     pfb_mode_str(o->v[TCA_PFIFO_BULK_MODE]));
	if (o->has[TCA_PFIFO_BULK_EFFECTIVE_MODE])
		print_string(PRINT_ANY, "effective_mode", "effective_mode %s ",
			     pfb_mode_str(o->v[TCA_PFIFO_BULK_EFFECTIVE_MODE]));
	if (o->has[TCA_PFIFO_BULK_LOCKLESS]) {
		print_bool(PRINT_JSON, "lockless", NULL,
			   o->v[TCA_PFIFO_BULK_LOCKLESS]);
		print_string(PRINT_FP, NULL, "%s ",
			     o->v[TCA_PFIFO_BULK_LOCKLESS] ? "lockless" : "locked");
	}
	/* coalescing: JSON always, text only when it is on */
	on = o->has[TCA_PFIFO_BULK_COALESCE_USECS] &&
	     o->v[TCA_PFIFO_BULK_COALESCE_USECS];
	if (o->has[TCA_PFIFO_BULK_COALESCE_USECS])
		print_uint(PRINT_JSON, "coalesce_usecs", NULL,
			   o->v[TCA_PFIFO_BULK_COALESCE_USECS]);
	if (on)
		print_string(PRINT_FP, NULL, "coalesce_usecs %s ",
			     sprint_time(o->v[TCA_PFIFO_BULK_COALESCE_USECS], b));
	if (o->has[TCA_PFIFO_BULK_COALESCE_PKTS])
		print_uint(on ? PRINT_ANY : PRINT_JSON, "coalesce_pkts",
			   "coalesce_pkts %u ",
			   o->v[TCA_PFIFO_BULK_COALESCE_PKTS]);
}

/*
 * Starts a text line of statistics when the kernel sent any of the
 * attributes first..last; the first line follows tc's own newline.
 */
static inline bool pfb_xstats_line(const struct pfb_xstats *x, int *lines,
				   int first, int last)
{
	int t;

	for (t = first; t <= last && !x->has[t]; t++)
		;
	if (t > last)
		return false;
	if ((*lines)++)
		print_nl();
	print_string(PRINT_FP, NULL, " ", NULL);
	return true;
}

static inline void pfb_print_xstat(const struct pfb_xstats *x, int type,
				   const char *key, const char *fmt)
{
	if (x->has[type])
		print_u64(PRINT_ANY, key, fmt, x->v[type]);
}

/* The extended statistics, up to five lines, as "tc -s" prints them. */
static inline void pfb_print_xstats(const struct pfb_xstats *x)
{
	uint64_t b = x->v[TCA_PFIFO_BULK_XSTATS_BATCHES];
	char buf[SPRINT_BSIZE];
	int lines = 0, i;

	if (pfb_xstats_line(x, &lines, TCA_PFIFO_BULK_XSTATS_BATCHES,
			    TCA_PFIFO_BULK_XSTATS_BATCH_BYTES)) {
		pfb_print_xstat(x, TCA_PFIFO_BULK_XSTATS_BATCHES, "batches",
				" batches %" PRIu64);
		pfb_print_xstat(x, TCA_PFIFO_BULK_XSTATS_BATCH_PKTS, "batch_pkts",
				" batch_pkts %" PRIu64);
		pfb_print_xstat(x, TCA_PFIFO_BULK_XSTATS_BATCH_BYTES, "batch_bytes",
				" batch_bytes %" PRIu64);
		/* derived: text only, as fq_codel and fq keep JSON to counters */
		if (x->has[TCA_PFIFO_BULK_XSTATS_BATCHES] &&
		    x->has[TCA_PFIFO_BULK_XSTATS_BATCH_PKTS])
			print_float(PRINT_FP, NULL, " mean_batch %.2f", b ?
				    (double)x->v[TCA_PFIFO_BULK_XSTATS_BATCH_PKTS] / b : 0.0);
	}
	if (pfb_xstats_line(x, &lines, TCA_PFIFO_BULK_XSTATS_HIST,
			    TCA_PFIFO_BULK_XSTATS_HIST)) {
		print_string(PRINT_FP, NULL, " batch_hist", NULL);
		open_json_object("batch_hist");
		for (i = TCA_PFIFO_BULK_HIST_1; i <= TCA_PFIFO_BULK_HIST_MAX; i++) {
			if (!x->has_bucket[i])
				continue;
			print_string(PRINT_FP, NULL, " %s:", pfb_hist_keys[i]);
			print_u64(PRINT_ANY, pfb_hist_keys[i], "%" PRIu64,
				  x->hist[i]);
		}
		close_json_object();
	}
	if (pfb_xstats_line(x, &lines, TCA_PFIFO_BULK_XSTATS_END_BYTES,
			    TCA_PFIFO_BULK_XSTATS_END_EMPTY)) {
		pfb_print_xstat(x, TCA_PFIFO_BULK_XSTATS_END_BYTES, "end_bytes",
				" end_bytes %" PRIu64);
		pfb_print_xstat(x, TCA_PFIFO_BULK_XSTATS_END_PKTS, "end_pkts",
				" end_pkts %" PRIu64);
		pfb_print_xstat(x, TCA_PFIFO_BULK_XSTATS_END_BUDGET, "end_budget",
				" end_budget %" PRIu64);
		pfb_print_xstat(x, TCA_PFIFO_BULK_XSTATS_END_EMPTY, "end_empty",
				" end_empty %" PRIu64);
	}
	if (pfb_xstats_line(x, &lines, TCA_PFIFO_BULK_XSTATS_RESCHEDULES,
			    TCA_PFIFO_BULK_XSTATS_BYPASSED)) {
		pfb_print_xstat(x, TCA_PFIFO_BULK_XSTATS_RESCHEDULES, "reschedules",
				" reschedules %" PRIu64);
		pfb_print_xstat(x, TCA_PFIFO_BULK_XSTATS_BYPASSED, "bypassed",
				" bypassed %" PRIu64);
	}
	if (pfb_xstats_line(x, &lines, TCA_PFIFO_BULK_XSTATS_HELD,
			    TCA_PFIFO_BULK_XSTATS_HELD_NS_MAX)) {
		pfb_print_xstat(x, TCA_PFIFO_BULK_XSTATS_HELD, "held",
				" held %" PRIu64);
		pfb_print_xstat(x, TCA_PFIFO_BULK_XSTATS_RELEASE_PKTS,
				"release_pkts", " release_pkts %" PRIu64);
		pfb_print_xstat(x, TCA_PFIFO_BULK_XSTATS_RELEASE_TIMER,
				"release_timer", " release_timer %" PRIu64);
		pfb_print_xstat(x, TCA_PFIFO_BULK_XSTATS_SENT_AT_ONCE,
				"sent_at_once", " sent_at_once %" PRIu64);
		for (i = TCA_PFIFO_BULK_XSTATS_HELD_NS;
		     i <= TCA_PFIFO_BULK_XSTATS_HELD_NS_MAX; i++) {
			if (!x->has[i])
				continue;
			print_u64(PRINT_JSON, pfb_time_keys[i], NULL, x->v[i]);
			print_string(PRINT_FP, NULL, pfb_time_fmts[i],
				     sprint_time64(x->v[i], buf));
		}
	}
}

#endif /* PFIFO_BULK_USER_H */
