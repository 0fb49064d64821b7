// SPDX-License-Identifier: GPL-2.0
/*
 * bulkctl - configure and watch pfifo_bulk qdiscs over rtnetlink (libmnl).
 *
 * A stand-alone alternative to "tc ... pfifo_bulk" that needs no iproute2
 * internals: it speaks RTM_NEWQDISC/RTM_DELQDISC/RTM_GETQDISC itself with
 * the same option words, size syntax and ranges as the tc plugin
 * (tools/include/pfifo_bulk_user.h), and its JSON uses the plugin's keys, so
 * scripts can switch between the two. Every argument is checked before a
 * socket is opened; what the kernel refuses is reported with its extended
 * ack message. Dump parsing checks the type and length of every attribute it
 * uses and skips the ones it does not know, so a newer kernel that adds
 * options or statistics does not break it.
 *
 * Exit status: 0 success, 1 bad arguments or unknown device, 2 the kernel
 * refused (including EPERM) or there was nothing to watch.
 */

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <net/if.h>
#include <linux/gen_stats.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>

#include "pfifo_bulk_user.h"

#ifndef BULKCTL_VERSION
#define BULKCTL_VERSION "1.0"
#endif

/* libmnl 1.0.4 has no MNL_SOCKET_DUMP_SIZE; dumps need more than a page. */
#ifndef MNL_SOCKET_DUMP_SIZE
#define MNL_SOCKET_DUMP_SIZE 32768
#endif

enum { EXIT_USAGE = 1, EXIT_KERNEL = 2 };

static const char *verb = "";

/* ---- messages and usage ------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: bulkctl add|change|replace DEV [root | parent ID] [handle ID]\n"
		"               [limit PACKETS] [bulk_bytes SIZE] [bulk_pkts PACKETS]\n"
		"               [mode auto|bql|nobql]\n"
		"       bulkctl del DEV [root | parent ID] [handle ID]\n"
		"       bulkctl show [DEV] [-s] [-j] [--file FILE]\n"
		"       bulkctl watch DEV [-i SECONDS] [-n COUNT] [-j]\n"
		"       bulkctl --help | --version\n"
		"Ranges: limit %u..%u, bulk_bytes %u..%u (k, m, kb, mb, kbit... as in tc),\n"
		"        bulk_pkts %u..%u; 0 means no cap.\n",
		PFB_LIMIT_MIN, PFB_LIMIT_MAX, PFB_BULK_BYTES_MIN,
		PFB_BULK_BYTES_MAX, PFB_BULK_PKTS_MIN, PFB_BULK_PKTS_MAX);
}

/*
 * An argument as it may be shown in a message: control and non-ASCII bytes
 * as \xNN and long ones cut, so that a message stays on one line whatever
 * was typed. Two rotating buffers: a message shows at most two arguments.
 */
static const char *shown(const char *s)
{
	static char bufs[2][4 * 64 + 8];
	static unsigned int next;
	char *buf = bufs[next++ % 2], *p = buf;
	size_t n;

	for (n = 0; *s && n < 64; s++, n++) {
		unsigned char c = *s;

		if (c < 0x20 || c >= 0x7f || c == '\\')
			p += sprintf(p, "\\x%02x", c);
		else
			*p++ = c;
	}
	strcpy(p, *s ? "..." : "");
	return buf;
}

/* "bulkctl: [VERB: ]MESSAGE" on stderr. */
static void vreport(const char *fmt, va_list ap)
{
	fprintf(stderr, "bulkctl: ");
	if (*verb)
		fprintf(stderr, "%s: ", verb);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/* A bad argument: one line naming it, the usage, exit 1. */
static void __attribute__((noreturn, format(printf, 1, 2)))
bad_arg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap);
	va_end(ap);
	usage(stderr);
	exit(EXIT_USAGE);
}

static void __attribute__((noreturn, format(printf, 2, 3)))
die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap);
	va_end(ap);
	exit(status);
}

/* ---- argument parsing, tc's rules ---------------------------------------- */

/* tc's get_u32(..., 10): a whole decimal number that fits in 32 bits. */
static int parse_u32(const char *s, uint32_t *v)
{
	unsigned long res;
	char *end;

	if (!*s)
		return -1;
	errno = 0;
	res = strtoul(s, &end, 10);
	if (end == s || *end || errno == ERANGE || res > UINT32_MAX)
		return -1;
	*v = res;
	return 0;
}

/*
 * tc's get_size(): a number (strtod, so 1.5k works) with an optional
 * case-insensitive unit: b, k/kb, m/mb, g/gb (powers of 1024), kbit, mbit,
 * gbit (the same divided by 8). The result must be a whole number of bytes
 * that fits in 32 bits; as in tc, a fraction of a byte is dropped (1.5 is
 * 1). Unlike tc, negative and non-finite values are refused explicitly
 * rather than through an undefined conversion.
 */
static int parse_size(const char *s, uint32_t *v)
{
	static const struct {
		const char *unit;
		double mul;
	} units[] = {
		{ "b", 1 }, { "k", 1024 }, { "kb", 1024 },
		{ "m", 1024 * 1024 }, { "mb", 1024 * 1024 },
		{ "g", 1024.0 * 1024 * 1024 }, { "gb", 1024.0 * 1024 * 1024 },
		{ "kbit", 1024 / 8 }, { "mbit", 1024 * 1024 / 8 },
		{ "gbit", 1024.0 * 1024 * 1024 / 8 },
	};
	char *end;
	double sz;
	size_t i;

	sz = strtod(s, &end);
	if (end == s || !isfinite(sz) || sz < 0)
		return -1;
	if (*end) {
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strcasecmp(end, units[i].unit) == 0)
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return -1;
		sz *= units[i].mul;
	}
	if (sz >= 4294967296.0)
		return -1;
	*v = (uint32_t)sz;
	return 0;
}

