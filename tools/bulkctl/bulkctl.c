// SPDX-License-Identifier: GPL-2.0
/*
 * bulkctl - configure and watch pfifo_bulk qdiscs over rtnetlink (libmnl).
 *
 * What it adds to "tc ... pfifo_bulk": it needs no iproute2 plugin, "watch"
 * prints batch rates per qdisc, and its JSON is stable. Everything else is
 * tc's: the grammar (global options before the verb, an optional "dev"),
 * tc's size and handle syntax, one-line errors with the kernel's extended
 * ack, and the output of "tc [-s] [-j] qdisc show", because options and
 * statistics print through the printers the plugin uses
 * (tools/include/pfifo_bulk_user.h) over a small print_*() of iproute2's
 * signatures. Ranges are the kernel's: it names the option and the range.
 *
 * Exit status: 0 success, 1 bad arguments or unknown device, 2 the kernel
 * refused, or there is no pfifo_bulk to show or watch.
 */

#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
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

#ifndef BULKCTL_VERSION
#define BULKCTL_VERSION "1.0"
#endif

/* libmnl 1.0.4 has no MNL_SOCKET_DUMP_SIZE; dumps need more than a page. */
#ifndef MNL_SOCKET_DUMP_SIZE
#define MNL_SOCKET_DUMP_SIZE 32768
#endif

enum { EXIT_USAGE = 1, EXIT_KERNEL = 2 };

static const char *verb = "";
static bool json, stats;

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: bulkctl [ OPTIONS ] { add | change | replace } [ dev ] DEV\n"
		"               [ root | parent ID ] [ handle ID ] [ limit PACKETS ]\n"
		"               [ bulk_bytes SIZE ] [ bulk_pkts PACKETS ] [ mode auto|bql|nobql ]\n"
		"               [ coalesce_usecs USECS ] [ coalesce_pkts PACKETS ]\n"
		"       bulkctl [ OPTIONS ] { del | delete } [ dev ] DEV [ root | parent ID ] [ handle ID ]\n"
		"       bulkctl [ OPTIONS ] show [ [ dev ] DEV ] [ file FILE ]\n"
		"       bulkctl [ OPTIONS ] watch [ dev ] DEV [ interval SECONDS ] [ count N ]\n"
		"       bulkctl { help | -h | -V }\n"
		"OPTIONS := { -s[tats] | -j[son] | -n[etns] NAME | -h[elp] | -V[ersion] }\n"
		"SIZE: tc's, as 1500, 64k, 1m; 0 = no cap. The kernel checks the ranges.\n");
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

