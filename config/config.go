// Package config is the one node configuration of L25GC+: a YAML file whose
// defaults work as-is on one node, loaded and validated here so that every NF,
// the CLI and the simulator read the same values. Errors name the file, the
// line and the field.
package config

import (
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/l25gc/l25gc/domain"
)

// Config is the whole node: one PLMN, the NFs it runs, and their transports.
type Config struct {
	PLMN     PLMN     `yaml:"plmn"`
	TACs     []string `yaml:"tacs"`    // 6 hex digits each (TS 38.413 9.3.3.10, 3 octets)
	SNSSAIs  []SNSSAI `yaml:"snssais"` // slices the core serves
	DNNs     []string `yaml:"dnns"`
	DataDir  string   `yaml:"data_dir"`
	LogDir   string   `yaml:"log_dir"`
	LogLevel string   `yaml:"log_level"` // debug | info | warn | error
	// LogMaxSizeMB rotates an NF's log file once it reaches this size
	// (0: never); LogMaxFiles rotated files are kept (<nf>.log.1 newest).
	LogMaxSizeMB int `yaml:"log_max_size_mb"`
	LogMaxFiles  int `yaml:"log_max_files"`
	// LogRedactSUPI masks the subscriber part of SUPIs in logs
	// (imsi-20893******0001), so logs can be shared.
	LogRedactSUPI bool `yaml:"log_redact_supi"`
	// NFs are the network functions this node runs (`l25gc up`), all of
	// them by default; a core spans nodes when each runs some of them.
	// Each NF's section below holds its ports (NFSpec, nf/registry).
	NFs  []string `yaml:"nfs"`
	SBI  SBI      `yaml:"sbi"`
	NRF  NRF      `yaml:"nrf"`
	AMF  AMF      `yaml:"amf"`
	AUSF NF       `yaml:"ausf"`
	UDM  UDM      `yaml:"udm"`
	UDR  UDR      `yaml:"udr"`
	PCF  NF       `yaml:"pcf"`
	NSSF NF       `yaml:"nssf"`
	SMF  SMF      `yaml:"smf"`
	UPF  UPF      `yaml:"upf"`
	// Subscribers are provisioned by the UDR at start when absent, so that a
	// fresh core and the simulator work together with no editing.
	Subscribers []SubscriberRange `yaml:"subscribers"`
	// Tracing exports the NFs' spans (tracing.go); off by default.
	Tracing Tracing `yaml:"tracing"`
	// Tuning is host latency tuning applied while the core runs (tuning.go).
	Tuning Tuning `yaml:"tuning"`

	// Path is the file this config was read from ("" for built-in defaults).
	Path string `yaml:"-"`
}

// PLMN is the PLMN identity, written as mcc and mnc digit strings; its
// rules (TS 23.003 2.2) are the domain package's.
type PLMN = domain.PLMN

// SNSSAI is a slice, written as sst and an optional sd of 6 hex digits; its
// rules (TS 23.003 28.4.2) are the domain package's.
type SNSSAI = domain.SNSSAI

// SBI says how NFs reach each other.
type SBI struct {
	// Transport is tcp (HTTP/2 cleartext over the kernel), xio (shared-memory
	// message level) or xio-socket (HTTP/2 over shared-memory sockets).
	Transport string `yaml:"transport"`
	BindIP    string `yaml:"bind_ip"`
	// AdvertiseIP is the address this node's NFs give the NRF and their
	// peers ("" = bind_ip); needed when bind_ip is a wildcard.
	AdvertiseIP string `yaml:"advertise_ip"`
	// NRFURI is the NRF every NF registers with and discovers through
	// ("" = this node's NRF); set it on a node that runs no NRF.
	NRFURI string `yaml:"nrf_uri"`
	// OAuth2 (on | off) protects the SBI (TS 33.501 13.3, 13.4.1): NFs
	// show the NRF a credential derived from the core secret, producers
	// accept only access tokens the NRF signed. On by default over every
	// transport: X-IO NFs still serve TCP at the same address for peers
	// on other nodes, so shared memory alone does not keep callers out.
	// Off is for benchmarks of one node.
	OAuth2 string `yaml:"oauth2"`
	// SecretFile holds the core secret NF credentials derive from ("" =
	// sbi.secret in data_dir); nodes of one core share it.
	SecretFile string `yaml:"secret_file"`
	// TLS is off (h2c), on (HTTP/2 over TLS, TS 33.501 13.1) or mutual
	// (clients show their certificate too) for SBI over TCP.
	TLS string `yaml:"tls"`
	// TLSDir holds ca.crt and each NF's <name>.crt and <name>.key
	// ("" = certs in data_dir; `l25gc certs init` writes them).
	TLSDir string `yaml:"tls_dir"`
	// XIOSpin is the X-IO pollers' spin budget (config/xio.go).
	XIOSpin XIOSpin `yaml:"xio_spin"`
}

