// SPDX-License-Identifier: GPL-2.0
/*
 * pfb_load: UDP loads with sequence numbers, for the selftests and the
 * benchmark. Every mode prints one JSON object on stdout when it ends.
 *
 *	pfb_load stream -d ADDR -p PORT [-s SIZE] [-t SECS | -n COUNT]
 *		send numbered datagrams as fast as the socket takes them
 *	pfb_load sink -p PORT [-t SECS] [-i IDLE_MS]
 *		count them and check their order: received, lost, reordered,
 *		duplicated (ends after SECS, or IDLE_MS without a datagram once
 *		the first one arrived, or on SIGTERM or SIGINT)
 *	pfb_load echo -p PORT [-t SECS]
 *		answer every datagram with itself
 *	pfb_load rr -d ADDR -p PORT [-s SIZE] [-t SECS | -n COUNT]
 *		one request in flight at a time; round-trip percentiles in us
 *	pfb_load tcpstream -d ADDR -p PORT [-s SIZE] [-t SECS | -n COUNT]
 *		one TCP connection, writes of SIZE bytes as fast as it takes
 *		them (netperf TCP_STREAM); COUNT counts writes
 *	pfb_load tcpsink -p PORT [-t SECS] [-i IDLE_MS]
 *		accept any number of connections and count the bytes they
 *		bring (ends as sink does, or once every connection closed)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZE	65000

struct opts {
	const char *addr;
	int port;
	size_t size;
	double secs;
	unsigned long count;
	int idle_ms;
};

static unsigned char buf[MAX_SIZE];
static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "pfb_load: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int udp_socket(const struct opts *o, bool bind_port, struct sockaddr_in *peer)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0)
		die("socket");
	sa.sin_port = htons(o->port);
	if (bind_port) {
		sa.sin_addr.s_addr = htonl(INADDR_ANY);
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			die("bind");
	}
	if (peer) {
		*peer = sa;
		if (!o->addr || inet_pton(AF_INET, o->addr, &peer->sin_addr) != 1) {
			fprintf(stderr, "pfb_load: -d needs an IPv4 address\n");
			exit(2);
		}
		if (connect(fd, (struct sockaddr *)peer, sizeof(*peer)) < 0)
			die("connect");
	}
	return fd;
}

static bool more(const struct opts *o, double start, unsigned long done)
{
	if (o->count)
		return done < o->count;
	return now() - start < o->secs;
}

static int stream(const struct opts *o)
{
	struct sockaddr_in peer;
	int fd = udp_socket(o, false, &peer);
	unsigned long sent = 0, errors = 0;
	double start = now();
	uint64_t seq;

	while (more(o, start, sent)) {
		seq = sent;
		memcpy(buf, &seq, sizeof(seq));
		if (send(fd, buf, o->size, 0) < 0) {
			/* ENOBUFS: the qdisc dropped it; it still took a number */
			if (errno != ENOBUFS && errno != ECONNREFUSED)
				die("send");
			errors++;
		}
		sent++;
	}
	printf("{\"sent\": %lu, \"send_errors\": %lu, \"seconds\": %.3f}\n",
	       sent, errors, now() - start);
	return 0;
}

static int sink(const struct opts *o)
{
	int fd = udp_socket(o, true, NULL);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	unsigned long received = 0, reordered = 0, duplicated = 0;
	uint64_t next = 0, seq, highest = 0;
	struct sigaction sa = { .sa_handler = on_stop };	/* no SA_RESTART */
	double start = now(), last = start;
	bool any = false;

	/* A stop ends the count and still reports. Short polls: a stop that
	 * comes before the poll, the end and the idle time are all seen
	 * within 0.1 s.
	 */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	while (!stop && (o->secs <= 0 || now() - start < o->secs)) {
		int r = poll(&pfd, 1, 100);
		ssize_t n;

		if (r == 0 && any && (now() - last) * 1000 >= o->idle_ms)
			break;
		if (r <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < (ssize_t)sizeof(seq))
			continue;
		memcpy(&seq, buf, sizeof(seq));
		received++;
		any = true;
		last = now();
		if (seq == next) {
			next++;
		} else if (seq > next) {
			next = seq + 1;		/* a gap: lost, or late */
		} else if (seq < next) {
			/* older than one already seen: late or a copy */
			if (seq <= highest)
				reordered++;
		}
		if (seq > highest)
			highest = seq;
		if (received > highest + 1)
			duplicated = received - (highest + 1);
	}
	printf("{\"received\": %lu, \"highest\": %llu, \"lost\": %llu, \"reordered\": %lu, \"duplicated\": %lu}\n",
	       received, any ? (unsigned long long)highest : 0ULL,
	       any ? (unsigned long long)(highest + 1 - (received - duplicated)) : 0ULL,
	       reordered, duplicated);
	return 0;
}