/* "bulkctl: [VERB: ]MESSAGE", one line on stderr, and exit. */
static void __attribute__((noreturn, format(printf, 2, 3)))
die(int status, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bulkctl: ");
	if (*verb)
		fprintf(stderr, "%s: ", verb);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

#define bad_arg(...) die(EXIT_USAGE, __VA_ARGS__)

/* ---- iproute2's print_*(), enough of them for the shared printers -------- */

enum output_type { PRINT_FP = 1, PRINT_JSON = 2, PRINT_ANY = 4 };

static bool json_sep;	/* a value precedes in the current object or array */

static bool to_json(enum output_type t)
{
	return json && (t & (PRINT_JSON | PRINT_ANY));
}

static bool to_text(enum output_type t)
{
	return !json && (t & (PRINT_FP | PRINT_ANY));
}

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

static void json_key(const char *key)
{
	if (json_sep)
		putchar(',');
	json_sep = true;
	if (key) {
		json_str(key);
		putchar(':');
	}
}

static void open_json_object(const char *key)
{
	if (json) {
		json_key(key);
		putchar('{');
		json_sep = false;
	}
}

static void close_json_object(void)
{
	if (json) {
		putchar('}');
		json_sep = true;
	}
}

static void open_json_array(const char *key)
{
	if (json) {
		json_key(key);
		putchar('[');
		json_sep = false;
	}
}

static void close_json_array(void)
{
	if (json) {
		putchar(']');
		json_sep = true;
	}
}

static void print_nl(void)
{
	if (!json)
		putchar('\n');
}

#define PRINT_FUNC(name, type, jfmt)					\
static void								\
print_##name(enum output_type t, const char *key, const char *fmt, type v) \
{									\
	if (to_json(t)) {						\
		json_key(key);						\
		printf(jfmt, v);					\
	} else if (to_text(t)) {					\
		printf(fmt, v);						\
	}								\
}
PRINT_FUNC(uint, unsigned int, "%u")
PRINT_FUNC(u64, uint64_t, "%" PRIu64)

static void
print_string(enum output_type t, const char *key, const char *fmt, const char *v)
{
	if (to_json(t)) {
		json_key(key);
		json_str(v);
	} else if (to_text(t)) {
		printf(fmt, v);
	}
}

static void
print_bool(enum output_type t, const char *key, const char *fmt, bool v)
{
	if (to_json(t)) {
		json_key(key);
		printf(v ? "true" : "false");
	} else if (to_text(t)) {
		printf(fmt, v ? "true" : "false");
	}
}

/* JSON numbers in plain decimal: 1234567.8, never 1.23457e+06. */
static void
print_float(enum output_type t, const char *key, const char *fmt, double v)
{
	char buf[64], *end;

	if (to_json(t)) {
		snprintf(buf, sizeof(buf), "%.3f", v);
		for (end = buf + strlen(buf) - 1; *end == '0'; end--)
			*end = '\0';
		if (*end == '.')
			*end = '\0';
		json_key(key);
		fputs(buf, stdout);
	} else if (to_text(t)) {
		printf(fmt, v);
	}
}

/* tc's sizes: "64Kb" within 16 bytes of a KiB multiple, "1Mb" within 1 KiB. */
static void
print_size(enum output_type t, const char *key, const char *fmt, uint32_t v)
{
	char buf[32];

	if (!to_text(t)) {
		print_uint(t, key, "%u", v);
		return;
	}
	if (v >= 1 << 20 && fabs((1 << 20) * rint(v / 1048576.0) - v) < 1024)
		snprintf(buf, sizeof(buf), "%gMb", rint(v / 1048576.0));
	else if (v >= 1 << 10 && fabs((1 << 10) * rint(v / 1024.0) - v) < 16)
		snprintf(buf, sizeof(buf), "%gKb", rint(v / 1024.0));
	else
		snprintf(buf, sizeof(buf), "%ub", v);
	printf(fmt, buf);
}

#include "pfifo_bulk_user.h"

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
	if (end == s || *end || errno == ERANGE || res > UINT32_MAX || *s == '-')
		return -1;
	*v = res;
	return 0;
}

/*
 * tc's get_size(): a number (1.5k works) with an optional case-insensitive
 * unit: b, k/kb, m/mb, g/gb (powers of 1024), kbit, mbit, gbit (the same
 * divided by 8); a whole number of bytes that fits in 32 bits, a fraction of
 * a byte dropped. Negative and non-finite values are refused.
 */
static int parse_size(const char *s, uint32_t *v)
{
	static const char *const units[] = {
		"b", "k", "kb", "m", "mb", "g", "gb", "kbit", "mbit", "gbit",
	};
	static const double mul[] = {
		1, 1024, 1024, 1 << 20, 1 << 20, 1 << 30, 1 << 30,
		1024 / 8, (1 << 20) / 8, (1 << 30) / 8,
	};
	char *end;
	double sz;
	size_t i;

	sz = strtod(s, &end);
	if (end == s || !isfinite(sz) || sz < 0)
		return -1;
	if (*end) {
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strcasecmp(end, units[i]) == 0)
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return -1;
		sz *= mul[i];
	}
	if (sz >= 4294967296.0)
		return -1;
	*v = (uint32_t)sz;
	return 0;
}

/* One hexadecimal 16-bit part of a tc handle; empty means 0. */
static int parse_hex16(const char *s, size_t len, uint32_t *v)
{
	char buf[8], *end;

	*v = 0;
	if (len == 0)
		return 0;
	if (len > 4 || !isxdigit((unsigned char)*s))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	*v = strtoul(buf, &end, 16);
	return *end ? -1 : 0;
}

/* "MAJ:" or "MAJ" as tc's handle; "root" or "MAJ:MIN" as tc's parent. */
static int parse_id(const char *s, bool parent, uint32_t *h)
{
	const char *colon = strchr(s, ':');
	uint32_t maj, min = 0;

	if (parent && strcmp(s, "root") == 0) {
		*h = TC_H_ROOT;
		return 0;
	}
	if (parent ? !colon : colon && colon[1])
		return -1;
	if (colon == s || parse_hex16(s, colon ? (size_t)(colon - s) : strlen(s), &maj))
		return -1;
	if (parent && parse_hex16(colon + 1, strlen(colon + 1), &min))
		return -1;
	*h = TC_H_MAKE(maj << 16, min);
	return 0;
}