// OAuth2On reports whether the SBI requires credentials and tokens.
func (c *Config) OAuth2On() bool { return c.SBI.OAuth2 != "off" }

// TLSOn reports whether SBI over TCP uses TLS.
func (c *Config) TLSOn() bool { return c.SBI.TLS == "on" || c.SBI.TLS == "mutual" }

// SecretPath is the file of the core secret.
func (c *Config) SecretPath() string {
	if c.SBI.SecretFile != "" {
		return c.SBI.SecretFile
	}
	return filepath.Join(c.DataDir, "sbi.secret")
}

// CertDir is where the CA and NF certificates are.
func (c *Config) CertDir() string {
	if c.SBI.TLSDir != "" {
		return c.SBI.TLSDir
	}
	return filepath.Join(c.DataDir, "certs")
}

// Runs reports whether this node runs the network function name.
func (c *Config) Runs(name string) bool {
	for _, n := range c.NFs {
		if n == name {
			return true
		}
	}
	return false
}

// NF holds what every network function has: where it serves its SBI and its metrics.
type NF struct {
	SBIPort     int `yaml:"sbi_port"`
	MetricsPort int `yaml:"metrics_port"` // Prometheus /metrics and the /healthz the supervisor polls
}

// NRF is the repository function; ValidityPeriod is what discovery results
// promise (TS 29.510 6.2.6.2.3 validityPeriod, whole seconds, at least 1 s),
// and consumers cache for that long. HeartbeatTimer is the heartBeatTimer
// it assigns every NF at registration (TS 29.510 5.2.2.3.2, whole
// seconds): NFs send a heartbeat that often, and one silent for longer
// (plus a grace of half a period) is SUSPENDED and no longer discovered.
type NRF struct {
	NF             `yaml:",inline"`
	ValidityPeriod time.Duration `yaml:"validity_period"`
	HeartbeatTimer time.Duration `yaml:"heartbeat_timer"`
	// AccessTokenTTL is how long the access tokens it issues live (TS
	// 29.510 6.3.5.2.4 exp).
	AccessTokenTTL time.Duration `yaml:"access_token_ttl"`
}

// AMF configures the access and mobility function.
type AMF struct {
	NF       `yaml:",inline"`
	Name     string  `yaml:"name"`
	GUAMI    GUAMI   `yaml:"guami"`
	NGAP     NGAP    `yaml:"ngap"`
	NAS      NAS     `yaml:"nas"`
	Network  NetName `yaml:"network_name"`
	Relative int     `yaml:"relative_capacity"` // TS 38.413 9.3.1.32, 0..255
	Persist  Persist `yaml:"persist"`
	Limiter  Limiter `yaml:"limiter"`
}

// Persist is the AMF's UE-context store (nf/amf/persist.go): what a
// registered UE needs survives an AMF restart, written behind the
// procedures with a bounded lag.
type Persist struct {
	// Enabled keeps UE contexts across restarts; off, a restarted AMF
	// knows no UE and every UE registers (and authenticates) afresh.
	Enabled bool `yaml:"enabled"`
	// Path is the store's file, relative to data_dir unless absolute; ""
	// names it after the AMF ID (amf-<region><set><pointer>.ues), so AMFs
	// of one set sharing a data_dir keep their own.
	Path string `yaml:"path"`
	// FlushInterval bounds the lag: changes queued longer are written out.
	FlushInterval time.Duration `yaml:"flush_interval"`
	// MaxPending bounds the queue: a change finding this many UEs waiting
	// to be written waits for the flush (back-pressure, not loss).
	MaxPending int `yaml:"max_pending"`
}

// GUAMI identifies this AMF (TS 23.003 2.10.1).
type GUAMI struct {
	RegionID int `yaml:"region_id"` // 8 bits
	SetID    int `yaml:"set_id"`    // 10 bits
	Pointer  int `yaml:"pointer"`   // 6 bits
}

