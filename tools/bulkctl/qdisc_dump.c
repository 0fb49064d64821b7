// SPDX-License-Identifier: GPL-2.0
/*
 * Reading a qdisc dump, from the kernel or from a file: each pfifo_bulk's
 * attributes, kept only when mnl_attr_validate2() finds them well formed.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/gen_stats.h>

#include "utils.h"
#include "bulkctl.h"

/* The attribute tables bulkctl reads: a message's, TCA_STATS2's, ours. */
enum table { T_TCA, T_STATS, T_OPTS, T_XSTATS, T_HIST };

struct policy {
	const struct nlattr **tb;
	unsigned int max;
	enum table table;
};

/*
 * What attribute @t of @table must look like to be kept
 * (mnl_attr_validate2()): its libmnl type, and in @len its exact payload
 * length (0: any); MNL_TYPE_UNSPEC: not kept.
 */
static enum mnl_attr_data_type attr_type(enum table table, unsigned int t, size_t *len)
{
	*len = 0;
	switch (table) {
	case T_TCA:
		return t == TCA_KIND ? MNL_TYPE_NUL_STRING :
		       t == TCA_OPTIONS || t == TCA_STATS2 ? MNL_TYPE_NESTED :
		       t == TCA_STATS || t == TCA_XSTATS ? MNL_TYPE_BINARY : MNL_TYPE_UNSPEC;
	case T_STATS:
		*len = t == TCA_STATS_BASIC ? sizeof(struct gnet_stats_basic) :
		       t == TCA_STATS_QUEUE ? sizeof(struct gnet_stats_queue) :
		       t == TCA_STATS_PKT64 ? sizeof(__u64) : 0;
		return t == TCA_STATS_APP ? MNL_TYPE_NESTED :
		       *len ? MNL_TYPE_BINARY : MNL_TYPE_UNSPEC;
	case T_OPTS:
		*len = pfb_opt_is_u8(t) ? 1 : 4;
		return *len == 1 ? MNL_TYPE_U8 : MNL_TYPE_U32;
	default:
		if (table == T_XSTATS && t == TCA_PFIFO_BULK_XSTATS_HIST)
			return MNL_TYPE_NESTED;
		*len = 8;
		return MNL_TYPE_U64;
	}
}

static int cb_attr(const struct nlattr *attr, void *data)
{
	const struct policy *p = data;
	unsigned int t = mnl_attr_get_type(attr);
	enum mnl_attr_data_type type;
	size_t len;

	if (t > p->max)		/* newer than this program */
		return MNL_CB_OK;
	type = attr_type(p->table, t, &len);
	if (type != MNL_TYPE_UNSPEC && mnl_attr_validate2(attr, type, len) == 0)
		p->tb[t] = attr;
	return MNL_CB_OK;
}

/* The valid attributes of @nest, or of @nlh after its tcmsg, into @p->tb. */
static void parse_attrs(const struct nlmsghdr *nlh, const struct nlattr *nest,
			const struct policy *p)
{
	memset(p->tb, 0, (p->max + 1) * sizeof(*p->tb));
	if (nest)
		mnl_attr_parse_nested(nest, cb_attr, (void *)p);
	else
		mnl_attr_parse(nlh, sizeof(struct tcmsg), cb_attr, (void *)p);
}

void read_opts(const struct nlattr *nest, struct pfb_qopt *o)
{
	const struct nlattr *tb[TCA_PFIFO_BULK_MAX + 1];
	struct policy p = { tb, TCA_PFIFO_BULK_MAX, T_OPTS };

	memset(o, 0, sizeof(*o));
	if (!nest)
		return;
	parse_attrs(NULL, nest, &p);
	pfb_read_qopt(o, (const void *const *)tb);
}

void read_xstats(const struct nlattr *nest, struct pfb_xstats *x)
{
	const struct nlattr *tb[TCA_PFIFO_BULK_XSTATS_MAX + 1];
	const struct nlattr *h[TCA_PFIFO_BULK_HIST_MAX + 1];
	struct policy p = { tb, TCA_PFIFO_BULK_XSTATS_MAX, T_XSTATS };
	struct policy ph = { h, TCA_PFIFO_BULK_HIST_MAX, T_HIST };

	memset(x, 0, sizeof(*x));
	if (!nest)
		return;
	parse_attrs(NULL, nest, &p);
	if (tb[TCA_PFIFO_BULK_XSTATS_HIST])
		parse_attrs(NULL, tb[TCA_PFIFO_BULK_XSTATS_HIST], &ph);
	pfb_read_xstats(x, (const void *const *)tb,
			tb[TCA_PFIFO_BULK_XSTATS_HIST] ? (const void *const *)h : NULL);
}

/* TCA_STATS2's valid attributes into @st (TCA_STATS_MAX + 1 of them). */
void read_stats2(const struct nlattr *nest, const struct nlattr **st)
{
	struct policy p = { st, TCA_STATS_MAX, T_STATS };

	if (nest)
		parse_attrs(NULL, nest, &p);
	else
		memset(st, 0, (TCA_STATS_MAX + 1) * sizeof(*st));
}

static int cb_qdisc(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[TCA_MAX + 1];
	struct policy p = { tb, TCA_MAX, T_TCA };
	const struct tcmsg *t = mnl_nlmsg_get_payload(nlh);
	struct dump *d = data;

	if (nlh->nlmsg_type != RTM_NEWQDISC ||
	    nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*t)))
		return MNL_CB_OK;
	/* The kernel ignores tcm_ifindex in dumps, so filter here. */
	if (d->ifindex && t->tcm_ifindex != d->ifindex)
		return MNL_CB_OK;
	parse_attrs(nlh, NULL, &p);
	if (!tb[TCA_KIND] || strcmp(mnl_attr_get_str(tb[TCA_KIND]), PFB_KIND))
		return MNL_CB_OK;
	d->fn(d, nlh, tb);
	d->count++;
	return MNL_CB_OK;
}

void dump_qdiscs(struct dump *d)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(nl_buf);
	struct tcmsg *tcm;

	nlh->nlmsg_type = RTM_GETQDISC;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = d->ifindex;
	if (nl_talk(nlh, cb_qdisc, d) < 0)
		kernel_failed(NULL);
}

/*
 * Messages saved from a dump (nlmsghdr + payload, one after the other, the
 * format "tc monitor file" reads), read whole, instead of asking the kernel.
 */
void read_qdiscs(struct dump *d, const char *path)
{
	FILE *f = fopen(path, "rb");
	size_t len = 0, cap = 0, n;
	char *buf = NULL;

	if (!f)
		bad_arg("cannot read \"%s\": %s", shown(path), strerror(errno));
	do {
		if (len == cap && !(buf = realloc(buf, cap = cap ? 2 * cap : 65536)))
			die(EXIT_KERNEL, "out of memory");
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n);
	if (ferror(f))
		bad_arg("cannot read \"%s\": %s", shown(path), strerror(errno));
	fclose(f);
	if (run_msgs(buf, len, 0, 0, cb_qdisc, d) < 0)
		kernel_failed(NULL);
	free(buf);
}