/* tc's print_tc_classid(). */
static const char *id_str(uint32_t h, char *buf, size_t len)
{
	if (h == TC_H_ROOT)
		snprintf(buf, len, "root");
	else if (h == TC_H_UNSPEC)
		snprintf(buf, len, "none");
	else if (!TC_H_MAJ(h))
		snprintf(buf, len, ":%x", TC_H_MIN(h));
	else if (!TC_H_MIN(h))
		snprintf(buf, len, "%x:", TC_H_MAJ(h) >> 16);
	else
		snprintf(buf, len, "%x:%x", TC_H_MAJ(h) >> 16, TC_H_MIN(h));
	return buf;
}

static const char *next_value(int *i, int argc, char **argv)
{
	if (*i + 1 >= argc)
		bad_arg("missing value for \"%s\"", shown(argv[*i]));
	return argv[++*i];
}

static void set_once(bool *has, const char *word)
{
	if (*has)
		bad_arg("duplicate \"%s\"", shown(word));
	*has = true;
}

static void set_dev(const char **dev, const char *name)
{
	if (*dev)
		bad_arg("duplicate \"dev\"");
	if (!*name || strlen(name) >= IFNAMSIZ)
		bad_arg("invalid device name \"%s\"", shown(name));
	*dev = name;
}

/*
 * "[dev] DEV" and "help", common to every verb: true when argv[*i] was one
 * of them. A bare word is the device, as in ip and tc.
 */
static bool common_word(int *i, int argc, char **argv, const char **dev)
{
	const char *w = argv[*i];

	if (strcmp(w, "help") == 0) {
		usage(stdout);
		exit(0);
	}
	if (strcmp(w, "dev") == 0) {
		set_dev(dev, next_value(i, argc, argv));
		return true;
	}
	if (pfb_opt_type(w) || strcmp(w, "root") == 0 || strcmp(w, "parent") == 0 ||
	    strcmp(w, "handle") == 0 || strcmp(w, "file") == 0 ||
	    strcmp(w, "interval") == 0 || strcmp(w, "count") == 0 || *dev)
		return false;
	set_dev(dev, w);
	return true;
}

static int dev_index(const char *dev)
{
	unsigned int idx;

	if (!dev)
		bad_arg("missing DEV");
	idx = if_nametoindex(dev);
	if (!idx)
		bad_arg("cannot find device \"%s\"", shown(dev));
	return idx;
}

/* ---- netlink ---------------------------------------------------------------- */

static volatile sig_atomic_t stop;	/* watch: SIGINT or SIGTERM seen */
static struct mnl_socket *nl;
static unsigned int nl_portid, nl_seq;
static char nl_buf[MNL_SOCKET_DUMP_SIZE];
static char ext_msg[512];

static void nl_open(void)
{
	int one = 1;

	nl = mnl_socket_open(NETLINK_ROUTE);
	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
		die(EXIT_KERNEL, "netlink socket: %s", strerror(errno));
	nl_portid = mnl_socket_get_portid(nl);
	nl_seq = time(NULL);
	/* Old kernels lack these; then errors just come without a message. */
	mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &one, sizeof(one));
}

