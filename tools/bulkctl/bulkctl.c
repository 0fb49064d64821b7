// SPDX-License-Identifier: GPL-2.0
/*
 * bulkctl - configure and watch pfifo_bulk qdiscs over rtnetlink (libmnl).
 *
 * What it adds to "tc ... pfifo_bulk": it needs no tc plugin, and "watch"
 * prints batch rates per qdisc. Everything else is tc's: the grammar (global
 * options before the verb, an optional "dev"), and the output of
 * "tc [-s] [-j] qdisc show", because it is made by tc's own code: iproute2's
 * library (print_*(), the JSON writer, get_size(), get_time(),
 * get_tc_classid(), print_tcstats_attr(), ...) is compiled from the iproute2
 * source at build time (Makefile), and the options and statistics print
 * through the printers the tc plugin uses (tools/include/pfifo_bulk_user.h).
 * What is ours: the netlink requests and their errors in one line with the
 * kernel's extended ack and a hint where it helps, and watch. Ranges are the
 * kernel's: its message names the option and the range.
 *
 * Exit status: 0 success, 1 bad arguments or unknown device, 2 the kernel
 * refused, or there is no pfifo_bulk to watch.
 */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <libmnl/libmnl.h>

#include "utils.h"
#include "tc_util.h"
#include "ll_map.h"
#include "namespace.h"
#include "pfifo_bulk_user.h"

#ifndef BULKCTL_VERSION
#define BULKCTL_VERSION "1.0"
#endif

/* libmnl 1.0.4 has no MNL_SOCKET_DUMP_SIZE; dumps need more than a page. */
#ifndef MNL_SOCKET_DUMP_SIZE
#define MNL_SOCKET_DUMP_SIZE 32768
#endif

enum { EXIT_USAGE = 1, EXIT_KERNEL = 2 };

/*
 * The globals iproute2's library reads, which tc.c defines; weak, as some
 * iproute2 versions define some of them in lib/ (use_iec: utils.c in 6.15).
 */
#define WEAK __attribute__((weak))
WEAK int show_stats, show_details, show_raw, show_graph, oneline, brief;
WEAK int json, use_iec, numeric, timestamp, batch_mode, force;
WEAK bool use_names;

static const char *verb = "";

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: bulkctl [ OPTIONS ] { add | change | replace } [ dev ] DEV\n"
		"               [ root | parent ID ] [ handle ID ] [ limit PACKETS ]\n"
		"               [ bulk_bytes SIZE ] [ bulk_pkts PACKETS ] [ mode auto|bql|nobql ]\n"
		"               [ coalesce_usecs TIME ] [ coalesce_pkts PACKETS ]\n"
		"       bulkctl [ OPTIONS ] delete [ dev ] DEV [ root | parent ID ] [ handle ID ]\n"
		"       bulkctl [ OPTIONS ] show [ [ dev ] DEV ] [ file FILE ]\n"
		"       bulkctl [ OPTIONS ] watch [ dev ] DEV [ interval SECONDS ] [ count N ]\n"
		"       bulkctl [ OPTIONS ] -b[atch] FILE\n"
		"       bulkctl { help | -h | -V }\n"
		"OPTIONS := { -s[tats] | -j[son] | -p[retty] | -n[etns] NAME | -h[elp] | -V[ersion] }\n"
		"ID: as tc's (root, none, 1:, 1:2, :2); PACKETS: any base (0x400);\n"
		"SIZE: tc's (1500, 64k, 1m; 0 = no cap); TIME: tc's (800us, 1ms; a number is us).\n"
		"The kernel checks the ranges.\n");
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

	if (is_json_context())	/* a JSON array stays whole */
		delete_json_obj();
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

/* ---- arguments, tc's rules --------------------------------------------------- */

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
	static const char *const words[] = {
		"root", "parent", "handle", "file", "interval", "count",
	};
	const char *w = argv[*i];
	size_t k;

	if (strcmp(w, "help") == 0) {
		usage(stdout);
		exit(0);
	}
	if (strcmp(w, "dev") == 0) {
		set_dev(dev, next_value(i, argc, argv));
		return true;
	}
	for (k = 0; k < ARRAY_SIZE(words); k++)
		if (strcmp(w, words[k]) == 0)
			return false;
	if (pfb_opt_type(w) || *dev)
		return false;
	set_dev(dev, w);
	return true;
}

