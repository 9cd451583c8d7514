/* port.c — UPF-U's process: its own DPDK instance (a primary, in memory:
 * nothing left on disk), the shared rule tables, the N3/N6 ports it owns,
 * and the poll/sleep loop.
 *
 * Ports, measured here (DPDK 22.11): a secondary of the onvm manager cannot
 * own a net_af_packet port (the PMD refuses: "not driven by the primary
 * process"), and receiving from the primary's af_packet port crashed a
 * secondary (the socket's ring is mapped in the primary only). Handing
 * packets from manager-owned ports over rings works with every PMD but
 * costs a second polling thread and a ring hop per packet on a 2-core
 * machine. So UPF-U is a primary and owns its ports with every PMD: vdevs
 * (net_af_packet, net_af_xdp, net_tap, net_null, net_ring) are created by
 * rte_vdev_init from upf.n3.port / upf.n6.port, PCI NICs bound to vfio-pci
 * are probed by EAL and picked by address. The rule tables are a shared
 * file (upf_shm.h), so UPF-U needs nothing of the manager.
 */
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "priv.h"

#define POOL_NAME "l25gc_upfu_pool"
#define POOL_MBUFS 16383
#define RING_DESC 1024
#define IDLE_FIRST_US 10

static struct upfu self;
static int eal_up;

static int fail(char *err, size_t n, const char *what, int e)
{
	snprintf(err, n, "%s: %s", what, rte_strerror(e));
	return -1;
}

static int is_pci(const char *name)
{
	unsigned a, b, c, d;
	return sscanf(name, "%x:%x:%x.%x", &a, &b, &c, &d) == 4 || sscanf(name, "%x:%x.%x", &a, &b, &c) == 3;
}

static int eal_init(const struct upfu_conf *c, char *err, size_t n)
{
	static char *argv[16];
	int argc = 0, pci = is_pci(c->port[0].dev) || is_pci(c->port[1].dev);
	argv[argc++] = "l25gc-upfu";
	argv[argc++] = "--in-memory";
	argv[argc++] = "--no-telemetry";
	argv[argc++] = "-l";
	argv[argc++] = "0";
	argv[argc++] = "--log-level=lib.eal:error";
	if (!pci)
		argv[argc++] = "--no-pci";
	argv[argc] = NULL;
	/* EAL pins the calling thread to lcore 0's CPU; it is a Go thread. */
	cpu_set_t cpus;
	sched_getaffinity(0, sizeof(cpus), &cpus);
	int r = rte_eal_init(argc, argv);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	if (r < 0)
		return fail(err, n, "EAL init (hugepages reserved? see deploy/hugepages.sh)", rte_errno);
	eal_up = 1;
	return 0;
}