static int cb_err_attr(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;

	if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG &&
	    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
		tb[NLMSGERR_ATTR_MSG] = attr;
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
	if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) &&
	    mnl_nlmsg_size(hlen) <= nlh->nlmsg_len &&
	    mnl_attr_parse(nlh, hlen, cb_err_attr, tb) == MNL_CB_OK &&
	    tb[NLMSGERR_ATTR_MSG])
		snprintf(ext_msg, sizeof(ext_msg), "%s",
			 mnl_attr_get_str(tb[NLMSGERR_ATTR_MSG]));
	if (err->error == 0) {
		if (ext_msg[0])
			fprintf(stderr, "Warning: %s%s\n", ext_msg,
				ext_msg[strlen(ext_msg) - 1] == '.' ? "" : ".");
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

/*
 * One line, as tc prints it ("Error: MSG." or "RTNETLINK answers: ..."),
 * saying what to do where the kernel's words do not.
 */
static void __attribute__((noreturn)) kernel_failed(const char *dev)
{
	int e = errno;
	size_t n = strlen(ext_msg);

	if (e == EINTR && stop)		/* Ctrl-C in the middle of a dump */
		exit(0);
	if (e == ENOENT && strstr(ext_msg, "qdisc kind is unknown"))
		fprintf(stderr, "Error: the kernel has no %s qdisc: modprobe sch_pfifo_bulk.\n",
			PFB_KIND);
	else if (e == ENOENT && strcmp(verb, "change") == 0)
		fprintf(stderr, "Error: no qdisc to change on %s: use add or replace.\n",
			shown(dev));
	else if (e == EINVAL && strcmp(verb, "change") == 0 &&
		 strstr(ext_msg, "Invalid qdisc name"))
		fprintf(stderr, "Error: the qdisc on %s is not %s: use replace.\n",
			shown(dev), PFB_KIND);
	else if (n)
		fprintf(stderr, "Error: %s%s\n", ext_msg, ext_msg[n - 1] == '.' ? "" : ".");
	else
		fprintf(stderr, "RTNETLINK answers: %s%s\n", strerror(e),
			e == EPERM ? " (changing a qdisc needs CAP_NET_ADMIN)" : "");
	exit(EXIT_KERNEL);
}

/* ---- add, change, replace, del ------------------------------------------------ */

static int do_modify(int argc, char **argv)
{
	bool del = strcmp(verb, "del") == 0, has_parent = false, has_handle = false;
	bool has[TCA_PFIFO_BULK_MAX + 1] = {};
	uint32_t val[TCA_PFIFO_BULK_MAX + 1] = {};
	uint32_t parent = TC_H_ROOT, handle = 0;
	const char *dev = NULL, *v;
	struct nlmsghdr *nlh;
	struct tcmsg *tcm;
	struct nlattr *nest = NULL;
	int i, type, m = 0;

	for (i = 0; i < argc; i++) {
		const char *w = argv[i];

		if (common_word(&i, argc, argv, &dev))
			continue;
		if (strcmp(w, "root") == 0) {
			set_once(&has_parent, "root/parent");
			continue;
		}
		if (strcmp(w, "parent") == 0 || strcmp(w, "handle") == 0) {
			bool is_parent = w[0] == 'p';

			set_once(is_parent ? &has_parent : &has_handle,
				 is_parent ? "root/parent" : w);
			v = next_value(&i, argc, argv);
			if (parse_id(v, is_parent, is_parent ? &parent : &handle))
				bad_arg("invalid \"%s\": \"%s\" (%s)", w, shown(v),
					is_parent ? "root or MAJ:MIN in hex" : "MAJ: in hex");
			continue;
		}
		type = del ? 0 : pfb_opt_type(w);
		/* "add limt 5": the typo was taken for the device */
		if (!type && dev)
			dev_index(dev);
		if (!type)
			bad_arg("unknown argument \"%s\"; try \"bulkctl %s help\"",
				shown(w), verb);
		set_once(&has[type], w);
		v = next_value(&i, argc, argv);
		if (type == TCA_PFIFO_BULK_MODE)
			val[type] = m = pfb_mode_parse(v);
		if (type == TCA_PFIFO_BULK_MODE ? m < 0 :
		    type == TCA_PFIFO_BULK_BULK_BYTES ? parse_size(v, &val[type]) :
		    parse_u32(v, &val[type]))
			bad_arg("invalid \"%s\": \"%s\" (%s)", w, shown(v),
				pfb_opt_syntax[type]);
	}

	nlh = mnl_nlmsg_put_header(nl_buf);
	nlh->nlmsg_type = del ? RTM_DELQDISC : RTM_NEWQDISC;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	if (strcmp(verb, "add") == 0)
		nlh->nlmsg_flags |= NLM_F_CREATE | NLM_F_EXCL;
	else if (strcmp(verb, "replace") == 0)
		nlh->nlmsg_flags |= NLM_F_CREATE | NLM_F_REPLACE;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = dev_index(dev);
	tcm->tcm_parent = parent;
	tcm->tcm_handle = handle;
	/* On del the kind makes the kernel refuse to remove another qdisc. */
	mnl_attr_put_strz(nlh, TCA_KIND, PFB_KIND);

	/* Only what was given: "change" leaves the rest as it is. */
	for (type = TCA_PFIFO_BULK_LIMIT; type <= TCA_PFIFO_BULK_MAX; type++) {
		if (!has[type])
			continue;
		if (!nest)
			nest = mnl_attr_nest_start(nlh, TCA_OPTIONS);
		if (pfb_opt_is_u8(type))
			mnl_attr_put_u8(nlh, type, val[type]);
		else
			mnl_attr_put_u32(nlh, type, val[type]);
	}
	if (nest)
		mnl_attr_nest_end(nlh, nest);

	nl_open();
	if (nl_talk(nlh, NULL, NULL) < 0)
		kernel_failed(dev);
	return 0;
}

/* ---- reading a qdisc dump ------------------------------------------------------ */

struct qinfo {
	int ifindex;
	uint32_t handle, parent, refcnt;
	const char *kind;
	bool has_stats, has_basic, has_queue, has_xstats;
	uint64_t bytes, packets;
	struct gnet_stats_queue queue;
	struct pfb_qopt opt;
	struct pfb_xstats x;
};

struct attrs {
	const struct nlattr **tb;
	unsigned int max;
};

static int cb_attr(const struct nlattr *attr, void *data)
{
	const struct attrs *a = data;

	if (mnl_attr_get_type(attr) <= a->max)
		a->tb[mnl_attr_get_type(attr)] = attr;
	return MNL_CB_OK;
}

/* The attributes of @nest, or of @nlh after its tcmsg, into @tb[0..max]. */
static void parse_attrs(const struct nlmsghdr *nlh, const struct nlattr *nest,
			const struct nlattr **tb, unsigned int max)
{
	struct attrs a = { tb, max };

	if (nest)
		mnl_attr_parse_nested(nest, cb_attr, &a);
	else
		mnl_attr_parse(nlh, sizeof(struct tcmsg), cb_attr, &a);
}

static bool attr_len(const struct nlattr *a, size_t len)
{
	return a && mnl_attr_get_payload_len(a) == len;
}

static void copy_payload(void *dst, size_t size, const struct nlattr *a)
{
	size_t len = mnl_attr_get_payload_len(a);

	memset(dst, 0, size);
	memcpy(dst, mnl_attr_get_payload(a), len < size ? len : size);
}

/* One RTM_NEWQDISC of a pfifo_bulk into @q; false for anything else. */
static bool parse_qdisc(const struct nlmsghdr *nlh, struct qinfo *q)
{
	const struct nlattr *tb[TCA_MAX + 1] = {};
	const struct nlattr *o[TCA_PFIFO_BULK_MAX + 1] = {};
	const struct nlattr *st[TCA_STATS_MAX + 1] = {};
	const struct nlattr *x[TCA_PFIFO_BULK_XSTATS_MAX + 1] = {};
	const struct nlattr *h[TCA_PFIFO_BULK_HIST_MAX + 1] = {};
	const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);
	struct gnet_stats_basic basic;

	memset(q, 0, sizeof(*q));
	if (nlh->nlmsg_type != RTM_NEWQDISC ||
	    nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*tcm)))
		return false;
	q->ifindex = tcm->tcm_ifindex;
	q->handle = tcm->tcm_handle;
	q->parent = tcm->tcm_parent;
	q->refcnt = tcm->tcm_info;
	parse_attrs(nlh, NULL, tb, TCA_MAX);
	if (!tb[TCA_KIND] || mnl_attr_validate(tb[TCA_KIND], MNL_TYPE_NUL_STRING) ||
	    strcmp(mnl_attr_get_str(tb[TCA_KIND]), PFB_KIND) != 0)
		return false;
	q->kind = PFB_KIND;

	if (tb[TCA_OPTIONS]) {
		parse_attrs(NULL, tb[TCA_OPTIONS], o, TCA_PFIFO_BULK_MAX);
		pfb_read_qopt(&q->opt, (const void *const *)o);
	}
	if (!tb[TCA_STATS2])
		return true;
	q->has_stats = true;
	parse_attrs(NULL, tb[TCA_STATS2], st, TCA_STATS_MAX);
	if (st[TCA_STATS_BASIC]) {
		copy_payload(&basic, sizeof(basic), st[TCA_STATS_BASIC]);
		q->has_basic = true;
		q->bytes = basic.bytes;
		q->packets = basic.packets;
		/* As tc: the 64-bit count wins when the kernel sends one. */
		if (attr_len(st[TCA_STATS_PKT64], 8) && mnl_attr_get_u64(st[TCA_STATS_PKT64]))
			q->packets = mnl_attr_get_u64(st[TCA_STATS_PKT64]);
	}
	if (st[TCA_STATS_QUEUE]) {
		copy_payload(&q->queue, sizeof(q->queue), st[TCA_STATS_QUEUE]);
		q->has_queue = true;
	}
	if (st[TCA_STATS_APP]) {
		q->has_xstats = true;
		parse_attrs(NULL, st[TCA_STATS_APP], x, TCA_PFIFO_BULK_XSTATS_MAX);
		if (x[TCA_PFIFO_BULK_XSTATS_HIST])
			parse_attrs(NULL, x[TCA_PFIFO_BULK_XSTATS_HIST], h,
				    TCA_PFIFO_BULK_HIST_MAX);
		pfb_read_xstats(&q->x, (const void *const *)x,
				x[TCA_PFIFO_BULK_XSTATS_HIST] ? (const void *const *)h : NULL);
	}
	return true;
}

