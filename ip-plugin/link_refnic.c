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
 * ip exports its symbols (-Wl,-export-dynamic); the two structures below are
 * the plugin ABI of ip/ip_common.h, declared here because iproute2 installs
 * no headers.
 */
#include <stdio.h>
#include <string.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#define REFNIC_INFO_PEER 1	/* drivers/net/refnic/refnic.h */

struct iplink_req {
	struct nlmsghdr		n;
	struct ifinfomsg	i;
	char			buf[1024];
};

struct link_util {
	struct link_util	*next;
	const char		*id;
	int			maxattr;
	int			(*parse_opt)(struct link_util *, int, char **,
					     struct nlmsghdr *);
	void			(*print_opt)(struct link_util *, FILE *,
					     struct rtattr *[]);
	void			(*print_xstats)(struct link_util *, FILE *,
						struct rtattr *);
	void			(*print_help)(struct link_util *, int, char **,
					      FILE *);
	int			(*parse_ifla_xstats)(struct link_util *,
						     int, char **);
	int			(*print_ifla_xstats)(struct nlmsghdr *, void *);
};

/* from ip */
int iplink_parse(int argc, char **argv, struct iplink_req *req, char **type);
struct rtattr *addattr_nest(struct nlmsghdr *n, int maxlen, int type);
int addattr_nest_end(struct nlmsghdr *n, struct rtattr *nest);

static void refnic_print_help(struct link_util *lu, int argc, char **argv,
			      FILE *f)
{
	(void)lu;
	(void)argc;
	(void)argv;
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