/* One hexadecimal 16-bit part of a tc handle; empty means 0. */
static int parse_hex16(const char *s, size_t len, uint32_t *v)
{
	char buf[8];
	char *end;

	if (len == 0) {
		*v = 0;
		return 0;
	}
	if (len > 4)
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (!isxdigit((unsigned char)buf[0]))
		return -1;
	*v = strtoul(buf, &end, 16);
	return *end ? -1 : 0;
}

/* "MAJ:" or "MAJ", hexadecimal, as tc's get_qdisc_handle(). */
static int parse_handle(const char *s, uint32_t *h)
{
	const char *colon = strchr(s, ':');
	size_t len = colon ? (size_t)(colon - s) : strlen(s);
	uint32_t maj;

	if (colon && colon[1])
		return -1;
	if (!len || parse_hex16(s, len, &maj))
		return -1;
	*h = maj << 16;
	return 0;
}

/* "root", or "MAJ:MIN" / "MAJ:" in hexadecimal, as tc's get_tc_classid(). */
static int parse_parent(const char *s, uint32_t *h)
{
	const char *colon = strchr(s, ':');
	uint32_t maj, min;

	if (strcmp(s, "root") == 0) {
		*h = TC_H_ROOT;
		return 0;
	}
	if (!colon || colon == s)
		return -1;
	if (parse_hex16(s, colon - s, &maj) ||
	    parse_hex16(colon + 1, strlen(colon + 1), &min))
		return -1;
	*h = TC_H_MAKE(maj << 16, min);
	return 0;
}

struct request {
	const char *dev;
	uint32_t parent, handle;
	bool has_parent, has_handle;
	bool has[TCA_PFIFO_BULK_MAX + 1];
	uint32_t val[TCA_PFIFO_BULK_MAX + 1];
};

static void set_once(bool *has, const char *word)
{
	if (*has)
		bad_arg("duplicate \"%s\"", shown(word));
	*has = true;
}

static const char *next_value(int *i, int argc, char **argv)
{
	if (*i + 1 >= argc)
		bad_arg("missing value for \"%s\"", shown(argv[*i]));
	return argv[++*i];
}

static void check_dev(const char *dev)
{
	if (!*dev || strlen(dev) >= IFNAMSIZ)
		bad_arg("invalid device name \"%s\"", shown(dev));
}

/* Words after "VERB DEV"; qdisc options only when @options. */
static void parse_request(int argc, char **argv, bool options,
			  struct request *r)
{
	const char *v;
	uint32_t u;
	int i, m;

	if (argc < 1)
		bad_arg("missing DEV");
	r->dev = argv[0];
	check_dev(r->dev);
	r->parent = TC_H_ROOT;

	for (i = 1; i < argc; i++) {
		const char *w = argv[i];
		int type = 0;

		if (strcmp(w, "root") == 0) {
			set_once(&r->has_parent, "root/parent");
			r->parent = TC_H_ROOT;
			continue;
		}
		if (strcmp(w, "parent") == 0) {
			set_once(&r->has_parent, "root/parent");
			v = next_value(&i, argc, argv);
			if (parse_parent(v, &r->parent))
				bad_arg("invalid \"parent\": \"%s\" (root or MAJ:MIN in hex)", shown(v));
			continue;
		}
		if (strcmp(w, "handle") == 0) {
			set_once(&r->has_handle, w);
			v = next_value(&i, argc, argv);
			if (parse_handle(v, &r->handle))
				bad_arg("invalid \"handle\": \"%s\" (MAJ: in hex)", shown(v));
			continue;
		}
		if (options) {
			if (strcmp(w, "limit") == 0)
				type = TCA_PFIFO_BULK_LIMIT;
			else if (strcmp(w, "bulk_bytes") == 0)
				type = TCA_PFIFO_BULK_BULK_BYTES;
			else if (strcmp(w, "bulk_pkts") == 0)
				type = TCA_PFIFO_BULK_BULK_PKTS;
			else if (strcmp(w, "mode") == 0)
				type = TCA_PFIFO_BULK_MODE;
		}
		if (!type)
			bad_arg("unknown argument \"%s\"", shown(w));
		set_once(&r->has[type], w);
		v = next_value(&i, argc, argv);
		switch (type) {
		case TCA_PFIFO_BULK_LIMIT:
			if (parse_u32(v, &u) || u < PFB_LIMIT_MIN || u > PFB_LIMIT_MAX)
				bad_arg("invalid \"limit\": \"%s\" (%u..%u packets)",
					shown(v), PFB_LIMIT_MIN, PFB_LIMIT_MAX);
			break;
		case TCA_PFIFO_BULK_BULK_BYTES:
			if (parse_size(v, &u) || u > PFB_BULK_BYTES_MAX)
				bad_arg("invalid \"bulk_bytes\": \"%s\" (%u..%u bytes)",
					shown(v), PFB_BULK_BYTES_MIN, PFB_BULK_BYTES_MAX);
			break;
		case TCA_PFIFO_BULK_BULK_PKTS:
			if (parse_u32(v, &u) || u > PFB_BULK_PKTS_MAX)
				bad_arg("invalid \"bulk_pkts\": \"%s\" (%u..%u packets)",
					shown(v), PFB_BULK_PKTS_MIN, PFB_BULK_PKTS_MAX);
			break;
		default:
			m = pfb_mode_parse(v);
			if (m < 0)
				bad_arg("invalid \"mode\": \"%s\" (auto, bql or nobql)", shown(v));
			u = m;
			break;
		}
		r->val[type] = u;
	}
}

