package config

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/l25gc/l25gc/domain"
)

// validator collects every invalid field so a user fixes them in one pass.
type validator struct {
	file string
	root *yaml.Node
	errs []error
}

func (v *validator) fail(field, format string, args ...any) {
	v.errs = append(v.errs, &FieldError{File: v.file, Line: lineOf(v.root, field), Field: field, Msg: fmt.Sprintf(format, args...)})
}

func (c *Config) validate(file string, root *yaml.Node) error {
	return c.validateFor(Builtin, file, root)
}

// validateFor checks c for a node that may run the NFs of cat.
func (c *Config) validateFor(cat Catalog, file string, root *yaml.Node) error {
	v := &validator{file: file, root: root}
	v.check("plmn.mcc", domain.CheckMCC(c.PLMN.MCC))
	v.check("plmn.mnc", domain.CheckMNC(c.PLMN.MNC))
	if len(c.TACs) == 0 {
		v.fail("tacs", "at least one TAC is needed")
	}
	for i, tac := range c.TACs {
		_, err := domain.ParseTAC(tac)
		v.check(fmt.Sprintf("tacs[%d]", i), err)
	}
	if len(c.SNSSAIs) == 0 {
		v.fail("snssais", "at least one S-NSSAI is needed")
	}
	v.snssais("snssais", c.SNSSAIs)
	v.dnns("dnns", c.DNNs)
	v.oneOf("log_level", c.LogLevel, "debug", "info", "warn", "error")
	v.logRotation(c)
	v.oneOf("sbi.transport", c.SBI.Transport, "tcp", "xio", "xio-socket")
	v.oneOf("sbi.oauth2", c.SBI.OAuth2, "on", "off")
	v.oneOf("sbi.tls", c.SBI.TLS, "off", "on", "mutual")
	if c.SBI.Transport == "xio-socket" && c.TLSOn() {
		// Its HTTP/2 over shared-memory sockets would have to speak TLS to
		// peers that serve h2c there: TLS is for the kernel path.
		v.fail("sbi.tls", "TLS protects SBI over TCP (and the TCP side of xio); with xio-socket use tls: off")
	}
	v.sbi(c)
	v.xioSpin(cat, c.SBI.XIOSpin)
	v.tuning(cat, c.Tuning)
	v.nfs(cat, c)
	if err := cat.Check(); err != nil {
		v.errs = append(v.errs, fmt.Errorf("%s: the NF table: %w", file, err)) // a table a node cannot run, not the file's fault
		return errors.Join(v.errs...)
	}
	for _, s := range cat {
		v.nf(s, *s.PortsIn(c))
	}
	v.validityPeriod("nrf.validity_period", c.NRF.ValidityPeriod)
	v.heartbeatTimer("nrf.heartbeat_timer", c.NRF.HeartbeatTimer)
	v.int32Seconds("nrf.access_token_ttl", c.NRF.AccessTokenTTL, "access tokens live that long", "TS 29.510 expires_in")
	v.uniquePorts(cat, c)
	v.amf(&c.AMF)
	v.udm(&c.UDM)
	v.store(&c.UDR.Store)
	v.upfc(&c.UPF)
	v.smf(&c.SMF)
	v.tracing(&c.Tracing)
	if c.UDR.MaxBulk < 1 {
		v.fail("udr.max_bulk", "must be at least 1, got %d", c.UDR.MaxBulk)
	}
	for i, r := range c.Subscribers {
		v.subscribers(fmt.Sprintf("subscribers[%d]", i), r, c.PLMN)
	}
	return errors.Join(v.errs...)
}

// sbi checks where the node listens, what it advertises and where its NRF
// is. Peers and the NRF cannot reach a wildcard address, so a node bound to
// one must say which address it is reached at.
func (v *validator) sbi(c *Config) {
	bind := net.ParseIP(c.SBI.BindIP)
	if bind == nil {
		v.fail("sbi.bind_ip", "not an IP address: %q", c.SBI.BindIP)
	}
	switch adv := c.SBI.AdvertiseIP; {
	case adv != "" && (net.ParseIP(adv) == nil || net.ParseIP(adv).IsUnspecified()):
		v.fail("sbi.advertise_ip", "not an IP address peers can reach: %q", adv)
	case adv == "" && bind != nil && bind.IsUnspecified():
		v.fail("sbi.advertise_ip", "needed with bind_ip %s: the address the NRF and peers reach this node at", c.SBI.BindIP)
	}
	if u := c.SBI.NRFURI; u != "" {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || (p.Path != "" && p.Path != "/") {
			v.fail("sbi.nrf_uri", "want the NRF's apiRoot, e.g. http://10.0.0.1:29510 (TS 29.501 4.4.1), got %q", u)
		}
	}
	if !c.Runs("nrf") && c.SBI.NRFURI == "" && len(c.NFs) > 0 {
		v.fail("sbi.nrf_uri", "needed when this node runs no NRF (nfs has none): where the core's NRF is")
	}
}

