/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * refnic: the reference NIC's link attributes. IFLA_INFO_DATA of a refnic
 * link, as veth's (linux/veth.h): "ip link add A type refnic peer name B"
 * sends the peer as a REFNIC_INFO_PEER nest that starts with a struct
 * ifinfomsg, followed by the peer's IFLA_* attributes.
 */
#ifndef _UAPI_LINUX_REFNIC_H
#define _UAPI_LINUX_REFNIC_H

enum {
	REFNIC_INFO_UNSPEC,
	REFNIC_INFO_PEER,	/* struct ifinfomsg followed by IFLA_* */
	__REFNIC_INFO_MAX,
#define REFNIC_INFO_MAX		(__REFNIC_INFO_MAX - 1)
};

#endif /* _UAPI_LINUX_REFNIC_H */
