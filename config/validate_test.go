package config

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// subscriberRange is a subscribers list of one range with the default keys.
func subscriberRange(imsi string, count int) string {
	return fmt.Sprintf("subscribers:\n  - imsi: %q\n    count: %d\n    k: %s\n    opc: %s\n    sqn: \"000000000020\"\n    amf: \"8000\"\n",
		imsi, count, DefaultK, DefaultOPc)
}

// Values that decode but make no sense for a running core are refused at
// load, naming the file, the line and the field, rather than failing later
// in an NF or silently misbehaving.
func TestValidateRefusesNonsense(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"validity period zero", "nrf: {validity_period: 0s}\n", "node.yaml:1: nrf.validity_period: must be at least 1s"},
		{"validity period under a second", "nrf:\n  validity_period: 500ms\n", "node.yaml:2: nrf.validity_period: must be at least 1s"},
		{"validity period not whole seconds", "nrf:\n  validity_period: 1500ms\n", "node.yaml:2: nrf.validity_period: must be whole seconds"},
		{"heartbeat timer zero", "nrf: {heartbeat_timer: 0s}\n", "node.yaml:1: nrf.heartbeat_timer: must be at least 1s"},
		{"heartbeat timer not whole seconds", "nrf:\n  heartbeat_timer: 2500ms\n", "node.yaml:2: nrf.heartbeat_timer: must be whole seconds"},
		{"validity period beyond int32 seconds", "nrf:\n  validity_period: 1000000h\n", "node.yaml:2: nrf.validity_period: must be at most"},
		{"metrics port zero", "amf:\n  metrics_port: 0\n", "node.yaml:2: amf.metrics_port: must be in 1..65535, got 0"},
		{"sbi port zero", "udr:\n  sbi_port: 0\n", "node.yaml:2: udr.sbi_port: must be in 1..65535, got 0"},
		{"metrics port on another NF's sbi port", "amf:\n  sbi_port: 29518\npcf:\n  metrics_port: 29518\n",
			"node.yaml:4: pcf.metrics_port: port 29518 is already used by amf.sbi_port (line 2)"},
		{"port clash with a default", "pcf:\n  sbi_port: 9510\n", "node.yaml:2: pcf.sbi_port: port 9510 is already used by nrf.metrics_port"},
		{"subscriber range past 15 digits", subscriberRange("999999999999990", 11),
			"node.yaml:3: subscribers[0].count: 11 IMSIs from 999999999999990 go past 999999999999999"},
		{"subscriber range leaves its MCC-MNC", subscriberRange("208939999999999", 2),
			"node.yaml:3: subscribers[0].count: 2 IMSIs from 208939999999999 go past 208939999999999"},
		{"subscriber count zero", subscriberRange("208930000000001", 0), "node.yaml:3: subscribers[0].count: must be at least 1"},
		{"negative T3512", "amf:\n  nas:\n    t3512: -1m\n", "node.yaml:3: amf.nas.t3512: must be 0 (deactivated) up to 9920h0m0s"},
		{"T3513 zero", "amf:\n  nas:\n    t3513: 0s\n", "node.yaml:3: amf.nas.t3513: must be a positive duration up to 1h such as 30s, got 0s"},
		{"TNGRELOCprep zero", "amf:\n  ngap:\n    tng_reloc_prep: 0s\n", "node.yaml:3: amf.ngap.tng_reloc_prep: must be a positive duration up to 1h such as 30s, got 0s"},
		{"paging retransmissions negative", "amf:\n  nas:\n    paging_retransmissions: -1\n", "node.yaml:3: amf.nas.paging_retransmissions: must be in 0..16, got -1"},
		{"UPF buffer per session zero", "upf:\n  buffer:\n    per_session: 0\n", "node.yaml:3: upf.buffer.per_session: must be in 1..65536, got 0"},
		{"UPF buffer total below per session", "upf:\n  buffer:\n    per_session: 64\n    total: 10\n", "node.yaml:4: upf.buffer.total: must be in 64..4194304, got 10"},
		{"T3512 past GPRS timer 3", "amf:\n  nas:\n    t3512: 10000h\n", "node.yaml:3: amf.nas.t3512: must be 0 (deactivated) up to 9920h0m0s"},
		{"N2 port not a number", "amf:\n  ngap:\n    addr: 127.0.0.1:sctp\n", "node.yaml:3: amf.ngap.addr: want IP:port with a port in 1..65535"},
		{"N2 port zero", "amf:\n  ngap:\n    addr: 127.0.0.1:0\n", "node.yaml:3: amf.ngap.addr: want IP:port with a port in 1..65535"},
		{"N2 host not an IP", "amf:\n  ngap:\n    addr: amf.local:38412\n", `node.yaml:3: amf.ngap.addr: want IP:port, got host "amf.local"`},
		{"N2 without port", "amf:\n  ngap:\n    addr: 127.0.0.1\n", "node.yaml:3: amf.ngap.addr: want IP:port"},
		{"empty AMF name", "amf:\n  name: \"\"\n", "node.yaml:2: amf.name: want 1 to 150 characters"},
		{"AMF name not printable", "amf:\n  name: amf_1\n", `node.yaml:2: amf.name: "_" is not a PrintableString character`},
		{"no ciphering", "amf:\n  nas:\n    ciphering: []\n", "node.yaml:3: amf.nas.ciphering: at least one ciphering algorithm is needed"},
		{"no UE per gNB", "amf:\n  ngap:\n    max_ues_per_gnb: 0\n", "node.yaml:3: amf.ngap.max_ues_per_gnb: must be in 1..4294967296, got 0"},
		{"no UE at all", "amf:\n  ngap:\n    max_ues: 0\n", "node.yaml:3: amf.ngap.max_ues: must be in 1..1099511627776, got 0"},
		{"UE release timeout zero", "amf:\n  ngap:\n    ue_release_timeout: 0s\n",
			"node.yaml:3: amf.ngap.ue_release_timeout: must be a positive duration up to 1h"},
		{"unauthenticated timeout negative", "amf:\n  nas:\n    unauthenticated_timeout: -5s\n",
			"node.yaml:3: amf.nas.unauthenticated_timeout: must be a positive duration up to 1h"},
		{"unauthenticated timeout past an hour", "amf:\n  nas:\n    unauthenticated_timeout: 2h\n",
			"node.yaml:3: amf.nas.unauthenticated_timeout: must be a positive duration up to 1h"},
		{"bad DNN", "dnns: [internet, \"my dnn\"]\n", `node.yaml:1: dnns[1]: "my dnn" is not a DNN`},
		{"empty DNN label", "dnns: [\"ims..test\"]\n", `node.yaml:1: dnns[0]: "ims..test" is not a DNN`},
		{"5,000-character DNN", "dnns: [" + strings.Repeat("a", 5000) + "]\n", "node.yaml:1: dnns[0]: DNN"},
		{"no log file kept", "log_max_files: 0\n", "node.yaml:1: log_max_files: must be at least 1, got 0"},
		{"negative log size", "log_max_size_mb: -1\n", "node.yaml:1: log_max_size_mb: must be 0 (no rotation) or more"},
		{"persist lag zero", "amf:\n  persist:\n    flush_interval: 0s\n",
			"node.yaml:3: amf.persist.flush_interval: must be a positive duration up to 1s"},
		{"persist queue zero", "amf:\n  persist:\n    max_pending: 0\n", "node.yaml:3: amf.persist.max_pending: must be in 1..1048576, got 0"},
		{"bulk cap zero", "udr:\n  max_bulk: 0\n", "node.yaml:2: udr.max_bulk: must be at least 1, got 0"},
		{"wildcard bind without an advertised address", "sbi:\n  bind_ip: 0.0.0.0\n",
			"node.yaml:2: sbi.advertise_ip: needed with bind_ip 0.0.0.0"},
		{"advertised wildcard", "sbi:\n  advertise_ip: 0.0.0.0\n", `node.yaml:2: sbi.advertise_ip: not an IP address peers can reach: "0.0.0.0"`},
		{"NRF URI with a path", "sbi:\n  nrf_uri: http://10.0.0.1:29510/nnrf-nfm/v1\n", "node.yaml:2: sbi.nrf_uri: want the NRF's apiRoot"},
		{"oauth2 neither on nor off", "sbi:\n  oauth2: maybe\n", `node.yaml:2: sbi.oauth2: must be one of [on off], got "maybe"`},
		{"tls mode unknown", "sbi:\n  tls: strict\n", `node.yaml:2: sbi.tls: must be one of [off on mutual], got "strict"`},
		{"tls with xio-socket", "sbi:\n  transport: xio-socket\n  tls: mutual\n", "sbi.tls: TLS protects SBI over TCP"},
		{"access token ttl zero", "nrf: {access_token_ttl: 0s}\n", "node.yaml:1: nrf.access_token_ttl: must be at least 1s"},
		{"no NRF here and none named", "nfs: [ausf, amf]\n", "sbi.nrf_uri: needed when this node runs no NRF"},
		{"unknown NF", "nfs: [nrf, smsf]\n", `node.yaml:1: nfs[1]: unknown network function "smsf"`},
		{"NF listed twice", "nfs: [nrf, amf, amf]\n", "node.yaml:1: nfs[2]: amf is listed twice"},
		{"no NF at all", "nfs: []\n", "node.yaml:1: nfs: a node runs at least one network function"},
		{"SD ffffff", "snssais: [{sst: 1, sd: ffffff}]\n", "node.yaml:1: snssais[0].sd: ffffff means no SD"},
		{"mongodb without a mongodb URI", "udr:\n  store:\n    backend: mongodb\n    mongodb: {uri: \"http://db:27017\", database: free5gc}\n",
			`node.yaml:4: udr.store.mongodb.uri: want mongodb:// or mongodb+srv://, got "http://db:27017"`},
		{"mongodb without a database", "udr:\n  store:\n    backend: mongodb\n    mongodb: {database: \"\"}\n",
			"node.yaml:4: udr.store.mongodb.database: a database name is needed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("node.yaml", []byte(c.yaml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// Edge values that are sensible load.
func TestValidateAcceptsEdges(t *testing.T) {
	for name, yaml := range map[string]string{
		"validity period of one second": "nrf: {validity_period: 1s}\n",
		"heartbeat timer of one second": "nrf: {heartbeat_timer: 1s}\n",
		"T3512 deactivated":             "amf:\n  nas:\n    t3512: 0s\n",
		"persist off, lag unset":        "amf:\n  persist:\n    enabled: false\n    flush_interval: 0s\n",
		"range up to the last MSIN":     subscriberRange("208939999999990", 10),
		"IPv6 N2 address":               "amf:\n  ngap:\n    addr: \"[::1]:38412\"\n",
		"mongodb backend":               "udr:\n  store:\n    backend: mongodb\n",
		"DNN with labels":               "dnns: [ims.mnc093.mcc208.gprs, internet-2]\n",
		"only null ciphering":           "amf:\n  nas:\n    ciphering: [NEA0]\n",
		"one UE per gNB":                "amf:\n  ngap:\n    max_ues_per_gnb: 1\n    max_ues: 1\n",
		"short UE timers":               "amf:\n  ngap:\n    ue_release_timeout: 1ms\n  nas:\n    unauthenticated_timeout: 1h\n",
		"a node of a core spanning nodes": "nfs: [ausf, pcf, amf]\nsbi:\n  bind_ip: 0.0.0.0\n  advertise_ip: 10.0.0.2\n" +
			"  nrf_uri: http://10.0.0.1:29510\n",
	} {
		if _, err := Parse("node.yaml", []byte(yaml)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestAdvertisedAddressesAndNRF(t *testing.T) {
	c, err := Parse("node.yaml", []byte("nfs: [amf]\nsbi:\n  bind_ip: 0.0.0.0\n  advertise_ip: 10.0.0.2\n  nrf_uri: http://10.0.0.1:29510/\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Addr(c.AMF.SBIPort); got != "0.0.0.0:29518" {
		t.Errorf("listen address %s", got)
	}
	if got := c.AdvertisedAddr(c.AMF.SBIPort); got != "10.0.0.2:29518" {
		t.Errorf("advertised address %s", got)
	}
	if got := c.NRFURI(); got != "http://10.0.0.1:29510" {
		t.Errorf("NRF %s", got)
	}
	if c.Runs("nrf") || !c.Runs("amf") {
		t.Errorf("runs %v", c.NFs)
	}
	if d := Default(); d.NRFURI() != "http://127.0.0.1:29510" || len(d.NFs) != len(AllNFs) {
		t.Errorf("defaults: NRF %s, NFs %v", d.NRFURI(), d.NFs)
	}
}

// sbi.oauth2 and sbi.tls are written bare in YAML (on, off, mutual) and
// read as the words, on by default and off when the file says so.
func TestSBISecuritySwitches(t *testing.T) {
	c, err := Parse("node.yaml", []byte("sbi:\n  transport: tcp\n  oauth2: off\n  tls: mutual\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.OAuth2On() || !c.TLSOn() || c.SBIScheme() != "https" || !strings.HasPrefix(c.NRFURI(), "https://") {
		t.Errorf("oauth2 %q tls %q: OAuth2On %v TLSOn %v NRF %s", c.SBI.OAuth2, c.SBI.TLS, c.OAuth2On(), c.TLSOn(), c.NRFURI())
	}
	if d := Default(); !d.OAuth2On() || d.TLSOn() {
		t.Errorf("defaults: OAuth2On %v TLSOn %v, want OAuth2 on and h2c", d.OAuth2On(), d.TLSOn())
	}
}

func TestMobileReachableTimerDefaultsToT3512PlusFourMinutes(t *testing.T) {
	for _, c := range []struct {
		n    NAS
		want time.Duration
	}{
		{NAS{T3512: 54 * time.Minute}, 58 * time.Minute},
		{NAS{T3512: 0}, 0},
		{NAS{T3512: 54 * time.Minute, MobileReachable: time.Minute}, time.Minute},
	} {
		if got := c.n.MobileReachableTimer(); got != c.want {
			t.Errorf("T3512 %v, mobile_reachable %v: got %v, want %v", c.n.T3512, c.n.MobileReachable, got, c.want)
		}
	}
}