// nfs: every NF this node runs is one of the table, once.
func (v *validator) nfs(cat Catalog, c *Config) {
	seen := map[string]bool{}
	for i, name := range c.NFs {
		f := fmt.Sprintf("nfs[%d]", i)
		_, known := cat.Lookup(name)
		switch {
		case !known:
			v.fail(f, "unknown network function %q (want one of %s)", name, strings.Join(cat.Names(), ", "))
		case seen[name]:
			v.fail(f, "%s is listed twice", name)
		}
		seen[name] = true
	}
	if len(c.NFs) == 0 {
		v.fail("nfs", "a node runs at least one network function")
	}
}

func (v *validator) amf(a *AMF) {
	v.n2Addr("amf.ngap.addr", a.NGAP.Addr)
	v.amfName("amf.name", a.Name)
	v.oneOf("amf.ngap.transport", a.NGAP.Transport, "kernel", "udp", "raw", "auto")
	v.rangeInt("amf.ngap.max_associations", a.NGAP.MaxAssociations, 1, 1<<20)
	v.rangeInt("amf.ngap.max_message_size", a.NGAP.MaxMessageSize, 4<<10, 64<<20)
	v.oneOf("amf.ngap.sctp_impl", a.NGAP.SCTPImpl, "own", "pion")
	v.rangeInt("amf.guami.region_id", a.GUAMI.RegionID, 0, 255)
	v.rangeInt("amf.guami.set_id", a.GUAMI.SetID, 0, 1023)
	v.rangeInt("amf.guami.pointer", a.GUAMI.Pointer, 0, 63)
	v.rangeInt("amf.relative_capacity", a.Relative, 0, 255)
	v.ueBounds(a)
	v.nas(&a.NAS)
	v.persist(&a.Persist)
	v.limiter(&a.Limiter)
}

// persist: the lag and the queue bound what a crash of the AMF can cost
// (nf/amf/persist.go), so both are finite and non-zero.
func (v *validator) persist(p *Persist) {
	if !p.Enabled {
		return
	}
	if p.FlushInterval <= 0 || p.FlushInterval > time.Second {
		v.fail("amf.persist.flush_interval", "must be a positive duration up to 1s such as 5ms, got %v", p.FlushInterval)
	}
	v.rangeInt("amf.persist.max_pending", p.MaxPending, 1, 1<<20)
}

// ueBounds: the caps on UE contexts and the timers that free them; a zero
// would refuse every UE or release it at once, so each is at least 1.
func (v *validator) ueBounds(a *AMF) {
	// A gNB names its UEs by RAN UE NGAP ID (TS 38.413 9.3.3.2: 0..2^32-1);
	// the AMF by AMF UE NGAP ID (9.3.3.1: 0..2^40-1).
	v.rangeInt("amf.ngap.max_ues_per_gnb", a.NGAP.MaxUEsPerGNB, 1, 1<<32)
	v.rangeInt("amf.ngap.max_ues", a.NGAP.MaxUEs, 1, 1<<40)
	for _, t := range []struct {
		field string
		d     time.Duration
	}{{"amf.ngap.ue_release_timeout", a.NGAP.UEReleaseTimeout}, {"amf.nas.unauthenticated_timeout", a.NAS.UnauthenticatedTimeout},
		{"amf.ngap.tng_reloc_prep", a.NGAP.TNGRELOCprep}, {"amf.ngap.tng_reloc_overall", a.NGAP.TNGRELOCoverall},
		{"amf.nas.t3513", a.NAS.T3513}, {"amf.nas.implicit_deregistration", a.NAS.ImplicitDeregistration}} {
		if t.d <= 0 || t.d > time.Hour {
			v.fail(t.field, "must be a positive duration up to 1h such as 30s, got %v", t.d)
		}
	}
}