/* ---- show ---------------------------------------------------------------------- */

struct dump {
	int ifindex;		/* 0: every device */
	unsigned int count;
	void (*fn)(struct dump *d, const struct qinfo *q);
	void *priv;
};

/* "tc [-s] [-j] qdisc show [dev DEV]", line for line. */
static void print_qdisc(struct dump *d, const struct qinfo *q)
{
	char buf[32], ifname[IF_NAMESIZE];

	open_json_object(NULL);
	print_string(PRINT_ANY, "kind", "qdisc %s", q->kind);
	print_string(PRINT_ANY, "handle", " %s ", id_str(q->handle & TC_H_MAJ_MASK, buf, sizeof(buf)));
	if (!d->ifindex) {
		if (!if_indextoname(q->ifindex, ifname))
			snprintf(ifname, sizeof(ifname), "if%d", q->ifindex);
		print_string(PRINT_ANY, "dev", "dev %s ", ifname);
	}
	if (q->parent == TC_H_ROOT)
		print_bool(PRINT_ANY, "root", "root ", true);
	else if (q->parent)
		print_string(PRINT_ANY, "parent", "parent %s ", id_str(q->parent, buf, sizeof(buf)));
	if (q->refcnt != 1)
		print_uint(PRINT_ANY, "refcnt", "refcnt %u ", q->refcnt);
	open_json_object("options");
	pfb_print_qopt(&q->opt);
	close_json_object();
	print_nl();
	if (stats && q->has_stats) {
		if (q->has_basic) {
			print_u64(PRINT_ANY, "bytes", " Sent %" PRIu64 " bytes", q->bytes);
			print_u64(PRINT_ANY, "packets", " %" PRIu64 " pkt", q->packets);
		}
		if (q->has_queue) {
			print_uint(PRINT_ANY, "drops", " (dropped %u", q->queue.drops);
			print_uint(PRINT_ANY, "overlimits", ", overlimits %u", q->queue.overlimits);
			print_uint(PRINT_ANY, "requeues", " requeues %u) ", q->queue.requeues);
			print_nl();
			print_size(PRINT_ANY, "backlog", " backlog %s", q->queue.backlog);
			print_uint(PRINT_ANY, "qlen", " %up", q->queue.qlen);
			print_uint(PRINT_FP, NULL, " requeues %u", q->queue.requeues);
		}
		print_nl();
	}
	if (stats && q->has_xstats) {
		pfb_print_xstats(&q->x);
		print_nl();
	}
	close_json_object();
}