static int echo(const struct opts *o)
{
	int fd = udp_socket(o, true, NULL);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	unsigned long answered = 0;
	double start = now();

	while (o->secs <= 0 || now() - start < o->secs) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ssize_t n;

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
		if (n < 0)
			continue;
		if (sendto(fd, buf, n, 0, (struct sockaddr *)&from, fl) == n)
			answered++;
	}
	printf("{\"answered\": %lu}\n", answered);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int rr(const struct opts *o)
{
	struct sockaddr_in peer;
	int fd = udp_socket(o, false, &peer);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t cap = 1 << 16, n = 0;
	double *rtt = malloc(cap * sizeof(*rtt)), start = now();
	unsigned long timeouts = 0;
	uint64_t seq = 0;

	if (!rtt)
		die("malloc");
	while (more(o, start, n)) {
		double t0 = now();
		uint64_t got;

		memcpy(buf, &seq, sizeof(seq));
		if (send(fd, buf, o->size, 0) < 0 && errno != ENOBUFS)
			die("send");
		/* wait for this request's answer; drop stale ones */
		for (;;) {
			if (poll(&pfd, 1, 200) <= 0) {
				timeouts++;
				break;
			}
			if (recv(fd, buf, sizeof(buf), 0) < (ssize_t)sizeof(got))
				continue;
			memcpy(&got, buf, sizeof(got));
			if (got != seq)
				continue;
			if (n == cap) {
				cap *= 2;
				rtt = realloc(rtt, cap * sizeof(*rtt));
				if (!rtt)
					die("realloc");
			}
			rtt[n++] = (now() - t0) * 1e6;
			break;
		}
		seq++;
		if (timeouts > 50)
			break;
	}
	qsort(rtt, n, sizeof(*rtt), cmp_double);
#define PCT(p) (n ? rtt[(size_t)((n - 1) * (p) / 100.0)] : 0.0)
	printf("{\"transactions\": %zu, \"timeouts\": %lu, \"seconds\": %.3f, \"p50_us\": %.1f, \"p90_us\": %.1f, \"p95_us\": %.1f, \"p99_us\": %.1f}\n",
	       n, timeouts, now() - start, PCT(50), PCT(90), PCT(95), PCT(99));
#undef PCT
	free(rtt);
	return timeouts > 50;
}

/*
 * A TCP connection to PEER. The sink is started just before the senders and,
 * on a loaded host, may not listen yet: a refused connection is tried again
 * for up to CONNECT_SECS rather than leaving the load one flow short.
 */
#define CONNECT_SECS	5

static int tcp_connect(const struct sockaddr_in *peer)
{
	double start = now();

	for (;;) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		if (fd < 0)
			die("socket");
		if (!connect(fd, (const struct sockaddr *)peer, sizeof(*peer)))
			return fd;
		if (errno != ECONNREFUSED || now() - start >= CONNECT_SECS)
			die("connect");
		close(fd);
		usleep(20000);
	}
}

static int tcp_stream(const struct opts *o)
{
	struct sockaddr_in peer = { .sin_family = AF_INET };
	unsigned long writes = 0;
	unsigned long long bytes = 0;
	double start;
	int fd;

	peer.sin_port = htons(o->port);
	if (!o->addr || inet_pton(AF_INET, o->addr, &peer.sin_addr) != 1) {
		fprintf(stderr, "pfb_load: -d needs an IPv4 address\n");
		exit(2);
	}
	fd = tcp_connect(&peer);
	start = now();
	while (more(o, start, writes)) {
		ssize_t n = send(fd, buf, o->size, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EPIPE || errno == ECONNRESET)
				break;		/* the sink went away first */
			die("send");
		}
		bytes += n;
		writes++;
	}
	printf("{\"bytes\": %llu, \"writes\": %lu, \"seconds\": %.3f}\n",
	       bytes, writes, now() - start);
	close(fd);
	return 0;
}