static int dev_index(const char *dev)
{
	unsigned int idx = if_nametoindex(dev);

	if (!idx) {
		fprintf(stderr, "bulkctl: %s: cannot find device \"%s\"\n",
			verb, shown(dev));
		exit(EXIT_USAGE);
	}
	return idx;
}

/* ---- netlink --------------------------------------------------------------- */

static volatile sig_atomic_t stop;	/* watch: SIGINT or SIGTERM seen */
static struct mnl_socket *nl;
static unsigned int nl_portid, nl_seq;
static char nl_buf[MNL_SOCKET_DUMP_SIZE];
static char ext_msg[512];

static void nl_open(void)
{
	int one = 1;

	nl = mnl_socket_open(NETLINK_ROUTE);
	if (!nl)
		die(EXIT_KERNEL, "netlink socket: %s", strerror(errno));
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
		die(EXIT_KERNEL, "netlink bind: %s", strerror(errno));
	nl_portid = mnl_socket_get_portid(nl);
	nl_seq = time(NULL);
	/* Old kernels lack these; then errors just come without a message. */
	mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &one, sizeof(one));
}

static int cb_err_attr(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	if (mnl_attr_type_valid(attr, NLMSGERR_ATTR_MAX) < 0)
		return MNL_CB_OK;
	if (type == NLMSGERR_ATTR_MSG &&
	    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
		return MNL_CB_OK;
	tb[type] = attr;
	return MNL_CB_OK;
}

/*
 * NLMSG_ERROR, i.e. the ACK. libmnl's default handler ignores the extended
 * ack, so keep the kernel's message for the caller to print.
 */
static int cb_error(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[NLMSGERR_ATTR_MAX + 1] = {};
	unsigned int hlen = sizeof(*err);

	(void)data;
	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*err))) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		hlen += mnl_nlmsg_get_payload_len(&err->msg);
	ext_msg[0] = '\0';
	if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) &&
	    mnl_nlmsg_size(hlen) <= nlh->nlmsg_len &&
	    mnl_attr_parse(nlh, hlen, cb_err_attr, tb) == MNL_CB_OK &&
	    tb[NLMSGERR_ATTR_MSG])
		snprintf(ext_msg, sizeof(ext_msg), "%s",
			 mnl_attr_get_str(tb[NLMSGERR_ATTR_MSG]));
	if (err->error == 0) {
		if (ext_msg[0])
			fprintf(stderr, "Warning: %s\n", ext_msg);
		return MNL_CB_STOP;
	}
	errno = -err->error;
	return MNL_CB_ERROR;
}

/* Send @nlh, run @cb on the answers until the ACK or the end of the dump. */
static int nl_talk(struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	mnl_cb_t ctl[NLMSG_ERROR + 1] = { [NLMSG_ERROR] = cb_error };
	unsigned int seq = ++nl_seq;
	ssize_t n;
	int ret;

	nlh->nlmsg_seq = seq;
	ext_msg[0] = '\0';
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	do {
		n = mnl_socket_recvfrom(nl, nl_buf, sizeof(nl_buf));
		if (n < 0)
			return -1;
		ret = mnl_cb_run2(nl_buf, n, seq, nl_portid, cb, data,
				  ctl, MNL_ARRAY_SIZE(ctl));
	} while (ret > MNL_CB_STOP);
	return ret;
}

static void __attribute__((noreturn)) kernel_failed(void)
{
	int e = errno;

	if (e == EINTR && stop)		/* Ctrl-C in the middle of a dump */
		exit(0);
	if (ext_msg[0])
		fprintf(stderr, "Error: %s\n", ext_msg);
	if (e == EPERM)
		die(EXIT_KERNEL, "%s (changing a qdisc needs CAP_NET_ADMIN)",
		    strerror(e));
	die(EXIT_KERNEL, "%s", strerror(e));
}

/* ---- add, change, replace, del ---------------------------------------------- */

static int do_modify(int argc, char **argv)
{
	struct request r = {};
	struct nlmsghdr *nlh;
	struct tcmsg *tcm;
	bool del = strcmp(verb, "del") == 0;
	struct nlattr *nest;
	int type, ifindex;

	parse_request(argc, argv, !del, &r);
	ifindex = dev_index(r.dev);

	nlh = mnl_nlmsg_put_header(nl_buf);
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	if (del) {
		nlh->nlmsg_type = RTM_DELQDISC;
	} else {
		nlh->nlmsg_type = RTM_NEWQDISC;
		if (strcmp(verb, "add") == 0)
			nlh->nlmsg_flags |= NLM_F_CREATE | NLM_F_EXCL;
		else if (strcmp(verb, "replace") == 0)
			nlh->nlmsg_flags |= NLM_F_CREATE | NLM_F_REPLACE;
	}
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = ifindex;
	tcm->tcm_parent = r.parent;
	tcm->tcm_handle = r.handle;
	/* On del the kind makes the kernel refuse to remove another qdisc. */
	mnl_attr_put_strz(nlh, TCA_KIND, PFB_KIND);

	/* Only what was given: "change" leaves the rest as it is. */
	for (type = 1; type <= TCA_PFIFO_BULK_MAX && !r.has[type]; type++)
		;
	if (type <= TCA_PFIFO_BULK_MAX) {
		nest = mnl_attr_nest_start(nlh, TCA_OPTIONS);
		for (type = 1; type <= TCA_PFIFO_BULK_MAX; type++) {
			if (!r.has[type])
				continue;
			if (type == TCA_PFIFO_BULK_MODE)
				mnl_attr_put_u8(nlh, type, r.val[type]);
			else
				mnl_attr_put_u32(nlh, type, r.val[type]);
		}
		mnl_attr_nest_end(nlh, nest);
	}

	nl_open();
	if (nl_talk(nlh, NULL, NULL) < 0)
		kernel_failed();
	return 0;
}