// NGAP is the N2 endpoint.
type NGAP struct {
	Addr string `yaml:"addr"` // IP:port, port 38412 by TS 38.412
	// Transport is kernel (kernel SCTP), udp (SCTP in user space over UDP,
	// RFC 6951 style) or auto (kernel when the host has SCTP).
	Transport string `yaml:"transport"`
	// MaxUEsPerGNB and MaxUEs cap the UE contexts with an N2 connection, of
	// one gNB and of the AMF: an InitialUEMessage beyond either is refused
	// (UE Context Release Command, cause control processing overload, TS
	// 38.413 9.3.1.2) and the UEs already there carry on.
	MaxUEsPerGNB int `yaml:"max_ues_per_gnb"`
	MaxUEs       int `yaml:"max_ues"`
	// UEReleaseTimeout is how long a UE Context Release Command waits for
	// its Complete before the AMF releases the N2 connection by itself
	// (TS 38.413 8.3.3 sets no timer; a gNB that never answers must not
	// keep the context).
	UEReleaseTimeout time.Duration `yaml:"ue_release_timeout"`
	// MaxAssociations caps the gNB associations served over udp and raw;
	// past it a new gNB's handshake is aborted (RFC 4960 Out of Resource).
	MaxAssociations int `yaml:"max_associations"`
	// MaxMessageSize is the largest NGAP PDU received, in bytes (a UE
	// Radio Capability may exceed 64 KiB); a larger one is dropped and
	// counted, the association stays.
	MaxMessageSize int `yaml:"max_message_size"`
	// SCTPImpl runs the associations over udp and raw on our own SCTP
	// data path (own, the default: sent inline as far as cwnd allows, one
	// reader per socket) or on pion/sctp (pion, the earlier path).
	SCTPImpl string `yaml:"sctp_impl"`
	// TNGRELOCprep bounds an N2 handover's preparation (TS 38.413 8.4.1.2):
	// a target gNB that has not answered Handover Request by then is given
	// up, the source gets Handover Preparation Failure and keeps the UE.
	TNGRELOCprep time.Duration `yaml:"tng_reloc_prep"`
	// TNGRELOCoverall bounds the whole handover execution (TS 38.413
	// 8.4.1.2): no Handover Notify from the target by then, the AMF
	// releases the target's UE context and the UE stays with the source.
	TNGRELOCoverall time.Duration `yaml:"tng_reloc_overall"`
}

// NAS holds the 5GMM policy of the AMF.
type NAS struct {
	Integrity []string `yaml:"integrity"` // preference order: NIA2, NIA1, NIA0
	Ciphering []string `yaml:"ciphering"` // preference order: NEA2, NEA0
	// T3550/T3560/T3570 guard Registration Accept, Authentication/Security
	// Mode Command and Identity Request (TS 24.501 10.2: 6 s, 4 retransmissions).
	T3550              time.Duration `yaml:"t3550"`
	T3560              time.Duration `yaml:"t3560"`
	T3570              time.Duration `yaml:"t3570"`
	MaxRetransmissions int           `yaml:"max_retransmissions"`
	T3512              time.Duration `yaml:"t3512"` // periodic registration update timer
	// UnknownSubscriberCause is the 5GMM cause for a SUPI the UDM does not
	// know: 3 (illegal UE) or 7 (5GS services not allowed), TS 24.501 5.5.1.2.5.
	UnknownSubscriberCause int `yaml:"unknown_subscriber_cause"`
	// UnauthenticatedTimeout bounds a UE context from its InitialUEMessage
	// until the UE is authenticated (its NAS security context confirmed,
	// TS 24.501 4.4.2): then it is released. The UE gives up its own
	// registration on T3510, 15 s (TS 24.501 10.2 table 10.2.1).
	UnauthenticatedTimeout time.Duration `yaml:"unauthenticated_timeout"`
	// T3513 guards Paging (TS 24.501 5.6.2.2.1; its value is the
	// network's choice): unanswered, Paging is sent again, at most
	// PagingRetransmissions times; then the paging fails and the
	// requester (the SMF) is told (TS 23.502 4.2.3.3 step 4b).
	T3513                 time.Duration `yaml:"t3513"`
	PagingRetransmissions int           `yaml:"paging_retransmissions"`
	// MobileReachable runs while a UE is CM-IDLE (TS 24.501 5.3.7); 0 means
	// the default, 4 minutes more than T3512. When it expires the AMF
	// stops paging the UE and starts ImplicitDeregistration, on whose
	// expiry the UE is deregistered implicitly (its contexts end).
	MobileReachable        time.Duration `yaml:"mobile_reachable"`
	ImplicitDeregistration time.Duration `yaml:"implicit_deregistration"`
}

