// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * siwx-rsocket-stream: many small messages through rsockets, every byte and
 * their order checked, in both directions.
 *
 * The client sends N records with one rsend() each (so each is one rsockets
 * message: an RDMA Write and its message, carried as Immediate Data or as
 * a Send), the server reads the stream with rrecv() and checks it, then
 * the server sends N records back and the client checks them. A record is
 * a 4-octet header (sequence number in its low 20 bits, length in its top
 * 12, network order) and 0 to MAX payload octets, each a function of
 * (seed, sequence, offset); lengths follow the seed too, and 0, 1 and MAX
 * always occur. Any short read is reassembled, since a stream keeps no
 * boundaries. --nonblock drives non-blocking rsockets with rpoll().
 *
 * After every WINDOW records the receiver sends a 1-octet acknowledgement
 * and the sender waits for it. rsockets grants as many message credits as
 * it posts receives, but its control messages (credit updates) take
 * receives too; InfiniBand retries a message that finds no receive (RNR),
 * iWARP has no such retry and the connection ends with a Terminate (siwx
 * waits recv_wait_ms first, upstream siw not at all). So a sender may run
 * ahead of a slow receiver only by less than the receive queue (rsockets'
 * default: 384), in any rsockets release.
 * Exit status 0 only when every record arrived exactly and in order.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <rdma/rsocket.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PAYLOAD 4095	/* what the header's 12 length bits hold */

static struct {
	const char *server;	/* client mode: the address to connect to */
	int port;
	unsigned int count;
	unsigned int max;
	unsigned int seed;
	unsigned int window;
	bool nonblock;
} opt = { .port = 7471, .count = 20000, .max = 64, .seed = 1, .window = 128 };

static uint32_t mix(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	return x ^ (x >> 16);
}

static unsigned int record_len(unsigned int seq)
{
	if (seq == 0)
		return 0;
	if (seq == 1)
		return 1;
	if (seq == 2)
		return opt.max;
	return mix(opt.seed * 0x9e3779b9U + seq) % (opt.max + 1);
}

static uint8_t record_byte(unsigned int seq, unsigned int off)
{
	return (uint8_t)mix((opt.seed << 24) ^ (seq << 12) ^ off);
}

static int wait_for(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };

	if (!opt.nonblock)
		return 0;
	if (rpoll(&p, 1, 30000) != 1) {
		fprintf(stderr, "rpoll: %s\n", errno ? strerror(errno) : "timed out");
		return -1;
	}
	return 0;
}

/*
 * Move all @len octets: rsend() them (@out) or rrecv() them, waiting in
 * non-blocking mode for rpoll() to say the socket is ready.
 */