func (v *validator) nas(n *NAS) {
	if len(n.Integrity) == 0 {
		v.fail("amf.nas.integrity", "at least one integrity algorithm is needed")
	}
	for i, alg := range n.Integrity {
		v.oneOf(fmt.Sprintf("amf.nas.integrity[%d]", i), alg, "NIA0", "NIA1", "NIA2")
	}
	// NEA0 is null ciphering (TS 33.501 D.1); with no algorithm listed the AMF
	// can select none and refuses every UE's security mode.
	if len(n.Ciphering) == 0 {
		v.fail("amf.nas.ciphering", "at least one ciphering algorithm is needed (NEA0 for none)")
	}
	for i, alg := range n.Ciphering {
		v.oneOf(fmt.Sprintf("amf.nas.ciphering[%d]", i), alg, "NEA0", "NEA1", "NEA2")
	}
	for _, t := range []struct {
		field string
		d     time.Duration
	}{{"amf.nas.t3550", n.T3550}, {"amf.nas.t3560", n.T3560}, {"amf.nas.t3570", n.T3570}} {
		if t.d <= 0 {
			v.fail(t.field, "must be a positive duration such as 6s")
		}
	}
	// T3512 goes out as GPRS timer 3 (TS 24.501 9.11.2.5, TS 24.008
	// 10.5.7.4a): at most 31 x 320 h; 0 deactivates it (TS 24.501 5.3.7).
	if t := n.T3512; t < 0 || t > 31*320*time.Hour {
		v.fail("amf.nas.t3512", "must be 0 (deactivated) up to %v, got %v", 31*320*time.Hour, t)
	}
	v.rangeInt("amf.nas.max_retransmissions", n.MaxRetransmissions, 0, 16)
	v.rangeInt("amf.nas.paging_retransmissions", n.PagingRetransmissions, 0, 16)
	// 0 is the default (T3512 + 4 min, TS 24.501 5.3.7), not "never".
	if t := n.MobileReachable; t < 0 || t > 31*320*time.Hour+4*time.Minute {
		v.fail("amf.nas.mobile_reachable", "must be 0 (T3512 + 4m) or a positive duration, got %v", t)
	}
	if c := n.UnknownSubscriberCause; c != 3 && c != 7 {
		v.fail("amf.nas.unknown_subscriber_cause", "must be 3 (illegal UE) or 7 (5GS services not allowed), got %d", c)
	}
}

// n2Addr: the AMF listens there and gNBs (the simulator, node.json) dial it,
// so it is a literal IP and a real port (38412 by TS 38.412 7).
func (v *validator) n2Addr(field, addr string) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		v.fail(field, "want IP:port: %v", err)
		return
	}
	if net.ParseIP(host) == nil {
		v.fail(field, "want IP:port, got host %q (0.0.0.0 listens on every address)", host)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		v.fail(field, "want IP:port with a port in 1..65535, got port %q", port)
	}
}

// amfName goes in NG Setup Response as AMF Name, a PrintableString of 1 to
// 150 characters (TS 38.413 9.3.3.21; the ITU-T X.680 PrintableString set).
func (v *validator) amfName(field, name string) {
	if len(name) < 1 || len(name) > 150 {
		v.fail(field, "want 1 to 150 characters (TS 38.413 9.3.3.21), got %d", len(name))
	}
	for _, c := range name {
		printable := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.ContainsRune(" '()+,-./:=?", c)
		if !printable {
			v.fail(field, "%q is not a PrintableString character (TS 38.413 9.3.3.21: letters, digits, space and '()+,-./:=?)", string(c))
			return
		}
	}
}

func (v *validator) udm(u *UDM) {
	seen := map[int]bool{}
	for i, k := range u.SUCIKeys {
		f := fmt.Sprintf("udm.suci_keys[%d]", i)
		v.rangeInt(f+".id", k.ID, 0, 255)
		if seen[k.ID] {
			v.fail(f+".id", "duplicate key id %d", k.ID)
		}
		seen[k.ID] = true
		v.oneOf(f+".scheme", k.Scheme, "profile_a", "profile_b")
		v.hex(f+".private_key", k.PrivateKey, 32)
	}
}

func (v *validator) subscribers(f string, r SubscriberRange, home PLMN) {
	v.digits(f+".imsi", r.IMSI, 15, 15)
	if r.Count < 1 {
		v.fail(f+".count", "must be at least 1")
	} else {
		v.imsiRange(f+".count", r, home)
	}
	v.hex(f+".k", r.K, 16)
	switch {
	case r.OPc != "" && r.OP != "":
		v.fail(f+".op", "give either opc or op, not both")
	case r.OPc != "":
		v.hex(f+".opc", r.OPc, 16)
	case r.OP != "":
		v.hex(f+".op", r.OP, 16)
	default:
		v.fail(f+".opc", "opc or op is needed")
	}
	v.hex(f+".sqn", r.SQN, 6)
	v.hex(f+".amf", r.AMF, 2)
	v.snssais(f+".snssais", r.SNSSAIs)
	v.dnns(f+".dnns", r.DNNs)
	v.sessionQoS(f, r)
}

