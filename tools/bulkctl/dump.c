// SPDX-License-Identifier: GPL-2.0
/*
 * Reading a qdisc dump with iproute2's code: from the kernel with
 * rtnl_dump_filter(), which prints the error a dump may end with as tc does,
 * or from saved messages with rtnl_from_file(), as "tc monitor file".
 */

#include <errno.h>
#include <string.h>
#include <libmnl/libmnl.h>

#include "bulkctl.h"

static int one_qdisc(struct nlmsghdr *n, void *arg)
{
	struct tcmsg *t = NLMSG_DATA(n);
	int len = n->nlmsg_len - NLMSG_LENGTH(sizeof(*t));
	struct rtattr *tb[TCA_MAX + 1], *kind;
	struct dump *d = arg;

	/* The kernel ignores tcm_ifindex in dumps, so filter here. */
	if (n->nlmsg_type != RTM_NEWQDISC || len < 0 ||
	    (d->ifindex && t->tcm_ifindex != d->ifindex))
		return 0;
	parse_rtattr_flags(tb, TCA_MAX, TCA_RTA(t), len, NLA_F_NESTED);
	/* the kind with its NUL, so that a short one is never read past */
	kind = tb[TCA_KIND];
	if (!kind || RTA_PAYLOAD(kind) != sizeof(PFB_KIND) ||
	    memcmp(RTA_DATA(kind), PFB_KIND, sizeof(PFB_KIND)))
		return 0;
	d->fn(d, t, tb);
	return 0;
}

/*
 * Whether iproute2 leaves unsaid the error a dump ended with: it prints
 * every error once (the kernel's message if there is one), but for an
 * NLMSG_DONE with ENOENT or EOPNOTSUPP and no message, which means "none"
 * to its other dumps.
 */
static int dump_error(struct nlmsghdr *n, void *arg)
{
	const struct nlattr *a;
	bool *unsaid = arg;

	*unsaid = n->nlmsg_type == NLMSG_DONE && (errno == ENOENT || errno == EOPNOTSUPP);
	if (*unsaid)
		mnl_attr_for_each(a, n, sizeof(int))
			if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG &&
			    *(const char *)mnl_attr_get_payload(a))
				*unsaid = false;
	return RTNL_LET_NLERR;
}

void dump_qdiscs(struct dump *d)
{
	static struct rtnl_handle rth = { .fd = -1 };
	bool unsaid = false;
	struct {
		struct nlmsghdr n;
		struct tcmsg t;
	} req = {
		.n.nlmsg_type = RTM_GETQDISC,
		.n.nlmsg_len = NLMSG_LENGTH(sizeof(struct tcmsg)),
		.t = { .tcm_family = AF_UNSPEC, .tcm_ifindex = d->ifindex },
	};

	if (rth.fd < 0 && rtnl_open(&rth, 0) < 0)
		quit(EXIT_KERNEL);	/* it said why */
	/* one iovec, as tc: what selftests/pfb_nlshim.c answers */
	if (rtnl_dump_request_n(&rth, &req.n) < 0)
		die(EXIT_KERNEL, "cannot send the dump request: %s", strerror(errno));
	if (rtnl_dump_filter_errhndlr(&rth, one_qdisc, d, dump_error, &unsaid) < 0) {
		if (unsaid)
			perror("RTNETLINK answers");
		quit(EXIT_KERNEL);
	}
}

static int from_file(struct rtnl_ctrl_data *ctrl, struct nlmsghdr *n, void *d)
{
	return one_qdisc(n, d);
}

/* Messages saved from a dump: nlmsghdr and payload, one after the other. */
void read_qdiscs(struct dump *d, const char *path)
{
	FILE *f = fopen(path, "r");

	if (!f)
		bad_arg("cannot read \"%s\": %s", shown(path), strerror(errno));
	if (rtnl_from_file(f, from_file, d) < 0)
		quit(EXIT_KERNEL);	/* it said why */
	fclose(f);
}