static int cb_qdisc(const struct nlmsghdr *nlh, void *data)
{
	struct dump *d = data;
	struct qinfo q;

	/* The kernel ignores tcm_ifindex in dumps, so filter here. */
	if (!parse_qdisc(nlh, &q) || (d->ifindex && q.ifindex != d->ifindex))
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
		kernel_failed(NULL);
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
		bad_arg("cannot read \"%s\": %s", shown(path), strerror(errno));
	len = fread(fbuf, 1, sizeof(fbuf), f);
	fclose(f);
	if (mnl_cb_run(fbuf, len, 0, 0, cb_qdisc, d) < 0)
		die(EXIT_KERNEL, "%s: bad message: %s", shown(path), strerror(errno));
}

static int do_show(int argc, char **argv)
{
	struct dump d = { .fn = print_qdisc };
	const char *dev = NULL, *file = NULL;
	int i;

	for (i = 0; i < argc; i++) {
		if (common_word(&i, argc, argv, &dev))
			continue;
		if (strcmp(argv[i], "file") != 0)
			bad_arg("unknown argument \"%s\"; try \"bulkctl show help\"",
				shown(argv[i]));
		if (file)
			bad_arg("duplicate \"file\"");
		file = next_value(&i, argc, argv);
	}
	if (dev)
		d.ifindex = dev_index(dev);

	open_json_array(NULL);
	if (file) {
		read_qdiscs(&d, file);
	} else {
		nl_open();
		dump_qdiscs(&d);
	}
	close_json_array();
	if (json)
		putchar('\n');
	if (dev && !d.count)
		die(EXIT_KERNEL, "no %s qdisc on %s", PFB_KIND, shown(dev));
	return 0;
}

