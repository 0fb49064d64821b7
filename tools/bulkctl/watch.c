// SPDX-License-Identifier: GPL-2.0
/*
 * bulkctl watch: every interval, what each pfifo_bulk of a device sent and
 * how its batches ended, as rates and shares (text, or a JSON object a line).
 */

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bulkctl.h"
#include "tc_util.h"

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

static volatile sig_atomic_t stop;	/* SIGINT or SIGTERM seen */

static void on_signal(int sig)
{
	stop = 1;
}

static void add_sample(struct dump *d, const struct tcmsg *t, struct rtattr **tb)
{
	struct rtattr *st[TCA_STATS_MAX + 1] = {};
	struct gnet_stats_basic basic = {};
	struct gnet_stats_queue queue = {};
	struct samples *ss = d->priv;
	struct pfb_xstats x;
	struct sample *s;

	if (ss->n == ss->cap) {
		ss->cap = ss->cap ? 2 * ss->cap : 8;
		ss->s = realloc(ss->s, ss->cap * sizeof(*ss->s));
		if (!ss->s)
			die(EXIT_KERNEL, "out of memory");
	}
	if (tb[TCA_STATS2])
		parse_rtattr_nested(st, TCA_STATS_MAX, tb[TCA_STATS2]);
	pfb_attr_get(st[TCA_STATS_BASIC], sizeof(basic), &basic);
	pfb_attr_get(st[TCA_STATS_QUEUE], sizeof(queue), &queue);
	pfb_read_xstats(&x, st[TCA_STATS_APP]);
	s = &ss->s[ss->n++];
	s->handle = t->tcm_handle;
	s->parent = t->tcm_parent;
	s->c[S_PACKETS] = basic.packets;
	/* As tc: the 64-bit count wins when the kernel sends one. */
	pfb_attr_get(st[TCA_STATS_PKT64], 8, &s->c[S_PACKETS]);
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
	dump_qdiscs(d);
	if (!ss->n)
		die(EXIT_KERNEL, "no %s qdisc on %s", PFB_KIND, shown(dev));
	qsort(ss->s, ss->n, sizeof(*ss->s), by_place);
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
	bool fresh;
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
		/*
		 * All that a new qdisc counted is new; a 64-bit counter that
		 * went down is that of a qdisc deleted and created again. The
		 * drops counter has 32 bits (gnet_stats_queue) and wraps
		 * under a flood: its difference is taken modulo 2^32, unless
		 * the packets say the qdisc is new.
		 */
		fresh = !prev || now->s[i].c[S_PACKETS] < prev->c[S_PACKETS];
		for (k = 0; k < S_N; k++) {
			if (k == S_DROPS && !fresh)
				d.c[k] = (uint32_t)(now->s[i].c[k] - prev->c[k]);
			else
				d.c[k] = now->s[i].c[k] -
					 (!fresh && now->s[i].c[k] >= prev->c[k] ? prev->c[k] : 0);
			total.c[k] += d.c[k];
		}
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

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int do_watch(const struct args *a)
{
	struct dump d = { .ifindex = a->ifindex, .fn = add_sample };
	struct samples s1 = {}, s2 = {}, swap;
	double t0, t1, deadline;
	struct timespec next;
	__u32 n;

	/* clock_nanosleep() returns EINTR, whatever SA_RESTART says */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	sample(&d, a->dev, &s1);
	t0 = deadline = now();
	if (!json)
		printf("# %s on %s, every %g s; bytes%% to empty%%: share of the batches ended by each reason;\n"
		       "# bypass%%: share of the packets sent at once, without queueing\n"
		       "#%-11s %10s %10s %7s %9s %7s %7s %7s %7s %7s\n",
		       PFB_KIND, a->dev, a->interval, "qdisc", "pkts/s", "batches/s", "mean",
		       "drops/s", "bytes%", "pkts%", "budget%", "empty%", "bypass%");
	for (n = 0; !stop && (!a->count || n < a->count); n++) {
		/* a fixed beat: the time a dump takes does not add up */
		deadline += a->interval;
		next.tv_sec = deadline;
		next.tv_nsec = (deadline - next.tv_sec) * 1e9;
		while (!stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
						&next, NULL) == EINTR)
			;
		if (stop)
			break;
		sample(&d, a->dev, &s2);
		t1 = now();
		report(a->dev, &s1, &s2, t1 - t0);
		swap = s1;
		s1 = s2;
		s2 = swap;
		t0 = t1;
	}
	free(s1.s);
	free(s2.s);
	return 0;
}