// sessionQoS checks the optional session QoS of a subscriber range: bit
// rates as TS 29.571 writes them, a non-GBR default 5QI, an ARP level.
func (v *validator) sessionQoS(f string, r SubscriberRange) {
	if a := r.SessionAMBR; a != nil {
		_, err := domain.ParseBitRate(a.Uplink)
		v.check(f+".session_ambr.uplink", err)
		_, err = domain.ParseBitRate(a.Downlink)
		v.check(f+".session_ambr.downlink", err)
	}
	if r.FiveQI != 0 {
		v.check(f+".5qi", domain.CheckDefault5QI(r.FiveQI))
	}
	if r.ARPPriority != 0 {
		v.check(f+".arp_priority", domain.CheckARPPriority(r.ARPPriority))
	}
}

// store: a mongodb backend needs a server and a database to open.
func (v *validator) store(s *Store) {
	v.oneOf("udr.store.backend", s.Backend, "embedded", "mongodb")
	if s.Backend != "mongodb" {
		return
	}
	if !strings.HasPrefix(s.MongoDB.URI, "mongodb://") && !strings.HasPrefix(s.MongoDB.URI, "mongodb+srv://") {
		v.fail("udr.store.mongodb.uri", "want mongodb:// or mongodb+srv://, got %q", s.MongoDB.URI)
	}
	if s.MongoDB.Database == "" {
		v.fail("udr.store.mongodb.database", "a database name is needed")
	}
}

// logRotation: a size of 0 turns rotation off; files kept must be 1 or more.
func (v *validator) logRotation(c *Config) {
	if c.LogMaxSizeMB < 0 {
		v.fail("log_max_size_mb", "must be 0 (no rotation) or more, got %d", c.LogMaxSizeMB)
	}
	if c.LogMaxFiles < 1 {
		v.fail("log_max_files", "must be at least 1, got %d", c.LogMaxFiles)
	}
}

// dnns: a DNN is an APN network identifier (TS 23.003 9A, 9.1.1).
func (v *validator) dnns(f string, list []string) {
	for i, dnn := range list {
		_, err := domain.ParseDNN(dnn)
		v.check(fmt.Sprintf("%s[%d]", f, i), err)
	}
}

// validityPeriod: discovery results carry it as whole seconds in an int32
// (TS 29.510 6.2.6.2.3 validityPeriod); under 1 s it is sent as 0 and the
// NRF client (sbi.NRFClient) then never caches, one NRF query per UE.
func (v *validator) validityPeriod(field string, d time.Duration) {
	v.int32Seconds(field, d, "discovery results are cached that long", "TS 29.510 validityPeriod")
}

// heartbeatTimer: the NRF assigns it as whole seconds in an int32
// (TS 29.510 6.1.6.2.2 heartBeatTimer); 0 would mean no heartbeats, and a
// dead NF would then stay discoverable.
func (v *validator) heartbeatTimer(field string, d time.Duration) {
	v.int32Seconds(field, d, "NFs send a heartbeat that often", "TS 29.510 heartBeatTimer")
}

// int32Seconds checks a duration sent as whole seconds in an int32, at
// least one: why says what the second means, attr which attribute carries it.
func (v *validator) int32Seconds(field string, d time.Duration, why, attr string) {
	const most = math.MaxInt32 * time.Second
	switch {
	case d < time.Second:
		v.fail(field, "must be at least 1s (%s), got %v", why, d)
	case d > most:
		v.fail(field, "must be at most %v (an int32 of seconds), got %v", most, d)
	case d%time.Second != 0:
		v.fail(field, "must be whole seconds (%s), got %v", attr, d)
	}
}