static struct rte_mempool *pool(char *err, size_t n)
{
	struct rte_mempool *mp = rte_pktmbuf_pool_create(POOL_NAME, POOL_MBUFS, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (mp == NULL)
		fail(err, n, "mbuf pool", rte_errno);
	return mp;
}

/* probe brings up the port dev names (devargs "name,args" or a PCI
 * address) and finds its port id. */
static int probe(const char *dev, uint16_t *id, char *err, size_t n)
{
	char name[128];
	const char *comma = strchr(dev, ',');
	size_t len = comma ? (size_t)(comma - dev) : strlen(dev);
	if (len == 0 || len >= sizeof(name)) {
		snprintf(err, n, "port \"%s\": want DPDK devargs such as net_af_packet0,iface=eth1 or a PCI address", dev);
		return -1;
	}
	memcpy(name, dev, len);
	name[len] = 0;
	if (rte_eth_dev_get_port_by_name(name, id) == 0)
		return 0; /* a PCI NIC EAL probed at start */
	if (is_pci(name)) {
		snprintf(err, n, "port %s: no DPDK port at this PCI address (bound to vfio-pci? see README)", dev);
		return -1;
	}
	if (rte_vdev_init(name, comma ? comma + 1 : NULL) != 0) {
		snprintf(err, n, "port %s: probe failed (driver name right? interface exists and is up?)", dev);
		return -1;
	}
	if (rte_eth_dev_get_port_by_name(name, id) != 0)
		return fail(err, n, dev, ENODEV);
	return 0;
}

/* rx_intr_may_work: dev's PMD may have Rx interrupts (NICs through vfio,
 * net_tap). The other vdevs have none (net_af_packet, net_null, net_ring):
 * asking only logs "Rx Intr handle unset" at every start. */
static int rx_intr_may_work(const char *dev) { return is_pci(dev) || strncmp(dev, "net_tap", strlen("net_tap")) == 0; }

/* bring_up configures port id with one queue each way and starts it. */
static int bring_up(uint16_t id, const struct rte_eth_conf *conf, struct rte_mempool *mp)
{
	int r = rte_eth_dev_configure(id, 1, 1, conf);
	if (r == 0)
		r = rte_eth_rx_queue_setup(id, 0, RING_DESC, rte_eth_dev_socket_id(id), NULL, mp);
	if (r == 0)
		r = rte_eth_tx_queue_setup(id, 0, RING_DESC, rte_eth_dev_socket_id(id), NULL);
	if (r == 0)
		r = rte_eth_dev_start(id);
	return r;
}

static int start_port(struct uport *p, const struct upfu_port_conf *c, struct rte_mempool *mp, char *err, size_t n)
{
	struct rte_eth_conf conf;
	memset(&conf, 0, sizeof(conf));
	if (probe(c->dev, &p->id, err, n) < 0)
		return -1;
	/* Rx interrupts end an idle nap at the first packet (rx_wake.c); a PMD
	 * that refuses them at configure or start runs without, as before */
	conf.intr_conf.rxq = rx_intr_may_work(c->dev);
	int r = bring_up(p->id, &conf, mp);
	if (r != 0 && conf.intr_conf.rxq) {
		conf.intr_conf.rxq = 0;
		r = bring_up(p->id, &conf, mp);
	}
	p->intr_asked = conf.intr_conf.rxq;
	if (r != 0) {
		snprintf(err, n, "port %s: %s", c->dev, rte_strerror(-r));
		return -1;
	}
	rte_eth_promiscuous_enable(p->id); /* not every PMD can; the MAC check is ours */
	rte_eth_macaddr_get(p->id, &p->mac);
	p->ip = c->ip;
	p->mask = c->plen == 0 ? 0 : ~0u << (32 - c->plen);
	p->gw = c->gateway;
	return 0;
}

/* claim refuses a second UPF-U on one set of tables: it would fight the
 * first over the counters (each is written by one process only). */
static int claim(struct upf_shm *t, char *err, size_t n)
{
	int32_t other = t->stats.upfu_pid;
	if (other != 0 && other != getpid() && kill(other, 0) == 0) {
		snprintf(err, n, "another UPF-U (pid %d) forwards with these tables", other);
		return -1;
	}
	t->stats.upfu_pid = getpid();
	return 0;
}

static void wake_open(struct upfu *u, const char *tables);

int upfu_start(const struct upfu_conf *c, char *err, size_t n)
{
	struct upfu *u = &self;
	u->wake_fd = -1;
	u->stop_fd = -1;
	for (int i = 0; i < UPF_PORTS; i++)
		u->rxw[i].fd = -1;
	if (eal_up) {
		snprintf(err, n, "UPF-U starts once per process");
		return -1;
	}
	if (strcmp(c->port[0].dev, c->port[1].dev) == 0) {
		snprintf(err, n, "upf.n3.port and upf.n6.port are both %s: give each its own device", c->port[0].dev);
		return -1;
	}
	if (eal_init(c, err, n) < 0)
		return -1;
	if ((u->t = upf_shm_attach(c->tables, c->max_sessions, err, n)) == NULL || claim(u->t, err, n) < 0)
		return -1;
	u->st = &u->t->stats;
	u->hz = rte_get_tsc_hz();
	u->spin_us = c->spin_us;
	u->sleep_us = c->sleep_us;
	if ((u->pool = pool(err, n)) == NULL)
		return -1;
	if (upfu_buf_init(u, c, err, n) < 0)
		return -1;
	if (upfu_qos_init(u, c, err, n) < 0)
		return -1;
	if (upfu_vcache_init(u, err, n) < 0)
		return -1;
	u->unit = qos_unit(u->hz);
	wake_open(u, c->tables);
	u->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	for (int i = 0; i < UPF_PORTS; i++) {
		u->port[i].st = &u->t->stats.port[i];
		if (start_port(&u->port[i], &c->port[i], u->pool, err, n) < 0)
			return -1;
		upfu_rx_wake_open(u, i, c->port[i].dev);
	}
	upfu_bench_bind(u);
	return 0;
}

/* wake_open binds UPF-U's doorbell (UPF_WAKE_SUFFIX next to the tables):
 * UPF-C rings it after queuing a command, so the flush of a paged UE's
 * buffer does not wait for the end of a nap. Without it (a path too long,
 * a stale socket we cannot replace) UPF-U naps as before. */
static void wake_open(struct upfu *u, const char *tables)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	u->wake_fd = -1;
	if (snprintf(u->wake_path, sizeof(u->wake_path), "%s%s", tables, UPF_WAKE_SUFFIX) >= (int)sizeof(a.sun_path))
		return;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", u->wake_path);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	unlink(u->wake_path); /* a killed UPF-U's */
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return;
	}
	u->wake_fd = fd;
}