// MobileReachableTimer is the mobile reachable timer of a CM-IDLE UE (TS
// 24.501 5.3.7): amf.nas.mobile_reachable, or by default 4 minutes more
// than T3512 (and, with T3512 deactivated, none: 0).
func (n NAS) MobileReachableTimer() time.Duration {
	switch {
	case n.MobileReachable > 0:
		return n.MobileReachable
	case n.T3512 == 0:
		return 0
	}
	return n.T3512 + 4*time.Minute
}

// NetName is sent in Configuration Update Command (TS 24.501 9.11.3.35).
type NetName struct {
	Full  string `yaml:"full"`
	Short string `yaml:"short"`
}

// UDM configures the unified data management function.
type UDM struct {
	NF       `yaml:",inline"`
	SUCIKeys []SUCIKey `yaml:"suci_keys"`
}

// SUCIKey is one home network private key for SUCI deconcealment (TS 33.501 C.3).
type SUCIKey struct {
	ID         int    `yaml:"id"`          // home network public key identifier, 0..255
	Scheme     string `yaml:"scheme"`      // profile_a (X25519) | profile_b (P-256)
	PrivateKey string `yaml:"private_key"` // hex
}

// UDR configures the data repository and its store.
type UDR struct {
	NF    `yaml:",inline"`
	Store Store `yaml:"store"`
	// AdminTokenFile holds the bearer token the provisioning API requires
	// (relative to data_dir unless absolute); `l25gc up` creates it, mode
	// 0600, when absent.
	AdminTokenFile string `yaml:"admin_token_file"`
	// MaxBulk caps the subscribers of one bulk provisioning request;
	// `l25gc subscriber add --count` sends larger ranges in batches.
	MaxBulk int `yaml:"max_bulk"`
}

// UPF configures the user plane, split in two processes (DESIGN.md "User
// plane"): UPF-C terminates PFCP (N4, TS 29.244) and writes each session's
// rules into shared memory; UPF-U, a DPDK process, forwards GTP-U on N3 and
// IP on N6 with them.
type UPF struct {
	C UPFC `yaml:"c"`
	U UPFU `yaml:"u"`
	// N3 faces the gNBs (GTP-U, TS 29.281), N6 the data network.
	N3 UPFPort `yaml:"n3"`
	N6 UPFPort `yaml:"n6"`
	// MaxSessions bounds the PFCP sessions the shared rule tables hold; an
	// establishment beyond it gets PFCP cause 75 (No resources available).
	MaxSessions int `yaml:"max_sessions"`
	// Buffer holds downlink packets of sessions whose FAR says BUFF (an
	// idle UE being paged, TS 23.502 4.2.3.3; a handover).
	Buffer UPFBuffer `yaml:"buffer"`
	// QoS bounds the shaping of sessions' QoS flows (config/upf_qos.go).
	QoS UPFQoS `yaml:"qos"`
}

// UPFBuffer bounds UPF-U's downlink buffering (TS 29.244 5.2.3 BUFF).
type UPFBuffer struct {
	// PerSession is the most packets held for one session; one more drops
	// the oldest (counted), so the newest data reaches the UE.
	PerSession int `yaml:"per_session"`
	// Total is the most packets held for all sessions together; past it a
	// new packet to buffer is dropped (counted).
	Total int `yaml:"total"`
}

// UPFC is the PFCP side of the UPF (a Go process).
type UPFC struct {
	NF `yaml:",inline"`
	// PFCPAddr is where it serves N4 over UDP (IP:port, 8805 by TS 29.244
	// 4.2.2); on one node with sbi.transport xio the SMF reaches it over
	// X-IO instead.
	PFCPAddr string `yaml:"pfcp_addr"`
	// T1 and N1 are N4's retransmission timer and count (TS 29.244 6.4):
	// a request unanswered after T1 is sent again, at most N1 times. The
	// SMF's PFCP client on this node uses them too.
	T1 time.Duration `yaml:"t1"`
	N1 int           `yaml:"n1"`
}