/* ---- watch ------------------------------------------------------------------------ */

/*
 * The counters of one qdisc, or what they counted over an interval:
 * packets, drops, then the extended statistics by attribute.
 */
enum { S_PACKETS, S_DROPS, S_X, S_N = S_X + TCA_PFIFO_BULK_XSTATS_MAX + 1 };
#define S_XSTAT(name)	(S_X + TCA_PFIFO_BULK_XSTATS_##name)

struct sample {
	uint32_t handle, parent;
	uint64_t c[S_N];
};

struct samples {
	struct sample *s;
	size_t n, cap;
};

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void add_sample(struct dump *d, const struct qinfo *q)
{
	struct samples *ss = d->priv;
	struct sample *s;

	if (ss->n == ss->cap) {
		ss->cap = ss->cap ? 2 * ss->cap : 8;
		ss->s = realloc(ss->s, ss->cap * sizeof(*ss->s));
		if (!ss->s)
			die(EXIT_KERNEL, "out of memory");
	}
	s = &ss->s[ss->n++];
	s->handle = q->handle;
	s->parent = q->parent;
	s->c[S_PACKETS] = q->packets;
	s->c[S_DROPS] = q->queue.drops;
	memcpy(&s->c[S_X], q->x.v, sizeof(q->x.v));
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

static void print_rates(const char *name, const struct sample *d, double dt)
{
	static const char *const share_keys[] = {
		"end_bytes_pct", "end_pkts_pct", "end_budget_pct", "end_empty_pct",
	};
	uint64_t batches = d->c[S_XSTAT(BATCHES)];
	int i;

	print_string(PRINT_FP, NULL, "%-12s", name);
	print_float(PRINT_ANY, "pkts_per_sec", " %10.1f", d->c[S_PACKETS] / dt);
	print_float(PRINT_ANY, "batches_per_sec", " %10.1f", batches / dt);
	print_float(PRINT_ANY, "mean_batch", " %7.2f", batches ?
		    (double)d->c[S_XSTAT(BATCH_PKTS)] / batches : 0.0);
	print_float(PRINT_ANY, "drops_per_sec", " %9.1f", d->c[S_DROPS] / dt);
	for (i = 0; i < 4; i++)
		print_float(PRINT_ANY, share_keys[i], " %7.1f", batches ? 100.0 *
			    d->c[S_XSTAT(END_BYTES) + i] / batches : 0.0);
	print_float(PRINT_ANY, "bypass_pct", " %7.1f", d->c[S_PACKETS] ? 100.0 *
		    d->c[S_XSTAT(BYPASSED)] / d->c[S_PACKETS] : 0.0);
	print_nl();
}

/* One interval: a line per qdisc (the queues of an mq), then the total. */
static void report(const char *dev, const struct samples *then,
		   const struct samples *now, double dt)
{
	struct sample total = {}, d;
	const struct sample *prev;
	char h[16], p[16], name[40];
	size_t i, j, k;

	json_sep = false;
	open_json_object(NULL);
	print_string(PRINT_JSON, "dev", NULL, dev);
	print_float(PRINT_JSON, "interval", NULL, dt);
	open_json_array("qdiscs");
	for (i = 0; i < now->n; i++) {
		for (prev = NULL, j = 0; j < then->n && !prev; j++)
			if (then->s[j].handle == now->s[i].handle &&
			    then->s[j].parent == now->s[i].parent)
				prev = &then->s[j];
		delta(&d, &now->s[i], prev);
		for (k = 0; k < S_N; k++)
			total.c[k] += d.c[k];
		id_str(now->s[i].handle & TC_H_MAJ_MASK, h, sizeof(h));
		id_str(now->s[i].parent, p, sizeof(p));
		snprintf(name, sizeof(name), "%s %s", h, p);
		open_json_object(NULL);
		print_string(PRINT_JSON, "handle", NULL, h);
		print_string(PRINT_JSON, "parent", NULL, p);
		print_rates(name, &d, dt);
		close_json_object();
	}
	close_json_array();
	if (now->n > 1 || json)
		print_rates("total", &total, dt);
	close_json_object();
	if (json)
		putchar('\n');
	fflush(stdout);
}

static int do_watch(int argc, char **argv)
{
	struct dump d = { .fn = add_sample };
	struct samples a = {}, b = {}, t;
	struct timespec t0, t1, next;
	struct sigaction sa = { .sa_handler = on_signal };
	double interval = 1.0;
	const char *dev = NULL, *v;
	uint32_t count = 0, n;
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
			if (parse_u32(v, &count) || count < 1)
				bad_arg("invalid \"count\": \"%s\" (a number from 1)", shown(v));
		} else {
			bad_arg("unknown argument \"%s\"; try \"bulkctl watch help\"",
				shown(argv[i]));
		}
	}
	d.ifindex = dev_index(dev);

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