static int dev_index(const char *dev)
{
	int idx;

	if (!dev)
		bad_arg("missing DEV");
	idx = ll_name_to_index(dev);
	if (!idx)
		bad_arg("cannot find device \"%s\"", shown(dev));
	return idx;
}

/* ---- netlink --------------------------------------------------------------------- */

static volatile sig_atomic_t stop;	/* watch: SIGINT or SIGTERM seen */
static struct mnl_socket *nl;
static unsigned int nl_portid, nl_seq;
static char nl_buf[MNL_SOCKET_DUMP_SIZE];
static char ext_msg[512];

static void nl_open(void)
{
	int one = 1;

	if (nl)
		return;
	nl = mnl_socket_open(NETLINK_ROUTE);
	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
		die(EXIT_KERNEL, "netlink socket: %s", strerror(errno));
	nl_portid = mnl_socket_get_portid(nl);
	nl_seq = time(NULL);
	/* Old kernels lack these; then errors just come without a message. */
	mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &one, sizeof(one));
}

/* iproute2's reader of the extended ack hands the kernel's message here. */
static int save_ext_msg(const char *msg, uint32_t off, const struct nlmsghdr *inner)
{
	snprintf(ext_msg, sizeof(ext_msg), "%s", msg ? msg : "");
	return 0;
}

/*
 * The error of an ACK (NLMSG_ERROR) or of the end of a dump (NLMSG_DONE):
 * libmnl's default handlers drop the extended ack, and the error of a dump.
 */
static int nl_status(int error)
{
	if (error == 0) {
		if (ext_msg[0])
			fprintf(stderr, "Warning: %s%s\n", ext_msg,
				ext_msg[strlen(ext_msg) - 1] == '.' ? "" : ".");
		return MNL_CB_STOP;
	}
	errno = -error;
	return MNL_CB_ERROR;
}

static int cb_error(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*err))) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	nl_dump_ext_ack(nlh, save_ext_msg);
	return nl_status(err->error);
}

/*
 * A dump's end: its payload is an int, then the extended ack, which
 * iproute2 prints itself ("Error: MSG.").
 */
static bool done_printed;

static int cb_done(const struct nlmsghdr *nlh, void *data)
{
	int error = 0;

	if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(error))
		memcpy(&error, mnl_nlmsg_get_payload(nlh), sizeof(error));
	if (error && nlh->nlmsg_flags & NLM_F_ACK_TLVS)
		done_printed = nl_dump_ext_ack_done(nlh, sizeof(error), error);
	return nl_status(error);
}

static int run_msgs(const void *buf, size_t len, unsigned int seq,
		    unsigned int portid, mnl_cb_t cb, void *data)
{
	mnl_cb_t ctl[NLMSG_MIN_TYPE] = { [NLMSG_ERROR] = cb_error, [NLMSG_DONE] = cb_done };

	return mnl_cb_run2(buf, len, seq, portid, cb, data, ctl,
			   MNL_ARRAY_SIZE(ctl));
}