/* nap sleeps us microseconds, or less when UPF-C rings the doorbell or a
 * packet reaches a port (rx_wake.c); 1 when a packet ended it. */
static int nap(struct upfu *u, uint32_t us)
{
	/* whole seconds apart: ppoll and nanosleep refuse tv_nsec >= 1e9 (a
	 * upf.sleep of 1 s or more used to return at once: no nap at all) */
	struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000};
	struct pollfd p[1 + UPF_PORTS];
	int n = 0;
	if (u->wake_fd >= 0)
		p[n++] = (struct pollfd){.fd = u->wake_fd, .events = POLLIN};
	if (u->stop_fd >= 0) /* upfu_stop does not wait out a long upf.sleep */
		p[n++] = (struct pollfd){.fd = u->stop_fd, .events = POLLIN};
	int rx = upfu_rx_wake_arm(u, p + n, us == IDLE_FIRST_US);
	CNT_ADD(u->st->naps, 1);
	if (n + rx == 0) {
		nanosleep(&ts, NULL);
		return 0;
	}
	if (ppoll(p, (nfds_t)(n + rx), &ts, NULL) > 0 && u->wake_fd >= 0 && (p[0].revents & POLLIN)) {
		char drain[64];
		while (recv(u->wake_fd, drain, sizeof(drain), MSG_DONTWAIT) > 0)
			;
	}
	if (!upfu_rx_wake_disarm(u, p + n, rx))
		return 0;
	CNT_ADD(u->st->naps_rx, 1);
	return 1;
}

/* upfu_run polls both ports while packets come; once none came for
 * spin_us it sleeps between polls, each sleep twice the last (from
 * IDLE_FIRST_US up to sleep_us), so a UPF-U idle for long costs about
 * 1000000 / sleep_us wake-ups a second. A packet after a pause ends the
 * nap where the port can say so (rx_wake.c), else waits at most sleep_us. */
void upfu_run(void)
{
	struct upfu *u = &self;
	struct rte_mbuf *pkts[UPFU_BURST];
	rte_thread_register(); /* an lcore id: per-lcore mempool caches */
	uint64_t spin = u->hz / 1000000 * u->spin_us, last = rte_rdtsc();
	uint32_t nap_us = IDLE_FIRST_US;
	while (!__atomic_load_n(&u->stop, __ATOMIC_RELAXED)) {
		uint16_t got = 0;
		for (int i = 0; i < UPF_PORTS; i++) {
			uint16_t k = rte_eth_rx_burst(u->port[i].id, 0, pkts, UPFU_BURST);
			if (k) {
				upfu_burst(u, i, pkts, k);
				got += k;
			}
		}
		upfu_commands(u);
		upfu_qos_poll(u);
		upfu_neigh_tick(u);
		upfu_flush(u);
		upfu_ring_bell(u);
		uint64_t now = rte_rdtsc();
		if (got) {
			CNT_ADD(u->st->bursts, 1);
			last = now;
			nap_us = IDLE_FIRST_US;
		} else if (!upfu_qos_backlog(u) && now - last > spin) {
			/* a shaper with a backlog releases it as credit comes: no nap */
			if (nap(u, nap_us)) {
				/* a packet: poll again at once and spin, as after a burst; the
				 * side socket may hear a frame before the PMD's ring holds it */
				last = rte_rdtsc();
				nap_us = IDLE_FIRST_US;
			} else if (nap_us < u->sleep_us) {
				nap_us = nap_us * 2 < u->sleep_us ? nap_us * 2 : u->sleep_us;
			}
		}
	}
}

void upfu_stop(void)
{
	__atomic_store_n(&self.stop, 1, __ATOMIC_RELAXED);
	uint64_t one = 1;
	if (eal_up && self.stop_fd >= 0 && write(self.stop_fd, &one, sizeof(one)) < 0)
		return; /* the counter is full: a wake-up is pending anyway */
}

void upfu_close(void)
{
	struct upfu *u = &self;
	for (int i = 0; i < UPF_PORTS; i++) {
		if (u->port[i].st == NULL)
			continue;
		rte_eth_dev_stop(u->port[i].id);
		rte_eth_dev_close(u->port[i].id);
	}
	if (u->t && u->t->stats.upfu_pid == getpid())
		u->t->stats.upfu_pid = 0;
	upfu_rx_wake_close(u);
	if (u->stop_fd >= 0) {
		close(u->stop_fd);
		u->stop_fd = -1;
	}
	if (u->wake_fd >= 0) {
		close(u->wake_fd);
		unlink(u->wake_path);
		u->wake_fd = -1;
	}
}

void upfu_qos_stats_read(struct upfu_qos_stats *out) { upfu_qos_stats_copy(&self, out); }

void upfu_port_mac(int i, uint8_t *mac) { memcpy(mac, self.port[i].mac.addr_bytes, 6); }