/* ---- parsing a qdisc dump -------------------------------------------------- */

struct qinfo {
	int ifindex;
	uint32_t handle, parent, refcnt;
	char kind[IFNAMSIZ];
	bool has_opt[TCA_PFIFO_BULK_MAX + 1];
	uint32_t opt[TCA_PFIFO_BULK_MAX + 1];
	bool has_basic, has_queue;
	uint64_t bytes, packets;
	struct gnet_stats_queue queue;
	bool has_x[TCA_PFIFO_BULK_XSTATS_MAX + 1];
	uint64_t x[TCA_PFIFO_BULK_XSTATS_MAX + 1];
	bool has_hist, has_bucket[TCA_PFIFO_BULK_HIST_MAX + 1];
	uint64_t hist[TCA_PFIFO_BULK_HIST_MAX + 1];
};

struct attr_table {
	const struct nlattr **tb;
	int max;
	const enum mnl_attr_data_type *types;	/* expected type per attribute */
};

/*
 * Keep an attribute only when its type is known and its payload has the
 * expected type and length; unknown and malformed ones are left out.
 */
static int cb_attr(const struct nlattr *attr, void *data)
{
	const struct attr_table *t = data;
	int type = mnl_attr_get_type(attr);

	if (mnl_attr_type_valid(attr, t->max) < 0)
		return MNL_CB_OK;
	if (t->types[type] == MNL_TYPE_UNSPEC ||
	    mnl_attr_validate(attr, t->types[type]) < 0)
		return MNL_CB_OK;
	t->tb[type] = attr;
	return MNL_CB_OK;
}

static void parse_nest(const struct nlattr *nest, const struct nlattr **tb,
		       int max, const enum mnl_attr_data_type *types)
{
	struct attr_table t = { tb, max, types };

	mnl_attr_parse_nested(nest, cb_attr, &t);
}

static void copy_payload(void *dst, size_t size, const struct nlattr *a)
{
	size_t len = mnl_attr_get_payload_len(a);

	memset(dst, 0, size);
	memcpy(dst, mnl_attr_get_payload(a), len < size ? len : size);
}

static void parse_xstats(const struct nlattr *app, struct qinfo *q)
{
	static const enum mnl_attr_data_type xtypes[TCA_PFIFO_BULK_XSTATS_MAX + 1] = {
		[TCA_PFIFO_BULK_XSTATS_BATCHES]		= MNL_TYPE_U64,
		[TCA_PFIFO_BULK_XSTATS_BATCH_PKTS]	= MNL_TYPE_U64,
		[TCA_PFIFO_BULK_XSTATS_BATCH_BYTES]	= MNL_TYPE_U64,
		[TCA_PFIFO_BULK_XSTATS_HIST]		= MNL_TYPE_NESTED,
		[TCA_PFIFO_BULK_XSTATS_END_BYTES]	= MNL_TYPE_U64,
		[TCA_PFIFO_BULK_XSTATS_END_PKTS]	= MNL_TYPE_U64,
		[TCA_PFIFO_BULK_XSTATS_END_BUDGET]	= MNL_TYPE_U64,
		[TCA_PFIFO_BULK_XSTATS_END_EMPTY]	= MNL_TYPE_U64,
		[TCA_PFIFO_BULK_XSTATS_RESCHEDULES]	= MNL_TYPE_U64,
	};
	static const enum mnl_attr_data_type htypes[TCA_PFIFO_BULK_HIST_MAX + 1] = {
		[TCA_PFIFO_BULK_HIST_1 ... TCA_PFIFO_BULK_HIST_MAX] = MNL_TYPE_U64,
	};
	const struct nlattr *tb[TCA_PFIFO_BULK_XSTATS_MAX + 1] = {};
	const struct nlattr *hb[TCA_PFIFO_BULK_HIST_MAX + 1] = {};
	int i;

	parse_nest(app, tb, TCA_PFIFO_BULK_XSTATS_MAX, xtypes);
	for (i = TCA_PFIFO_BULK_XSTATS_BATCHES; i <= TCA_PFIFO_BULK_XSTATS_MAX; i++) {
		if (xtypes[i] != MNL_TYPE_U64 || !tb[i])
			continue;
		q->has_x[i] = true;
		q->x[i] = mnl_attr_get_u64(tb[i]);
	}
	if (!tb[TCA_PFIFO_BULK_XSTATS_HIST])
		return;
	q->has_hist = true;
	parse_nest(tb[TCA_PFIFO_BULK_XSTATS_HIST], hb,
		   TCA_PFIFO_BULK_HIST_MAX, htypes);
	for (i = TCA_PFIFO_BULK_HIST_1; i <= TCA_PFIFO_BULK_HIST_MAX; i++) {
		if (!hb[i])
			continue;
		q->has_bucket[i] = true;
		q->hist[i] = mnl_attr_get_u64(hb[i]);
	}
}

