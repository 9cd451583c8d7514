/* rx_wake.c — what ends UPF-U's idle nap when a packet arrives (issue 12,
 * paging first packet, TS 23.502 4.2.3.3 step 1: the downlink packet for an
 * idle UE should not wait out a nap of up to upf.sleep before UPF-U sees it).
 *
 * Per port, the first that works:
 *  - DPDK's Rx interrupt (rte_eth_dev_rx_intr_*, intr_conf.rxq asked for at
 *    configure time): the PMD's event fd, armed only for the nap;
 *  - net_af_packet (no Rx interrupt): a second AF_PACKET socket on the same
 *    interface (the iface= devarg) that only says "a frame came": a classic
 *    BPF filter keeps 1 byte of each incoming frame and none of what we send,
 *    and SO_RCVBUF is the kernel's minimum, so it holds a few frames. While
 *    UPF-U is busy nobody reads it: the buffer stays full and each frame
 *    costs the kernel the 4-instruction filter and a failed receive-buffer
 *    check (no clone, no copy; the socket's drop counter moves);
 *  - else nothing: the nap ends on its timeout, as before.
 * The fast loop never touches these fds; nap (port.c) polls them with the
 * doorbell, so no thread and no busy loop is added.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include "priv.h"

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

/* iface_of copies the value of the iface= devarg of dev into out; 0 when
 * there is none. */
static int iface_of(const char *dev, char *out, size_t n)
{
	const char *p = dev;
	while ((p = strstr(p, "iface=")) != NULL) {
		if (p == dev || p[-1] == ',') {
			p += strlen("iface=");
			size_t len = strcspn(p, ",");
			if (len == 0 || len >= n)
				return 0;
			memcpy(out, p, len);
			out[len] = 0;
			return 1;
		}
		p++;
	}
	return 0;
}

/* by_socket: dev's PMD has no Rx interrupt, a side socket stands in. */
static int by_socket(const char *dev) { return strncmp(dev, "net_af_packet", strlen("net_af_packet")) == 0; }

/* sniff_open is the af_packet side socket on iface, -1 when it cannot be
 * had (then the nap ends on its timeout). */
static int sniff_open(const char *iface)
{
	/* keep 1 byte of a frame that came in; nothing of one we sent */
	static struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_PKTTYPE),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, 1),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_fprog prog = {.len = sizeof(code) / sizeof(code[0]), .filter = code};
	unsigned idx = if_nametoindex(iface);
	if (idx == 0)
		return -1;
	/* protocol 0: nothing is queued before the filter is on and bind says ETH_P_ALL */
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int one = 1, tiny = 1; /* the kernel raises it to its minimum */
	setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)); /* Linux >= 4.20; the filter covers older */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &tiny, sizeof(tiny));
	struct sockaddr_ll a = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = (int)idx};
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) < 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

void upfu_rx_wake_open(struct upfu *u, int i, const char *dev)
{
	struct rx_wake *w = &u->rxw[i];
	w->fd = -1;
	w->intr = 0;
	if (u->port[i].intr_asked) {
		int fd = rte_eth_dev_rx_intr_ctl_q_get_fd(u->port[i].id, 0);
		if (fd >= 0) {
			w->fd = fd;
			w->intr = 1;
			return;
		}
	}
	char iface[IF_NAMESIZE];
	if (by_socket(dev) && iface_of(dev, iface, sizeof(iface)))
		w->fd = sniff_open(iface);
}

void upfu_rx_wake_close(struct upfu *u)
{
	for (int i = 0; i < UPF_PORTS; i++) {
		if (u->rxw[i].fd >= 0 && !u->rxw[i].intr)
			close(u->rxw[i].fd); /* the PMD owns an interrupt's fd */
		u->rxw[i].fd = -1;
	}
}

/* drain_socket empties a side socket of the frames it kept. */
static void drain_socket(int fd)
{
	char drain[64];
	while (recv(fd, drain, sizeof(drain), MSG_DONTWAIT) > 0)
		;
}

/* upfu_rx_wake_arm adds the ports' wake fds to p (room for UPF_PORTS) and
 * arms the Rx interrupts; the number added. first: the first nap after
 * packets, when a side socket still holds frames of the busy time that
 * the loop already took: emptied, so they do not end the nap at once (a
 * frame that came since waits this nap, IDLE_FIRST_US, as before). */
int upfu_rx_wake_arm(struct upfu *u, struct pollfd *p, int first)
{
	int n = 0;
	for (int i = 0; i < UPF_PORTS; i++) {
		struct rx_wake *w = &u->rxw[i];
		if (w->fd < 0)
			continue;
		if (first && !w->intr)
			drain_socket(w->fd);
		if (w->intr && rte_eth_dev_rx_intr_enable(u->port[i].id, 0) != 0)
			continue;
		p[n++] = (struct pollfd){.fd = w->fd, .events = POLLIN};
	}
	return n;
}

/* upfu_rx_wake_disarm, after the nap, turns the Rx interrupts off again
 * (the busy loop must not take them), empties what woke us and says
 * whether a packet did. p and n are what upfu_rx_wake_arm filled. */
int upfu_rx_wake_disarm(struct upfu *u, const struct pollfd *p, int n)
{
	int woke = 0;
	for (int i = 0; i < UPF_PORTS; i++)
		if (u->rxw[i].fd >= 0 && u->rxw[i].intr)
			rte_eth_dev_rx_intr_disable(u->port[i].id, 0);
	for (int k = 0; k < n; k++) {
		if (!(p[k].revents & POLLIN))
			continue;
		woke = 1;
		int intr = 0;
		for (int i = 0; i < UPF_PORTS; i++)
			intr |= u->rxw[i].intr && u->rxw[i].fd == p[k].fd;
		if (intr) { /* an eventfd's count (vfio; uio's is 4 bytes): POLLIN says it will not block */
			uint64_t count;
			if (read(p[k].fd, &count, sizeof(count)) < 0)
				(void)errno;
			continue;
		}
		drain_socket(p[k].fd);
	}
	return woke;
}
