// SPDX-License-Identifier: GPL-2.0
/*
 * pfb_bursts: short bursts of frames through a device's qdisc from several
 * CPUs at once, each round ending in quiescence, and whether every frame of
 * a round leaves the device with nothing sent after it.
 *
 *	pfb_bursts DEV ROUNDS BURST WAIT_SECS
 *
 * One sender thread per CPU the process may run on, pinned to it, with its
 * own AF_PACKET socket (frames take dev_queue_xmit(), so the qdisc). In
 * every round all senders start together, each sends BURST 60-byte frames
 * back to back, and then nothing more is sent until the device's sysfs
 * counters (tx_packets + tx_dropped) have grown by every frame the senders
 * handed over, or WAIT_SECS passed. Only those counters are read: no
 * netlink dump, nothing that could run the qdisc. Stops at the first round
 * whose frames did not all leave. Prints one line:
 *
 *	rounds R of N, offered O, left L, refused F, stuck S, cpus C
 *
 * (stuck: frames of the last round still missing; refused: sends that
 * failed, ENOBUFS from a full queue). Exits 0 when every round drained,
 * 1 when one did not, 2 on a setup error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CPUS	64

struct sender {
	pthread_t tid;
	int cpu;
	int fd;
	unsigned long sent;	/* this round */
	unsigned long refused;	/* this round */
};

static const char *dev;
static unsigned long rounds, burst;
static pthread_barrier_t start, done;
static volatile int quit;
static unsigned char frame[60];

static void die(const char *what)
{
	fprintf(stderr, "pfb_bursts: %s: %s\n", what, strerror(errno));
	exit(2);
}

static unsigned long long stat_read(const char *name)
{
	char path[256];
	unsigned long long v;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/%s",
		 dev, name);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%llu", &v) != 1)
		die(path);
	fclose(f);
	return v;
}

static unsigned long long gone(void)
{
	return stat_read("tx_packets") + stat_read("tx_dropped");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *send_bursts(void *arg)
{
	struct sender *s = arg;
	unsigned long i;

	for (;;) {
		pthread_barrier_wait(&start);
		if (quit)
			return NULL;
		s->sent = 0;
		s->refused = 0;
		for (i = 0; i < burst; i++) {
			if (send(s->fd, frame, sizeof(frame), 0) == sizeof(frame))
				s->sent++;
			else
				s->refused++;
		}
		pthread_barrier_wait(&done);
	}
}

static int open_socket(int ifindex)
{
	struct sockaddr_ll sa = {
		.sll_family = AF_PACKET,
		.sll_ifindex = ifindex,
	};
	int fd = socket(AF_PACKET, SOCK_RAW, 0);

	if (fd < 0)
		die("socket");
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		die("bind");
	return fd;
}

int main(int argc, char **argv)
{
	unsigned long long base, want, left = 0, offered = 0, refused = 0;
	struct sender senders[MAX_CPUS];
	unsigned long r, stuck = 0;
	int ifindex, n = 0, cpu, i;
	double wait_secs, end;
	cpu_set_t cpus;

	if (argc != 5) {
		fprintf(stderr, "usage: pfb_bursts DEV ROUNDS BURST WAIT_SECS\n");
		return 2;
	}
	dev = argv[1];
	rounds = strtoul(argv[2], NULL, 0);
	burst = strtoul(argv[3], NULL, 0);
	wait_secs = atof(argv[4]);
	ifindex = if_nametoindex(dev);
	if (!ifindex)
		die(dev);
	/* broadcast, from a local address, an experimental ethertype */
	memset(frame, 0xff, 6);
	memcpy(frame + 6, "\x02\x00\x00\x00\x00\x01\x88\xb5", 8);

	if (sched_getaffinity(0, sizeof(cpus), &cpus))
		die("sched_getaffinity");
	for (cpu = 0; cpu < CPU_SETSIZE && n < MAX_CPUS; cpu++) {
		if (CPU_ISSET(cpu, &cpus))
			senders[n++] = (struct sender){ .cpu = cpu };
	}
	if (pthread_barrier_init(&start, NULL, n + 1) ||
	    pthread_barrier_init(&done, NULL, n + 1))
		die("pthread_barrier_init");
	for (i = 0; i < n; i++) {
		cpu_set_t one;
		pthread_attr_t attr;

		senders[i].fd = open_socket(ifindex);
		CPU_ZERO(&one);
		CPU_SET(senders[i].cpu, &one);
		pthread_attr_init(&attr);
		pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
		errno = pthread_create(&senders[i].tid, &attr, send_bursts,
				       &senders[i]);
		if (errno)
			die("pthread_create");
		pthread_attr_destroy(&attr);
	}

	base = gone();
	for (r = 0; r < rounds; r++) {
		pthread_barrier_wait(&start);
		pthread_barrier_wait(&done);
		for (i = 0; i < n; i++) {
			offered += senders[i].sent;
			refused += senders[i].refused;
		}
		/* quiescence: nothing more is sent until this round left */
		want = base + offered;
		end = now() + wait_secs;
		while ((left = gone()) < want && now() < end)
			usleep(200);
		if (left < want) {
			stuck = want - left;
			r++;
			break;
		}
	}
	quit = 1;
	pthread_barrier_wait(&start);
	for (i = 0; i < n; i++)
		pthread_join(senders[i].tid, NULL);
	printf("rounds %lu of %lu, offered %llu, left %llu, refused %llu, stuck %lu, cpus %d\n",
	       r, rounds, offered, left - base, refused, stuck, n);
	return stuck ? 1 : 0;
}