#define MAX_CONNS	64

static int tcp_sink(const struct opts *o)
{
	struct pollfd pfd[MAX_CONNS + 1];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct sigaction act = { .sa_handler = on_stop };	/* no SA_RESTART */
	unsigned long long bytes = 0;
	int n = 1, conns = 0, one = 1, i;
	double start = now(), last = start;

	pfd[0].fd = socket(AF_INET, SOCK_STREAM, 0);
	pfd[0].events = POLLIN;
	if (pfd[0].fd < 0)
		die("socket");
	setsockopt(pfd[0].fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sa.sin_port = htons(o->port);
	sa.sin_addr.s_addr = htonl(INADDR_ANY);
	if (bind(pfd[0].fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("bind");
	if (listen(pfd[0].fd, MAX_CONNS) < 0)
		die("listen");
	sigaction(SIGTERM, &act, NULL);
	sigaction(SIGINT, &act, NULL);
	while (!stop && (o->secs <= 0 || now() - start < o->secs)) {
		int r = poll(pfd, n, 100);

		/* all connections came and went, or none moved for IDLE_MS */
		if (conns && (n == 1 || (r == 0 && (now() - last) * 1000 >= o->idle_ms)))
			break;
		if (r <= 0)
			continue;
		if ((pfd[0].revents & POLLIN) && n <= MAX_CONNS) {
			int c = accept(pfd[0].fd, NULL, NULL);

			if (c >= 0) {
				pfd[n].fd = c;
				pfd[n++].events = POLLIN;
				conns++;
			}
		}
		for (i = 1; i < n; i++) {
			ssize_t got;

			if (!pfd[i].revents)
				continue;
			got = recv(pfd[i].fd, buf, sizeof(buf), 0);
			if (got > 0) {
				bytes += got;
				last = now();
				continue;
			}
			/* EOF or error: this connection is done */
			close(pfd[i].fd);
			pfd[i--] = pfd[--n];
		}
	}
	printf("{\"bytes\": %llu, \"connections\": %d, \"seconds\": %.3f}\n",
	       bytes, conns, now() - start);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: pfb_load stream|rr|tcpstream -d ADDR -p PORT [-s SIZE] [-t SECS | -n COUNT]\n"
		"       pfb_load sink|echo|tcpsink -p PORT [-t SECS] [-i IDLE_MS]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct opts o = { .port = 9000, .size = 64, .secs = 1, .idle_ms = 1000 };
	const char *mode;
	int opt;

	if (argc < 2)
		usage();
	mode = argv[1];
	optind = 2;
	while ((opt = getopt(argc, argv, "d:p:s:t:n:i:")) != -1) {
		switch (opt) {
		case 'd':
			o.addr = optarg;
			break;
		case 'p':
			o.port = atoi(optarg);
			break;
		case 's':
			o.size = strtoul(optarg, NULL, 0);
			break;
		case 't':
			o.secs = atof(optarg);
			break;
		case 'n':
			o.count = strtoul(optarg, NULL, 0);
			break;
		case 'i':
			o.idle_ms = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (o.size < sizeof(uint64_t) || o.size > MAX_SIZE) {
		fprintf(stderr, "pfb_load: -s must be %zu..%d\n", sizeof(uint64_t), MAX_SIZE);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "stream"))
		return stream(&o);
	if (!strcmp(mode, "sink"))
		return sink(&o);
	if (!strcmp(mode, "echo"))
		return echo(&o);
	if (!strcmp(mode, "rr"))
		return rr(&o);
	if (!strcmp(mode, "tcpstream"))
		return tcp_stream(&o);
	if (!strcmp(mode, "tcpsink"))
		return tcp_sink(&o);
	usage();
	return 2;
}