/* Send @nlh, run @cb on the answers until the ACK or the end of the dump. */
static int nl_talk(struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
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
		ret = run_msgs(nl_buf, n, seq, nl_portid, cb, data);
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

	if (is_json_context())
		delete_json_obj();
	if (e == EINTR && stop)		/* Ctrl-C in the middle of a dump */
		exit(0);
	if (done_printed)
		exit(EXIT_KERNEL);
	if (e == ENOENT && strstr(ext_msg, "qdisc kind is unknown"))
		fprintf(stderr, "Error: the kernel has no %s qdisc: modprobe sch_pfifo_bulk.\n",
			PFB_KIND);
	else if (e == ENOENT && strcmp(verb, "change") == 0 && strstr(ext_msg, "NLM_F_CREATE"))
		fprintf(stderr, "Error: no qdisc to change on %s (the kernel changes no default one, handle 0): use add or replace.\n",
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

/* ---- add, change, replace, delete ------------------------------------------------ */

static int do_modify(int argc, char **argv)
{
	bool del = strcmp(verb, "delete") == 0, has_parent = false, has_handle = false;
	bool has[TCA_PFIFO_BULK_MAX + 1] = {};
	__u32 val[TCA_PFIFO_BULK_MAX + 1] = {};
	__u32 parent = TC_H_ROOT, handle = 0;
	const char *dev = NULL, *v;
	struct nlattr *nest = NULL;
	struct nlmsghdr *nlh;
	struct tcmsg *tcm;
	int i, type;

	for (i = 0; i < argc; i++) {
		const char *w = argv[i];

		if (common_word(&i, argc, argv, &dev))
			continue;
		if (strcmp(w, "root") == 0) {
			set_once(&has_parent, "root/parent");
			continue;
		}
		if (strcmp(w, "parent") == 0) {
			set_once(&has_parent, "root/parent");
			v = next_value(&i, argc, argv);
			if (get_tc_classid(&parent, v))
				bad_arg("invalid \"parent\": \"%s\" (root, none, MAJ:MIN or :MIN in hex)",
					shown(v));
			continue;
		}
		if (strcmp(w, "handle") == 0) {
			set_once(&has_handle, w);
			v = next_value(&i, argc, argv);
			if (get_qdisc_handle(&handle, v))
				bad_arg("invalid \"handle\": \"%s\" (MAJ: in hex, or none)", shown(v));
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
		if (pfb_opt_parse(type, v, &val[type]))
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
	/* On delete the kind makes the kernel refuse to remove another qdisc. */
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

/* ---- reading a qdisc dump --------------------------------------------------------- */

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

static void read_opts(const struct nlattr *nest, struct pfb_qopt *o)
{
	const struct nlattr *tb[TCA_PFIFO_BULK_MAX + 1];
	struct policy p = { tb, TCA_PFIFO_BULK_MAX, T_OPTS };

	memset(o, 0, sizeof(*o));
	if (!nest)
		return;
	parse_attrs(NULL, nest, &p);
	pfb_read_qopt(o, (const void *const *)tb);
}

static void read_xstats(const struct nlattr *nest, struct pfb_xstats *x)
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

/* ---- show ---------------------------------------------------------------------- */

struct dump {
	int ifindex;		/* 0: every device */
	void (*fn)(struct dump *d, const struct nlmsghdr *nlh,
		   const struct nlattr **tb);
	void *priv;
	unsigned int count;
};

/*
 * "tc [-s] [-j] qdisc show [dev DEV]", line for line: tc's print_qdisc()
 * (tc/tc_qdisc.c) for one pfifo_bulk, with tc's own helpers.
 */
static void print_qdisc(struct dump *d, const struct nlmsghdr *nlh,
			const struct nlattr **tb)
{
	const struct tcmsg *t = mnl_nlmsg_get_payload(nlh);
	struct rtattr *xstats = NULL;
	struct pfb_xstats x;
	struct pfb_qopt o;
	char b[SPRINT_BSIZE];

	open_json_object(NULL);
	print_string(PRINT_ANY, "kind", "qdisc %s", PFB_KIND);
	snprintf(b, sizeof(b), "%x:", t->tcm_handle >> 16);
	print_string(PRINT_ANY, "handle", " %s", b);
	print_string(PRINT_FP, NULL, " ", NULL);
	if (!d->ifindex)
		print_devname(PRINT_ANY, t->tcm_ifindex);
	if (t->tcm_parent == TC_H_ROOT) {
		print_bool(PRINT_ANY, "root", "root ", true);
	} else if (t->tcm_parent) {
		print_tc_classid(b, sizeof(b), t->tcm_parent);
		print_string(PRINT_ANY, "parent", "parent %s ", b);
	}
	if (t->tcm_info != 1)
		print_uint(PRINT_ANY, "refcnt", "refcnt %u ", t->tcm_info);
	open_json_object("options");
	read_opts(tb[TCA_OPTIONS], &o);
	pfb_print_qopt(&o);
	close_json_object();
	print_nl();
	if (show_stats && (tb[TCA_STATS] || tb[TCA_STATS2] || tb[TCA_XSTATS])) {
		/* struct nlattr and struct rtattr are the same header */
		print_tcstats_attr(stdout, (struct rtattr **)tb, " ", &xstats);
		print_nl();
		if (xstats) {
			read_xstats((const struct nlattr *)xstats, &x);
			pfb_print_xstats(&x);
			print_nl();
		}
	}
	close_json_object();
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
 * format "tc monitor file" reads), read whole, instead of asking the kernel.
 */
static void read_qdiscs(struct dump *d, const char *path)
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

	/* As tc: nothing to show is no error, and JSON is then "[]". */
	new_json_obj(json);
	if (file) {
		read_qdiscs(&d, file);
	} else {
		nl_open();
		dump_qdiscs(&d);
	}
	delete_json_obj();
	fflush(stdout);
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
	const struct nlattr *st[TCA_STATS_MAX + 1] = {};
	struct policy p = { st, TCA_STATS_MAX, T_STATS };
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
	if (tb[TCA_STATS2])
		parse_attrs(NULL, tb[TCA_STATS2], &p);
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

static int do_watch(int argc, char **argv)
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

/* ---- main ------------------------------------------------------------------------- */

static int do_help(int argc, char **argv)
{
	usage(stdout);
	return 0;
}

/* The verbs, tried in this order with tc's matches(): "d" is delete. */
static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
} cmds[] = {
	{ "add", do_modify }, { "change", do_modify }, { "replace", do_modify },
	{ "delete", do_modify }, { "show", do_show }, { "list", do_show },
	{ "watch", do_watch }, { "help", do_help },
};

static int do_cmd(int argc, char **argv, void *data)
{
	const struct cmd *c;

	verb = "";		/* -batch: the previous line's is done */
	for (c = cmds; c < cmds + ARRAY_SIZE(cmds); c++) {
		if (matches(argv[0], c->name) == 0) {
			verb = c->name;
			return c->fn(argc - 1, argv + 1);
		}
	}
	bad_arg("unknown command \"%s\"; try \"bulkctl help\"", shown(argv[0]));
}

int main(int argc, char **argv)
{
	const char *batch = NULL;
	char *netns = NULL;

	for (argc--, argv++; argc > 0 && argv[0][0] == '-'; argc--, argv++) {
		const char *opt = argv[0] + (argv[0][1] == '-');	/* --json */

		if (matches(opt, "-json") == 0) {
			json = 1;
		} else if (matches(opt, "-pretty") == 0) {
			pretty = 1;
		} else if (matches(opt, "-stats") == 0 ||
			   matches(opt, "-statistics") == 0) {
			show_stats = 1;
		} else if (matches(opt, "-netns") == 0) {
			if (argc < 2)
				bad_arg("missing value for \"%s\"", shown(argv[0]));
			netns = *++argv;
			argc--;
		} else if (matches(opt, "-batch") == 0) {
			if (argc < 2)
				bad_arg("missing value for \"%s\"", shown(argv[0]));
			batch = *++argv;
			argc--;
		} else if (matches(opt, "-help") == 0) {
			usage(stdout);
			return 0;
		} else if (matches(opt, "-Version") == 0 || matches(opt, "-version") == 0) {
			printf("bulkctl %s\n", BULKCTL_VERSION);
			return 0;
		} else {
			bad_arg("unknown option \"%s\"; try \"bulkctl help\"", shown(argv[0]));
		}
	}
	if (netns && (!*netns || strchr(netns, '/') || !strcmp(netns, ".") ||
		      !strcmp(netns, "..")))
		bad_arg("invalid network namespace name \"%s\"", shown(netns));
	if (netns && netns_switch(netns))	/* it says why */
		return EXIT_USAGE;
	/* One command per line, as tc -batch; the first to fail ends it. */
	if (batch)
		return do_batch(batch, false, do_cmd, NULL);
	if (argc < 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	return do_cmd(argc, argv, NULL);
}