static void parse_stats2(const struct nlattr *st, struct qinfo *q)
{
	static const enum mnl_attr_data_type stypes[TCA_STATS_MAX + 1] = {
		[TCA_STATS_BASIC] = MNL_TYPE_BINARY,
		[TCA_STATS_QUEUE] = MNL_TYPE_BINARY,
		[TCA_STATS_APP] = MNL_TYPE_NESTED,
		[TCA_STATS_PKT64] = MNL_TYPE_U64,
	};
	const struct nlattr *tb[TCA_STATS_MAX + 1] = {};
	struct gnet_stats_basic basic;

	parse_nest(st, tb, TCA_STATS_MAX, stypes);
	if (tb[TCA_STATS_BASIC]) {
		copy_payload(&basic, sizeof(basic), tb[TCA_STATS_BASIC]);
		q->has_basic = true;
		q->bytes = basic.bytes;
		q->packets = basic.packets;
		/* As tc: the 64-bit count wins when the kernel sends one. */
		if (tb[TCA_STATS_PKT64] && mnl_attr_get_u64(tb[TCA_STATS_PKT64]))
			q->packets = mnl_attr_get_u64(tb[TCA_STATS_PKT64]);
	}
	if (tb[TCA_STATS_QUEUE]) {
		copy_payload(&q->queue, sizeof(q->queue), tb[TCA_STATS_QUEUE]);
		q->has_queue = true;
	}
	if (tb[TCA_STATS_APP])
		parse_xstats(tb[TCA_STATS_APP], q);
}

/* One RTM_NEWQDISC into @q; false when it is not a usable qdisc message. */
static bool parse_qdisc(const struct nlmsghdr *nlh, struct qinfo *q)
{
	static const enum mnl_attr_data_type types[TCA_MAX + 1] = {
		[TCA_KIND] = MNL_TYPE_NUL_STRING,
		[TCA_OPTIONS] = MNL_TYPE_NESTED,
		[TCA_STATS2] = MNL_TYPE_NESTED,
	};
	static const enum mnl_attr_data_type otypes[TCA_PFIFO_BULK_MAX + 1] = {
		[TCA_PFIFO_BULK_LIMIT] = MNL_TYPE_U32,
		[TCA_PFIFO_BULK_BULK_BYTES] = MNL_TYPE_U32,
		[TCA_PFIFO_BULK_BULK_PKTS] = MNL_TYPE_U32,
		[TCA_PFIFO_BULK_MODE] = MNL_TYPE_U8,
		[TCA_PFIFO_BULK_EFFECTIVE_MODE] = MNL_TYPE_U8,
		[TCA_PFIFO_BULK_LOCKLESS] = MNL_TYPE_U8,
	};
	const struct nlattr *tb[TCA_MAX + 1] = {};
	const struct nlattr *ob[TCA_PFIFO_BULK_MAX + 1] = {};
	struct attr_table t = { tb, TCA_MAX, types };
	const struct tcmsg *tcm;
	int i;

	memset(q, 0, sizeof(*q));
	if (nlh->nlmsg_type != RTM_NEWQDISC ||
	    nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*tcm)))
		return false;
	tcm = mnl_nlmsg_get_payload(nlh);
	q->ifindex = tcm->tcm_ifindex;
	q->handle = tcm->tcm_handle;
	q->parent = tcm->tcm_parent;
	q->refcnt = tcm->tcm_info;
	if (mnl_attr_parse(nlh, sizeof(*tcm), cb_attr, &t) < 0 || !tb[TCA_KIND])
		return false;
	snprintf(q->kind, sizeof(q->kind), "%s", mnl_attr_get_str(tb[TCA_KIND]));

	if (tb[TCA_OPTIONS]) {
		parse_nest(tb[TCA_OPTIONS], ob, TCA_PFIFO_BULK_MAX, otypes);
		for (i = 1; i <= TCA_PFIFO_BULK_MAX; i++) {
			if (!ob[i])
				continue;
			q->has_opt[i] = true;
			q->opt[i] = otypes[i] == MNL_TYPE_U8 ?
				    mnl_attr_get_u8(ob[i]) : mnl_attr_get_u32(ob[i]);
		}
	}
	if (tb[TCA_STATS2])
		parse_stats2(tb[TCA_STATS2], q);
	return true;
}

/* ---- output ------------------------------------------------------------------ */

static bool json_sep;

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void json_key(const char *k)
{
	if (json_sep)
		putchar(',');
	json_str(k);
	putchar(':');
	json_sep = true;
}

static void json_open(const char *k, char c)
{
	if (k)
		json_key(k);
	else if (json_sep)
		putchar(',');
	putchar(c);
	json_sep = false;
}

static void json_close(char c)
{
	putchar(c);
	json_sep = true;
}

static void json_u64(const char *k, uint64_t v)
{
	json_key(k);
	printf("%llu", (unsigned long long)v);
}

static void json_string(const char *k, const char *v)
{
	json_key(k);
	json_str(v);
}

static void json_double(const char *k, double v)
{
	json_key(k);
	printf("%g", v);
}

static const char *mode_str(uint32_t m, char *buf, size_t len)
{
	const char *name = pfb_mode_name(m);

	if (name)
		return name;
	snprintf(buf, len, "%u", m);
	return buf;
}

static const char *classid_str(uint32_t h, char *buf, size_t len)
{
	if (TC_H_MIN(h))
		snprintf(buf, len, "%x:%x", TC_H_MAJ(h) >> 16, TC_H_MIN(h));
	else
		snprintf(buf, len, "%x:", TC_H_MAJ(h) >> 16);
	return buf;
}

static const int xs_totals[] = {
	TCA_PFIFO_BULK_XSTATS_BATCHES, TCA_PFIFO_BULK_XSTATS_BATCH_PKTS,
	TCA_PFIFO_BULK_XSTATS_BATCH_BYTES,
};
static const int xs_ends[] = {
	TCA_PFIFO_BULK_XSTATS_END_BYTES, TCA_PFIFO_BULK_XSTATS_END_PKTS,
	TCA_PFIFO_BULK_XSTATS_END_BUDGET, TCA_PFIFO_BULK_XSTATS_END_EMPTY,
};
static const int xs_other[] = {
	TCA_PFIFO_BULK_XSTATS_RESCHEDULES,
};