// UPFU is the forwarding side of the UPF (C, DPDK).
type UPFU struct {
	NF `yaml:",inline"`
}

// UPFPort is one UPF-U interface.
type UPFPort struct {
	// Port is the DPDK device: a PCI address of a NIC bound to vfio-pci,
	// or vdev devargs such as net_af_packet0,iface=eth1. Empty: `l25gc up`
	// builds the lab veth pair (and, for N6, the data-network namespace
	// l25gc-dn) and uses its UPF end.
	Port string `yaml:"port"`
	// IP is UPF-U's address on the port, with its prefix (10.100.0.1/24).
	IP string `yaml:"ip"`
	// Gateway is the next hop for destinations off the prefix ("" = none:
	// only on-link peers, e.g. gNBs on the N3 subnet).
	Gateway string `yaml:"gateway"`
}

// AdminTokenPath is where the provisioning API's admin token is kept.
func (c *Config) AdminTokenPath() string {
	p := c.UDR.AdminTokenFile
	if p == "" {
		p = "admin.token"
	}
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.DataDir, p)
}

// Store selects the UDR backend.
type Store struct {
	Backend string  `yaml:"backend"` // embedded | mongodb
	Path    string  `yaml:"path"`    // embedded: file, relative to data_dir when not absolute
	MongoDB MongoDB `yaml:"mongodb"`
}

// MongoDB points at a free5GC-layout database.
type MongoDB struct {
	URI      string `yaml:"uri"`
	Database string `yaml:"database"`
}

// SubscriberRange is Count subscribers with consecutive IMSIs sharing keys.
type SubscriberRange struct {
	IMSI    string   `yaml:"imsi"` // first IMSI, 15 digits
	Count   int      `yaml:"count"`
	K       string   `yaml:"k"`
	OPc     string   `yaml:"opc,omitempty"`
	OP      string   `yaml:"op,omitempty"`
	SQN     string   `yaml:"sqn"`
	AMF     string   `yaml:"amf"`
	SNSSAIs []SNSSAI `yaml:"snssais"`
	DNNs    []string `yaml:"dnns"`
	// The QoS of every DNN's PDU sessions (TS 23.501 5.7.2.6 session
	// AMBR, 5.7.2.7 default QoS flow): stored in the subscription data
	// (smData) and the PCF's policy data. Left out, each takes the UDR's
	// default: 1 Gbps up and 2 Gbps down, 5QI 9, ARP priority 8.
	SessionAMBR *AMBR `yaml:"session_ambr,omitempty"`
	FiveQI      int   `yaml:"5qi,omitempty"`
	ARPPriority int   `yaml:"arp_priority,omitempty"`
}

// AMBR is an aggregate maximum bit rate pair (TS 29.571 5.5.2 BitRate
// strings such as "1 Gbps").
type AMBR struct {
	Uplink   string `yaml:"uplink"`
	Downlink string `yaml:"downlink"`
}

// Addr joins the SBI bind IP with a port: where this node listens.
func (c *Config) Addr(port int) string {
	return net.JoinHostPort(c.SBI.BindIP, strconv.Itoa(port))
}

// AdvertisedAddr joins the advertised IP with a port: where peers, the NRF
// and tools reach this node's NF on that port.
func (c *Config) AdvertisedAddr(port int) string {
	return net.JoinHostPort(c.AdvertisedIP(), strconv.Itoa(port))
}

// AdvertisedIP is the IP address this node's NFs are reached at.
func (c *Config) AdvertisedIP() string {
	if c.SBI.AdvertiseIP != "" {
		return c.SBI.AdvertiseIP
	}
	return c.SBI.BindIP
}

// SBIScheme is the URI scheme of this node's SBI over TCP.
func (c *Config) SBIScheme() string {
	if c.TLSOn() {
		return "https"
	}
	return "http"
}

// NRFURI is where every NF registers and discovers.
func (c *Config) NRFURI() string {
	if c.SBI.NRFURI != "" {
		return strings.TrimSuffix(c.SBI.NRFURI, "/")
	}
	return c.SBIScheme() + "://" + c.AdvertisedAddr(c.NRF.SBIPort)
}