// nf: both ports are served, and the supervisor polls /healthz on the metrics
// port (node.waitHealthy), so neither may be 0.
// imsiRange: the UDR provisions Count consecutive IMSIs from the first
// (prov.Range.IMSIs). Only the MSIN may count up: an IMSI is MCC (3 digits),
// MNC (2 or 3) and MSIN, 15 digits at most (TS 23.003 2.2), so a range that
// carries into the MNC names subscribers of another network, and one past
// 15 digits names none.
func (v *validator) imsiRange(field string, r SubscriberRange, home PLMN) {
	first, err := strconv.ParseUint(r.IMSI, 10, 64)
	if err != nil || len(r.IMSI) != 15 {
		return // the imsi check reports it
	}
	prefix := 3 + 3 // MCC and the longest MNC, for an IMSI of another PLMN
	if strings.HasPrefix(r.IMSI, home.String()) {
		prefix = len(home.String())
	}
	msinSpan := uint64(1)
	for range len(r.IMSI) - prefix {
		msinSpan *= 10
	}
	last := first - first%msinSpan + msinSpan - 1
	if uint64(r.Count)-1 > last-first {
		v.fail(field, "%d IMSIs from %s go past %d, the last IMSI with MCC-MNC %s (TS 23.003 2.2)", r.Count, r.IMSI, last, r.IMSI[:prefix])
	}
}

func (v *validator) nf(s NFSpec, n NF) {
	key := s.Key()
	switch {
	case s.HasSBI():
		v.rangeInt(key+".sbi_port", n.SBIPort, 1, 65535)
	case n.SBIPort != 0:
		v.fail(key+".sbi_port", "%s serves no SBI: leave sbi_port out", s.Name)
	}
	v.rangeInt(key+".metrics_port", n.MetricsPort, 1, 65535)
}

// uniquePorts: every NF serves its SBI and metrics ports over TCP on
// sbi.bind_ip, so no two of them may be equal; the same holds for the NFs'
// extra sockets of one network. (The N2 port is SCTP, or UDP for SCTP over
// UDP, and shares no port space with the SBI.)
func (v *validator) uniquePorts(cat Catalog, c *Config) {
	seen := map[string]string{}
	check := func(network, field string, port int) {
		if port < 1 || port > 65535 {
			return // nf or n2Addr reports it
		}
		key := fmt.Sprintf("%s/%d", network, port)
		other, dup := seen[key]
		if !dup {
			seen[key] = field
			return
		}
		// The field written later (or written at all, against a default)
		// is the one the user just changed.
		if lineOf(v.root, field) < lineOf(v.root, other) {
			field, other = other, field
		}
		if line := lineOf(v.root, other); line > 0 {
			other = fmt.Sprintf("%s (line %d)", other, line)
		}
		v.fail(field, "port %d is already used by %s", port, other)
	}
	for _, s := range cat {
		ports := s.PortsIn(c)
		check("tcp", s.Key()+".sbi_port", ports.SBIPort)
		check("tcp", s.Key()+".metrics_port", ports.MetricsPort)
		for _, x := range s.Extra {
			if _, port, err := net.SplitHostPort(c.AddrOf(x)); err == nil {
				p, _ := strconv.Atoi(port)
				check(x.Network, x.Addr, p)
			}
		}
	}
}

func (v *validator) snssais(f string, list []SNSSAI) {
	for i, s := range list {
		v.check(fmt.Sprintf("%s[%d].sst", f, i), domain.CheckSST(s.SST))
		if s.HasSD() || s.SD == "" {
			v.check(fmt.Sprintf("%s[%d].sd", f, i), domain.CheckSD(s.SD))
		} else { // TS 23.003 28.4.2: a file says "no SD" by leaving sd out
			v.fail(fmt.Sprintf("%s[%d].sd", f, i), "%s means no SD (TS 23.003 28.4.2): leave sd out", s.SD)
		}
	}
}

// check reports err, the domain package's reason, at field.
func (v *validator) check(field string, err error) {
	if err != nil {
		v.fail(field, "%v", err)
	}
}

func (v *validator) oneOf(field, got string, allowed ...string) {
	if !slices.Contains(allowed, got) {
		v.fail(field, "must be one of %v, got %q", allowed, got)
	}
}

func (v *validator) rangeInt(field string, got, lo, hi int) {
	if got < lo || got > hi {
		v.fail(field, "must be in %d..%d, got %d", lo, hi, got)
	}
}

func (v *validator) digits(field, got string, minLen, maxLen int) {
	if len(got) < minLen || len(got) > maxLen {
		v.fail(field, "want %d to %d digits, got %q", minLen, maxLen, got)
		return
	}
	if _, err := strconv.ParseUint(got, 10, 64); err != nil {
		v.fail(field, "want decimal digits, got %q", got)
	}
}

func (v *validator) hex(field, got string, octets int) {
	b, err := hex.DecodeString(got)
	if err != nil || len(b) != octets {
		v.fail(field, "want %d hex digits, got %q", 2*octets, got)
	}
}