/* JSON keys of the extended statistics, the same as the tc plugin's. */
static const char *const xs_keys[TCA_PFIFO_BULK_XSTATS_MAX + 1] = {
	[TCA_PFIFO_BULK_XSTATS_BATCHES]		= "batches",
	[TCA_PFIFO_BULK_XSTATS_BATCH_PKTS]	= "batch_pkts",
	[TCA_PFIFO_BULK_XSTATS_BATCH_BYTES]	= "batch_bytes",
	[TCA_PFIFO_BULK_XSTATS_END_BYTES]	= "end_bytes",
	[TCA_PFIFO_BULK_XSTATS_END_PKTS]	= "end_pkts",
	[TCA_PFIFO_BULK_XSTATS_END_BUDGET]	= "end_budget",
	[TCA_PFIFO_BULK_XSTATS_END_EMPTY]	= "end_empty",
	[TCA_PFIFO_BULK_XSTATS_RESCHEDULES]	= "reschedules",
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static bool mean_batch(const struct qinfo *q, double *m)
{
	uint64_t b = q->x[TCA_PFIFO_BULK_XSTATS_BATCHES];

	if (!q->has_x[TCA_PFIFO_BULK_XSTATS_BATCHES] ||
	    !q->has_x[TCA_PFIFO_BULK_XSTATS_BATCH_PKTS])
		return false;
	*m = b ? (double)q->x[TCA_PFIFO_BULK_XSTATS_BATCH_PKTS] / b : 0.0;
	return true;
}

static void json_counters(const struct qinfo *q, const int *types, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (q->has_x[types[i]])
			json_u64(xs_keys[types[i]], q->x[types[i]]);
}

static void print_json(const struct qinfo *q, bool stats)
{
	char buf[32], ifname[IF_NAMESIZE];
	double m;
	int i;

	json_open(NULL, '{');
	json_string("kind", q->kind);
	json_string("handle", classid_str(q->handle & TC_H_MAJ_MASK, buf, sizeof(buf)));
	if (if_indextoname(q->ifindex, ifname))
		json_string("dev", ifname);
	else
		json_u64("ifindex", q->ifindex);
	if (q->parent == TC_H_ROOT) {
		json_key("root");
		printf("true");
	} else if (q->parent) {
		json_string("parent", classid_str(q->parent, buf, sizeof(buf)));
	}
	if (q->refcnt != 1)
		json_u64("refcnt", q->refcnt);

	json_open("options", '{');
	if (q->has_opt[TCA_PFIFO_BULK_LIMIT])
		json_u64("limit", q->opt[TCA_PFIFO_BULK_LIMIT]);
	if (q->has_opt[TCA_PFIFO_BULK_BULK_BYTES])
		json_u64("bulk_bytes", q->opt[TCA_PFIFO_BULK_BULK_BYTES]);
	if (q->has_opt[TCA_PFIFO_BULK_BULK_PKTS])
		json_u64("bulk_pkts", q->opt[TCA_PFIFO_BULK_BULK_PKTS]);
	if (q->has_opt[TCA_PFIFO_BULK_MODE])
		json_string("mode", mode_str(q->opt[TCA_PFIFO_BULK_MODE], buf, sizeof(buf)));
	if (q->has_opt[TCA_PFIFO_BULK_EFFECTIVE_MODE])
		json_string("effective_mode",
			    mode_str(q->opt[TCA_PFIFO_BULK_EFFECTIVE_MODE], buf, sizeof(buf)));
	if (q->has_opt[TCA_PFIFO_BULK_LOCKLESS]) {
		json_key("lockless");
		printf(q->opt[TCA_PFIFO_BULK_LOCKLESS] ? "true" : "false");
	}
	json_close('}');

	if (stats) {
		if (q->has_basic) {
			json_u64("bytes", q->bytes);
			json_u64("packets", q->packets);
		}
		if (q->has_queue) {
			json_u64("drops", q->queue.drops);
			json_u64("overlimits", q->queue.overlimits);
			json_u64("requeues", q->queue.requeues);
			json_u64("backlog", q->queue.backlog);
			json_u64("qlen", q->queue.qlen);
		}
		json_counters(q, xs_totals, N(xs_totals));
		if (mean_batch(q, &m))
			json_double("mean_batch", m);
		if (q->has_hist) {
			json_open("batch_hist", '{');
			for (i = TCA_PFIFO_BULK_HIST_1; i <= TCA_PFIFO_BULK_HIST_MAX; i++)
				if (q->has_bucket[i])
					json_u64(pfb_hist_keys[i], q->hist[i]);
			json_close('}');
		}
		json_counters(q, xs_ends, N(xs_ends));
		json_counters(q, xs_other, N(xs_other));
	}
	json_close('}');
}

static void text_counters(const struct qinfo *q, const int *types, size_t n)
{
	bool begun = false;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!q->has_x[types[i]])
			continue;
		printf("%s %s %llu", begun ? "" : "\n ", xs_keys[types[i]],
		       (unsigned long long)q->x[types[i]]);
		begun = true;
	}
}

