// SPDX-License-Identifier: GPL-2.0
/*
 * link_refnic.so: teaches ip(8) "type refnic [peer PEER-OPTIONS]".
 *
 *	IP_LIB_DIR=ip-plugin ip link add r0 type refnic peer name r1
 *
 * ip looks for link_<kind>.so in $IP_LIB_DIR (default /usr/lib/ip or
 * /usr/lib/<triplet>/ip) and calls <kind>_link_util.parse_opt with the
 * arguments after "type refnic", inside an open IFLA_INFO_DATA nest. The peer
 * options are ip's own link options (name, address, numtxqueues, netns, ...)
 * parsed by ip's exported iplink_parse() into a REFNIC_INFO_PEER nest that
 * starts with a struct ifinfomsg, the same layout veth uses.
 *
 * ip exports its symbols (-Wl,-export-dynamic). Built against the iproute2
 * source as the tc plugin is (tools/iproute2.mk): struct link_util, struct
 * iplink_req and iplink_parse() come from its ip/ip_common.h, the attribute
 * from our uapi header, linux/refnic.h.
 */
#include <stdio.h>
#include <string.h>
#include <linux/refnic.h>

#include "utils.h"
#include "ip_common.h"

static void refnic_print_help(struct link_util *lu, int argc, char **argv,
			      FILE *f)
{
	fprintf(f, "Usage: ip link <options> type refnic [peer <options>]\n"
		"To get <options> type 'ip link add help'\n");
}

static int refnic_parse_opt(struct link_util *lu, int argc, char **argv,
			    struct nlmsghdr *n)
{
	struct ifinfomsg *ifm = NLMSG_DATA(n), saved = *ifm, *peer_ifm;
	struct rtattr *data;
	char *type = NULL;
	int used;

	if (strcmp(argv[0], "peer")) {
		refnic_print_help(lu, argc, argv, stderr);
		return -1;
	}
	/* iplink_parse() writes the peer's flags and index into the request's
	 * ifinfomsg: let it, move them into the nest, restore ours.
	 */
	ifm->ifi_flags = 0;
	ifm->ifi_change = 0;
	ifm->ifi_index = 0;
	data = addattr_nest(n, sizeof(struct iplink_req), REFNIC_INFO_PEER);
	n->nlmsg_len += sizeof(struct ifinfomsg);
	used = iplink_parse(argc - 1, argv + 1, (struct iplink_req *)n, &type);
	if (used < 0)
		return used;
	if (type) {
		fprintf(stderr, "refnic: \"type\" is not a peer option\n");
		return -1;
	}
	peer_ifm = RTA_DATA(data);
	memset(peer_ifm, 0, sizeof(*peer_ifm));
	peer_ifm->ifi_index = ifm->ifi_index;
	peer_ifm->ifi_flags = ifm->ifi_flags;
	peer_ifm->ifi_change = ifm->ifi_change;
	ifm->ifi_flags = saved.ifi_flags;
	ifm->ifi_change = saved.ifi_change;
	ifm->ifi_index = saved.ifi_index;
	addattr_nest_end(n, data);
	return argc - 1 - used;
}

struct link_util refnic_link_util = {
	.id		= "refnic",
	.maxattr	= REFNIC_INFO_PEER,
	.parse_opt	= refnic_parse_opt,
	.print_help	= refnic_print_help,
};
