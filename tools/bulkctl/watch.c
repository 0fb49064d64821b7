// SPDX-License-Identifier: GPL-2.0
/*
 * bulkctl watch: every interval, what each pfifo_bulk of a device sent and
 * how its batches ended, as rates and shares (text, or a JSON object a line).
 */

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "utils.h"
#include "tc_util.h"
#include "bulkctl.h"

/*
 * The counters of one qdisc, or what they counted over an interval:
 * packets, drops, then the extended statistics by attribute.
 */
enum { S_PACKETS, S_DROPS, S_X, S_N = S_X + TCA_PFIFO_BULK_XSTATS_MAX + 1 };
#define S_XSTAT(name)	(S_X + TCA_PFIFO_BULK_XSTATS_##name)

struct sample {
	__u32 handle, parent;
	uint64_t c[S_N];
};

struct samples {
	struct sample *s;
	size_t n, cap;
};

static void on_signal(int sig)
{
	stop = 1;
}

static void add_sample(struct dump *d, const struct nlmsghdr *nlh,
		       const struct nlattr **tb)
{
	const struct tcmsg *t = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *st[TCA_STATS_MAX + 1];
	struct gnet_stats_basic basic = {};
	struct gnet_stats_queue queue = {};
	struct samples *ss = d->priv;
	struct pfb_xstats x = {};
	struct sample *s;

	if (ss->n == ss->cap) {
		ss->cap = ss->cap ? 2 * ss->cap : 8;
		ss->s = realloc(ss->s, ss->cap * sizeof(*ss->s));
		if (!ss->s)
			die(EXIT_KERNEL, "out of memory");
	}
	read_stats2(tb[TCA_STATS2], st);
	if (st[TCA_STATS_BASIC])
		memcpy(&basic, mnl_attr_get_payload(st[TCA_STATS_BASIC]), sizeof(basic));
	if (st[TCA_STATS_QUEUE])
		memcpy(&queue, mnl_attr_get_payload(st[TCA_STATS_QUEUE]), sizeof(queue));
	read_xstats(st[TCA_STATS_APP], &x);
	s = &ss->s[ss->n++];
	s->handle = t->tcm_handle;
	s->parent = t->tcm_parent;
	/* As tc: the 64-bit count wins when the kernel sends one. */
	s->c[S_PACKETS] = st[TCA_STATS_PKT64] ? mnl_attr_get_u64(st[TCA_STATS_PKT64]) :
			  basic.packets;
	s->c[S_DROPS] = queue.drops;
	memcpy(&s->c[S_X], x.v, sizeof(x.v));
}

static int by_place(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return x->handle < y->handle ? -1 : x->handle > y->handle;
}

/* The counters of DEV's pfifo_bulk qdiscs, in queue order. */
static void sample(struct dump *d, const char *dev, struct samples *ss)
{
	ss->n = 0;
	d->priv = ss;
	d->count = 0;
	dump_qdiscs(d);
	if (!d->count)
		die(EXIT_KERNEL, "no %s qdisc on %s", PFB_KIND, shown(dev));
	qsort(ss->s, ss->n, sizeof(*ss->s), by_place);
}

/*
 * What @now counted since @then, the same qdisc (ifindex, handle, parent)
 * one interval earlier, or NULL when it is new: all it counted is new.
 * A counter that went down belongs to a qdisc deleted and created again.
 */
static void delta(struct sample *d, const struct sample *now,
		  const struct sample *then)
{
	int i;

	for (i = 0; i < S_N; i++)
		d->c[i] = then && now->c[i] >= then->c[i] ?
			  now->c[i] - then->c[i] : now->c[i];
}

/* A rate: text with a fraction, JSON a whole number (never %g's 1e+06). */
static void print_rate_of(const char *key, const char *fmt, double v)
{
	print_float(PRINT_FP, NULL, fmt, v);
	print_u64(PRINT_JSON, key, NULL, llround(v));
}

static void print_rates(const char *name, const struct sample *d, double dt)
{
	static const char *const share_keys[] = {
		"end_bytes_pct", "end_pkts_pct", "end_budget_pct", "end_empty_pct",
	};
	uint64_t batches = d->c[S_XSTAT(BATCHES)];
	int i;

	print_string(PRINT_FP, NULL, "%-12s", name);
	print_rate_of("pkts_per_sec", " %10.1f", d->c[S_PACKETS] / dt);
	print_rate_of("batches_per_sec", " %10.1f", batches / dt);
	print_float(PRINT_ANY, "mean_batch", " %7.2f", batches ?
		    (double)d->c[S_XSTAT(BATCH_PKTS)] / batches : 0.0);
	print_rate_of("drops_per_sec", " %9.1f", d->c[S_DROPS] / dt);
	for (i = 0; i < 4; i++)
		print_float(PRINT_ANY, share_keys[i], " %7.1f", batches ? 100.0 *
			    d->c[S_XSTAT(END_BYTES) + i] / batches : 0.0);
	print_float(PRINT_ANY, "bypass_pct", " %7.1f", d->c[S_PACKETS] ? 100.0 *
		    d->c[S_XSTAT(BYPASSED)] / d->c[S_PACKETS] : 0.0);
	print_nl();
}