/* The layout of "tc -s qdisc show", without its trailing blanks. */
static void print_text(const struct qinfo *q, bool stats)
{
	char buf[32], ifname[IF_NAMESIZE];
	bool begun = false;
	double m;
	int i;

	printf("qdisc %s %s", q->kind,
	       classid_str(q->handle & TC_H_MAJ_MASK, buf, sizeof(buf)));
	if (if_indextoname(q->ifindex, ifname))
		printf(" dev %s", ifname);
	else
		printf(" ifindex %d", q->ifindex);
	if (q->parent == TC_H_ROOT)
		printf(" root");
	else if (q->parent)
		printf(" parent %s", classid_str(q->parent, buf, sizeof(buf)));
	if (q->refcnt != 1)
		printf(" refcnt %u", q->refcnt);
	if (q->has_opt[TCA_PFIFO_BULK_LIMIT])
		printf(" limit %up", q->opt[TCA_PFIFO_BULK_LIMIT]);
	if (q->has_opt[TCA_PFIFO_BULK_BULK_BYTES])
		printf(" bulk_bytes %s", pfb_sprint_size(q->opt[TCA_PFIFO_BULK_BULK_BYTES],
							buf, sizeof(buf)));
	if (q->has_opt[TCA_PFIFO_BULK_BULK_PKTS])
		printf(" bulk_pkts %u", q->opt[TCA_PFIFO_BULK_BULK_PKTS]);
	if (q->has_opt[TCA_PFIFO_BULK_MODE])
		printf(" mode %s", mode_str(q->opt[TCA_PFIFO_BULK_MODE], buf, sizeof(buf)));
	if (q->has_opt[TCA_PFIFO_BULK_EFFECTIVE_MODE])
		printf(" effective_mode %s",
		       mode_str(q->opt[TCA_PFIFO_BULK_EFFECTIVE_MODE], buf, sizeof(buf)));
	if (q->has_opt[TCA_PFIFO_BULK_LOCKLESS])
		printf(" %s", q->opt[TCA_PFIFO_BULK_LOCKLESS] ? "lockless" : "locked");
	if (stats) {
		if (q->has_basic || q->has_queue)
			printf("\n");
		if (q->has_basic)
			printf(" Sent %llu bytes %llu pkt",
			       (unsigned long long)q->bytes,
			       (unsigned long long)q->packets);
		if (q->has_queue)
			printf(" (dropped %u, overlimits %u requeues %u)\n"
			       " backlog %s %up requeues %u",
			       q->queue.drops, q->queue.overlimits,
			       q->queue.requeues,
			       pfb_sprint_size(q->queue.backlog, buf, sizeof(buf)),
			       q->queue.qlen, q->queue.requeues);
		text_counters(q, xs_totals, N(xs_totals));
		if (mean_batch(q, &m))
			printf(" mean_batch %.2f", m);
		for (i = TCA_PFIFO_BULK_HIST_1; i <= TCA_PFIFO_BULK_HIST_MAX; i++) {
			if (!q->has_bucket[i])
				continue;
			printf("%s %s:%llu", begun ? "" : "\n  batch_hist",
			       pfb_hist_keys[i], (unsigned long long)q->hist[i]);
			begun = true;
		}
		text_counters(q, xs_ends, N(xs_ends));
		text_counters(q, xs_other, N(xs_other));
	}
	printf("\n");
}

/* ---- show ---------------------------------------------------------------------- */

struct dump {
	int ifindex;		/* 0: every device */
	bool stats, json;
	unsigned int count;
	void (*fn)(struct dump *d, const struct qinfo *q);
	struct qinfo sum;	/* watch: the sum over the matching qdiscs */
};

static int cb_qdisc(const struct nlmsghdr *nlh, void *data)
{
	struct dump *d = data;
	struct qinfo q;

	if (!parse_qdisc(nlh, &q) || strcmp(q.kind, PFB_KIND) != 0)
		return MNL_CB_OK;
	/* The kernel ignores tcm_ifindex in dumps, so filter here. */
	if (d->ifindex && q.ifindex != d->ifindex)
		return MNL_CB_OK;
	d->fn(d, &q);
	d->count++;
	return MNL_CB_OK;
}

static void dump_qdiscs(struct dump *d)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(nl_buf);
	struct tcmsg *tcm;

	nlh->nlmsg_type = RTM_GETQDISC;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = d->ifindex;
	if (nl_talk(nlh, cb_qdisc, d) < 0)
		kernel_failed();
}

/*
 * Messages saved from a dump (nlmsghdr + payload, one after the other, the
 * format "tc monitor file" reads), instead of asking the kernel.
 */
static void read_qdiscs(struct dump *d, const char *path)
{
	static char fbuf[1 << 20];
	FILE *f = fopen(path, "rb");
	size_t len;

	if (!f)
		bad_arg("cannot read \"--file\" \"%s\": %s", shown(path),
			strerror(errno));
	len = fread(fbuf, 1, sizeof(fbuf), f);
	fclose(f);
	if (mnl_cb_run(fbuf, len, 0, 0, cb_qdisc, d) < 0)
		die(EXIT_KERNEL, "%s: bad message: %s", shown(path), strerror(errno));
}

static void show_one(struct dump *d, const struct qinfo *q)
{
	if (d->json)
		print_json(q, d->stats);
	else
		print_text(q, d->stats);
}

static int do_show(int argc, char **argv)
{
	struct dump d = { .fn = show_one };
	const char *dev = NULL, *file = NULL;
	int i;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "-s") == 0 || strcmp(argv[i], "--stats") == 0) {
			d.stats = true;
		} else if (strcmp(argv[i], "-j") == 0 || strcmp(argv[i], "--json") == 0) {
			d.json = true;
		} else if (strcmp(argv[i], "--file") == 0) {
			file = next_value(&i, argc, argv);
		} else if (argv[i][0] == '-' || dev) {
			bad_arg("unknown argument \"%s\"", shown(argv[i]));
		} else {
			dev = argv[i];
			check_dev(dev);
		}
	}
	if (dev)
		d.ifindex = dev_index(dev);

	if (d.json)
		json_open(NULL, '[');
	if (file) {
		read_qdiscs(&d, file);
	} else {
		nl_open();
		dump_qdiscs(&d);
	}
	if (d.json) {
		json_close(']');
		putchar('\n');
	}
	return 0;
}