/* ---- main ------------------------------------------------------------------------- */

/* "-n NAME": run in the network namespace NAME, as "ip -n NAME". */
static void enter_netns(const char *name)
{
	char path[4096];
	int fd;

	if (!*name || strchr(name, '/'))
		bad_arg("invalid network namespace name \"%s\"", shown(name));
	snprintf(path, sizeof(path), "/var/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET) < 0)
		bad_arg("cannot enter network namespace \"%s\": %s", shown(name),
			strerror(errno));
	close(fd);
}

/* An option word as ip and tc take them: "-j", "-json", "--json" all match. */
static bool is_opt(const char *arg, const char *word)
{
	if (arg[0] != '-')
		return false;
	arg += arg[1] == '-' ? 2 : 1;
	return *arg && strncmp(word, arg, strlen(arg)) == 0;
}

int main(int argc, char **argv)
{
	static const char *const verbs[] = {
		"add", "change", "replace", "del", "delete", "show", "watch",
	};
	const char *netns = NULL;
	size_t i;

	for (argc--, argv++; argc > 0 && argv[0][0] == '-'; argc--, argv++) {
		if (is_opt(argv[0], "json")) {
			json = true;
		} else if (is_opt(argv[0], "stats")) {
			stats = true;
		} else if (is_opt(argv[0], "netns")) {
			if (argc < 2)
				bad_arg("missing value for \"%s\"", shown(argv[0]));
			netns = *++argv;
			argc--;
		} else if (is_opt(argv[0], "help")) {
			usage(stdout);
			return 0;
		} else if (is_opt(argv[0], "Version") || is_opt(argv[0], "version")) {
			printf("bulkctl %s\n", BULKCTL_VERSION);
			return 0;
		} else {
			bad_arg("unknown option \"%s\"; try \"bulkctl help\"", shown(argv[0]));
		}
	}
	if (argc < 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[0], "help") == 0) {
		usage(stdout);
		return 0;
	}
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strcmp(argv[0], verbs[i]) == 0)
			break;
	if (i == sizeof(verbs) / sizeof(verbs[0]))
		bad_arg("unknown command \"%s\"; try \"bulkctl help\"", shown(argv[0]));
	verb = i == 4 ? "del" : verbs[i];
	if (netns)
		enter_netns(netns);
	if (strcmp(verb, "show") == 0)
		return do_show(argc - 1, argv + 1);
	if (strcmp(verb, "watch") == 0) {
		stats = true;
		return do_watch(argc - 1, argv + 1);
	}
	return do_modify(argc - 1, argv + 1);
}