/* One interval, one JSON object per line: a line per qdisc, then the total. */
static void report(const char *dev, const struct samples *then,
		   const struct samples *now, double dt)
{
	struct sample total = {}, d;
	const struct sample *prev;
	char h[SPRINT_BSIZE], p[SPRINT_BSIZE], name[2 * SPRINT_BSIZE];
	size_t i, j, k;

	new_json_obj_plain(json);
	open_json_object(NULL);
	print_string(PRINT_JSON, "dev", NULL, dev);
	print_float(PRINT_JSON, "interval", NULL, dt);
	open_json_array(PRINT_JSON, "qdiscs");
	for (i = 0; i < now->n; i++) {
		for (prev = NULL, j = 0; j < then->n && !prev; j++)
			if (then->s[j].handle == now->s[i].handle &&
			    then->s[j].parent == now->s[i].parent)
				prev = &then->s[j];
		delta(&d, &now->s[i], prev);
		for (k = 0; k < S_N; k++)
			total.c[k] += d.c[k];
		snprintf(h, sizeof(h), "%x:", now->s[i].handle >> 16);
		print_tc_classid(p, sizeof(p), now->s[i].parent);
		snprintf(name, sizeof(name), "%s %s", h, p);
		open_json_object(NULL);
		print_string(PRINT_JSON, "handle", NULL, h);
		print_string(PRINT_JSON, "parent", NULL, p);
		print_rates(name, &d, dt);
		close_json_object();
	}
	close_json_array(PRINT_JSON, NULL);
	if (now->n > 1 || json)
		print_rates("total", &total, dt);
	close_json_object();
	delete_json_obj_plain();
	fflush(stdout);
}

int do_watch(int argc, char **argv)
{
	struct dump d = { .fn = add_sample };
	struct samples a = {}, b = {}, t;
	struct timespec t0, t1, next;
	struct sigaction sa = { .sa_handler = on_signal };
	double interval = 1.0;
	const char *dev = NULL, *v;
	__u32 count = 0, n;
	char *end;
	int i;

	for (i = 0; i < argc; i++) {
		if (common_word(&i, argc, argv, &dev))
			continue;
		if (strcmp(argv[i], "interval") == 0) {
			v = next_value(&i, argc, argv);
			interval = strtod(v, &end);
			if (end == v || *end || !isfinite(interval) ||
			    interval < 0.1 || interval > 3600)
				bad_arg("invalid \"interval\": \"%s\" (0.1..3600 seconds)", shown(v));
		} else if (strcmp(argv[i], "count") == 0) {
			v = next_value(&i, argc, argv);
			if (get_u32(&count, v, 0) || count < 1)
				bad_arg("invalid \"count\": \"%s\" (a number from 1)", shown(v));
		} else {
			bad_arg("unknown argument \"%s\"; try \"bulkctl watch help\"",
				shown(argv[i]));
		}
	}
	d.ifindex = dev_index(dev);
	show_stats = 1;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	nl_open();
	sample(&d, dev, &a);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	next = t0;
	if (!json)
		printf("# %s on %s, every %g s; bytes%% to empty%%: share of the batches ended by each reason;\n"
		       "# bypass%%: share of the packets sent at once, without queueing\n"
		       "#%-11s %10s %10s %7s %9s %7s %7s %7s %7s %7s\n",
		       PFB_KIND, dev, interval, "qdisc", "pkts/s", "batches/s", "mean",
		       "drops/s", "bytes%", "pkts%", "budget%", "empty%", "bypass%");
	for (n = 0; !stop && (!count || n < count); n++) {
		next.tv_sec += (time_t)interval;
		next.tv_nsec += (long)((interval - floor(interval)) * 1e9);
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		while (!stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
						&next, NULL) == EINTR)
			;
		if (stop)
			break;
		sample(&d, dev, &b);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		report(dev, &a, &b,
		       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
		t = a;
		a = b;
		b = t;
		t0 = t1;
	}
	free(a.s);
	free(b.s);
	return 0;
}