static int xfer_all(int fd, uint8_t *buf, size_t len, bool out)
{
	while (len) {
		ssize_t n = out ? rsend(fd, buf, len, 0) : rrecv(fd, buf, len, 0);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (wait_for(fd, out ? POLLOUT : POLLIN))
				return -1;
			continue;
		}
		if (n <= 0) {
			fprintf(stderr, "%s: %s\n", out ? "rsend" : "rrecv",
				n ? strerror(errno) : "peer closed");
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int send_all(int fd, const uint8_t *buf, size_t len)
{
	return xfer_all(fd, (uint8_t *)buf, len, true);
}

static int recv_all(int fd, uint8_t *buf, size_t len)
{
	return xfer_all(fd, buf, len, false);
}

static int send_records(int fd)
{
	uint8_t rec[4 + MAX_PAYLOAD];
	unsigned int seq, i, len;
	uint32_t hdr;

	for (seq = 0; seq < opt.count; seq++) {
		len = record_len(seq);
		hdr = htonl(len << 20 | (seq & 0xfffff));
		memcpy(rec, &hdr, 4);
		for (i = 0; i < len; i++)
			rec[4 + i] = record_byte(seq, i);
		if (send_all(fd, rec, 4 + len))
			return -1;
		/* the receiver's acknowledgement of a window */
		if ((seq + 1) % opt.window == 0 && recv_all(fd, rec, 1))
			return -1;
	}
	return 0;
}

static int check_records(int fd, unsigned long long *bytes)
{
	static const uint8_t ack = 'a';
	uint8_t payload[MAX_PAYLOAD];
	unsigned int seq, i, len;
	uint32_t hdr;

	for (seq = 0; seq < opt.count; seq++) {
		if (recv_all(fd, (uint8_t *)&hdr, 4))
			return -1;
		hdr = ntohl(hdr);
		len = record_len(seq);
		if ((hdr & 0xfffff) != (seq & 0xfffff) || hdr >> 20 != len) {
			fprintf(stderr, "record %u: header says sequence %u length %u, expected length %u\n",
				seq, hdr & 0xfffff, hdr >> 20, len);
			return -1;
		}
		if (recv_all(fd, payload, len))
			return -1;
		for (i = 0; i < len; i++) {
			if (payload[i] != record_byte(seq, i)) {
				fprintf(stderr, "record %u: octet %u is 0x%02x, expected 0x%02x\n",
					seq, i, payload[i], record_byte(seq, i));
				return -1;
			}
		}
		*bytes += 4 + len;
		if ((seq + 1) % opt.window == 0 && send_all(fd, &ack, 1))
			return -1;
	}
	return 0;
}

static int set_nonblock(int fd)
{
	if (!opt.nonblock)
		return 0;
	if (rfcntl(fd, F_SETFL, rfcntl(fd, F_GETFL, 0) | O_NONBLOCK) < 0) {
		perror("rfcntl");
		return -1;
	}
	return 0;
}

static int connect_or_accept(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(opt.port) };
	int fd, lfd, one = 1;

	if (opt.server) {
		if (inet_pton(AF_INET, opt.server, &sin.sin_addr) != 1) {
			fprintf(stderr, "not an IPv4 address: %s\n", opt.server);
			return -1;
		}
		fd = rsocket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0 || rconnect(fd, (struct sockaddr *)&sin, sizeof(sin))) {
			perror("rconnect");
			return -1;
		}
		return set_nonblock(fd) ? -1 : fd;
	}
	lfd = rsocket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || rsetsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    rbind(lfd, (struct sockaddr *)&sin, sizeof(sin)) || rlisten(lfd, 1)) {
		perror("rsocket listen");
		return -1;
	}
	fd = raccept(lfd, NULL, NULL);
	rclose(lfd);
	if (fd < 0) {
		perror("raccept");
		return -1;
	}
	return set_nonblock(fd) ? -1 : fd;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: siwx-rsocket-stream -s | -c SERVER [-p PORT] [-n COUNT] [-m MAX] [-S SEED] [-w WINDOW] [--nonblock]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "nonblock", no_argument, NULL, 'N' },
		{ 0 }
	};
	unsigned long long got = 0;
	bool server = false;
	int c, fd, rc;

	while ((c = getopt_long(argc, argv, "sc:p:n:m:S:w:", lopts, NULL)) != -1) {
		switch (c) {
		case 's': server = true; break;
		case 'c': opt.server = optarg; break;
		case 'p': opt.port = atoi(optarg); break;
		case 'n': opt.count = strtoul(optarg, NULL, 0); break;
		case 'm': opt.max = strtoul(optarg, NULL, 0); break;
		case 'S': opt.seed = strtoul(optarg, NULL, 0); break;
		case 'w': opt.window = strtoul(optarg, NULL, 0); break;
		case 'N': opt.nonblock = true; break;
		default: usage();
		}
	}
	if (server == !!opt.server || opt.max > MAX_PAYLOAD || opt.count < 3 || !opt.window)
		usage();

	fd = connect_or_accept();
	if (fd < 0)
		return 1;
	/* The client's records first, then the server's: both directions. */
	if (opt.server)
		rc = send_records(fd) || check_records(fd, &got);
	else
		rc = check_records(fd, &got) || send_records(fd);
	/* The server waits for the client's end of stream before it goes. */
	if (!rc && !opt.server) {
		uint8_t eof;

		rshutdown(fd, SHUT_WR);
		while (rrecv(fd, &eof, 1, 0) < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			if (wait_for(fd, POLLIN))
				break;
	}
	rclose(fd);
	if (rc) {
		fprintf(stderr, "siwx-rsocket-stream: FAILED\n");
		return 1;
	}
	printf("siwx-rsocket-stream: %u records (0 to %u octets) checked, %llu octets, window %u, %s\n",
	       opt.count, opt.max, got, opt.window, opt.nonblock ? "non-blocking" : "blocking");
	return 0;
}
