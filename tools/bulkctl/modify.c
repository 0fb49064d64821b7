// SPDX-License-Identifier: GPL-2.0
/*
 * add, change, replace, delete: one request, and the kernel's answer. A
 * refusal prints in one line as tc prints it ("Error: MSG." from the
 * extended ack, "RTNETLINK answers: ERROR" without one), or says what to do
 * where the kernel's words do not. iproute2's rtnl_talk() prints the error
 * itself, before a hint could take its place: hence libmnl here, with
 * iproute2's helpers for the socket and the extended ack.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <libmnl/libmnl.h>

#include "mnl_utils.h"
#include "bulkctl.h"

static char ext_msg[512];

/* iproute2's reader of the extended ack hands the kernel's message here. */
static int save_ext_msg(const char *msg, uint32_t off, const struct nlmsghdr *inner)
{
	snprintf(ext_msg, sizeof(ext_msg), "%s", msg ? msg : "");
	return 0;
}

/* The ACK: on success the kernel's warning, if any; a refusal ends bulkctl. */
static int cb_ack(const struct nlmsghdr *nlh, void *dev)
{
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
	bool change = strcmp(verb, "change") == 0;
	int e;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*err)))
		die(EXIT_KERNEL, "truncated netlink answer");
	e = -err->error;
	if (!e) {
		nl_dump_ext_ack(nlh, NULL);	/* "Warning: MSG.", as tc */
		return MNL_CB_STOP;
	}
	nl_dump_ext_ack(nlh, save_ext_msg);
	if (e == ENOENT && strstr(ext_msg, "qdisc kind is unknown"))
		fprintf(stderr, "Error: the kernel has no %s qdisc: modprobe sch_pfifo_bulk.\n",
			PFB_KIND);
	else if (e == ENOENT && change && strstr(ext_msg, "NLM_F_CREATE"))
		fprintf(stderr, "Error: no qdisc to change on %s (the kernel changes no default one, handle 0): use add or replace.\n",
			shown(dev));
	else if (e == EINVAL && change && strstr(ext_msg, "Invalid qdisc name"))
		fprintf(stderr, "Error: the qdisc on %s is not %s: use replace.\n",
			shown(dev), PFB_KIND);
	else if (!nl_dump_ext_ack(nlh, NULL))	/* it printed "Error: MSG." */
		fprintf(stderr, "RTNETLINK answers: %s%s\n", strerror(e),
			e == EPERM ? " (changing a qdisc needs CAP_NET_ADMIN)" : "");
	exit(EXIT_KERNEL);
}

int do_modify(const struct args *a)
{
	__u16 flags = !strcmp(verb, "add") ? NLM_F_CREATE | NLM_F_EXCL :
		      !strcmp(verb, "replace") ? NLM_F_CREATE | NLM_F_REPLACE : 0;
	struct tcmsg tcm = {
		.tcm_family = AF_UNSPEC, .tcm_ifindex = a->ifindex,
		.tcm_parent = a->parent, .tcm_handle = a->handle,
	};
	mnl_cb_t ctl[NLMSG_MIN_TYPE] = { [NLMSG_ERROR] = cb_ack };
	static struct mnl_socket *nl;
	char buf[8192] = {};	/* zeroed: addattr*() leave the padding as it is */
	struct nlmsghdr *nlh;
	unsigned int seq;
	int ret;

	nlh = mnlu_msg_prepare(buf, strcmp(verb, "delete") ? RTM_NEWQDISC : RTM_DELQDISC,
			       NLM_F_REQUEST | NLM_F_ACK | flags, &tcm, sizeof(tcm));
	/* On delete the kind makes the kernel refuse to remove another qdisc. */
	addattrstrz(nlh, sizeof(buf), TCA_KIND, PFB_KIND);
	pfb_add_opts(nlh, sizeof(buf), a->has, a->val);

	seq = nlh->nlmsg_seq;
	if (!nl)
		nl = mnlu_socket_open(NETLINK_ROUTE);
	if (!nl || mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		die(EXIT_KERNEL, "netlink: %s", strerror(errno));
	do {
		ret = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (ret > 0)
			ret = mnl_cb_run2(buf, ret, seq, mnl_socket_get_portid(nl), NULL,
					  (void *)a->dev, ctl, MNL_ARRAY_SIZE(ctl));
	} while (ret > MNL_CB_STOP);
	if (ret < 0)
		die(EXIT_KERNEL, "netlink: %s", strerror(errno));
	return 0;
}