/* ---- watch ------------------------------------------------------------------------ */

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void add_one(struct dump *d, const struct qinfo *q)
{
	int i;

	d->sum.packets += q->packets;
	d->sum.queue.drops += q->queue.drops;
	for (i = 0; i <= TCA_PFIFO_BULK_XSTATS_MAX; i++) {
		d->sum.x[i] += q->x[i];
		d->sum.has_x[i] |= q->has_x[i];
	}
}

static void sample(struct dump *d, const char *dev, struct qinfo *out)
{
	memset(&d->sum, 0, sizeof(d->sum));
	d->count = 0;
	dump_qdiscs(d);
	if (!d->count)
		die(EXIT_KERNEL, "no %s qdisc on %s", PFB_KIND, dev);
	*out = d->sum;
}

static uint64_t delta(uint64_t now, uint64_t then)
{
	return now >= then ? now - then : now;	/* counters were reset */
}

static double secs(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) + (b->tv_nsec - a->tv_nsec) / 1e9;
}

static void print_rates(const char *dev, const struct qinfo *a,
			const struct qinfo *b, double dt, bool json)
{
	static const char *const share_keys[] = {
		"end_bytes_pct", "end_pkts_pct", "end_budget_pct", "end_empty_pct",
	};
	uint64_t batches = delta(b->x[TCA_PFIFO_BULK_XSTATS_BATCHES],
				 a->x[TCA_PFIFO_BULK_XSTATS_BATCHES]);
	uint64_t bpkts = delta(b->x[TCA_PFIFO_BULK_XSTATS_BATCH_PKTS],
			       a->x[TCA_PFIFO_BULK_XSTATS_BATCH_PKTS]);
	double pps = delta(b->packets, a->packets) / dt;
	double bps = batches / dt;
	double mean = batches ? (double)bpkts / batches : 0.0;
	double dps = delta(b->queue.drops, a->queue.drops) / dt;
	double share[N(xs_ends)];
	size_t i;

	for (i = 0; i < N(xs_ends); i++)
		share[i] = batches ? 100.0 * delta(b->x[xs_ends[i]],
						   a->x[xs_ends[i]]) / batches : 0.0;
	if (json) {
		json_sep = false;
		json_open(NULL, '{');
		json_string("dev", dev);
		json_double("interval", dt);
		json_double("pkts_per_sec", pps);
		json_double("batches_per_sec", bps);
		json_double("mean_batch", mean);
		json_double("drops_per_sec", dps);
		for (i = 0; i < N(xs_ends); i++)
			json_double(share_keys[i], share[i]);
		json_close('}');
		putchar('\n');
	} else {
		printf("%10.1f %10.1f %8.2f %9.1f %7.1f %7.1f %7.1f %7.1f\n",
		       pps, bps, mean, dps, share[0], share[1], share[2], share[3]);
	}
	fflush(stdout);
}

static int do_watch(int argc, char **argv)
{
	struct dump d = { .fn = add_one };
	struct timespec t0, t1, next;
	struct qinfo a, b;
	struct sigaction sa = { .sa_handler = on_signal };
	double interval = 1.0;
	const char *dev = NULL, *v;
	uint32_t count = 0;
	bool json = false;
	long long n = 0;
	char *end;
	int i;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "-i") == 0) {
			v = next_value(&i, argc, argv);
			interval = strtod(v, &end);
			if (end == v || *end || !isfinite(interval) ||
			    interval < 0.1 || interval > 3600)
				bad_arg("invalid \"-i\": \"%s\" (0.1..3600 seconds)", shown(v));
		} else if (strcmp(argv[i], "-n") == 0) {
			v = next_value(&i, argc, argv);
			if (parse_u32(v, &count) || count < 1)
				bad_arg("invalid \"-n\": \"%s\" (a count from 1)", shown(v));
		} else if (strcmp(argv[i], "-j") == 0 || strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (argv[i][0] == '-' || dev) {
			bad_arg("unknown argument \"%s\"", shown(argv[i]));
		} else {
			dev = argv[i];
			check_dev(dev);
		}
	}
	if (!dev)
		bad_arg("missing DEV");
	d.ifindex = dev_index(dev);
	d.stats = true;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	nl_open();
	sample(&d, dev, &a);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	next = t0;
	if (!json)
		printf("# %s on %s, every %g s; *%%: share of the batches ended by each reason\n"
		       "#%9s %10s %8s %9s %7s %7s %7s %7s\n",
		       PFB_KIND, dev, interval, "pkts/s", "batches/s", "mean",
		       "drops/s", "bytes%", "pkts%", "budget%", "empty%");
	while (!stop && (!count || n < count)) {
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
		print_rates(dev, &a, &b, secs(&t0, &t1), json);
		a = b;
		t0 = t1;
		n++;
	}
	return 0;
}

/* ---- main ------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("bulkctl %s\n", BULKCTL_VERSION);
		return 0;
	}
	verb = argv[1];
	if (strcmp(verb, "delete") == 0)
		verb = "del";
	if (strcmp(verb, "add") == 0 || strcmp(verb, "change") == 0 ||
	    strcmp(verb, "replace") == 0 || strcmp(verb, "del") == 0)
		return do_modify(argc - 2, argv + 2);
	if (strcmp(verb, "show") == 0)
		return do_show(argc - 2, argv + 2);
	if (strcmp(verb, "watch") == 0)
		return do_watch(argc - 2, argv + 2);
	verb = "";
	bad_arg("unknown command \"%s\"", shown(argv[1]));
}
