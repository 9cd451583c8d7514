package config

import "time"

// Default test keys. The SUCI private keys are the published ones of TS 33.501
// Annex C.4: fine for a testbed, to be replaced on any network with real UEs.
const (
	DefaultSUCIProfileAKey = "c53c22208b61860b06c62e5406a7b330c2b577aa5558981510d128247d38bd1d"
	DefaultSUCIProfileBKey = "f1ab1074477ebcc7f554ea1c5fc368b1616730155e0041ac447d6301975fecda"
	DefaultK               = "8baf473f2f8fd09487cccbd7097c6862"
	DefaultOPc             = "8e27b6af0e692e750f32667a3b14605d"
	DefaultFirstIMSI       = "208930000000001"
	DefaultSubscriberCount = 100
)

// Default returns a configuration that runs a whole core on this node.
func Default() *Config { return DefaultFor(Builtin) }

// DefaultFor is Default for the NFs of cat: each runs, on its default ports.
func DefaultFor(cat Catalog) *Config {
	c := defaultSections()
	c.NFs = cat.Names()
	for _, s := range cat {
		if ports := s.PortsIn(c); ports != nil {
			*ports = s.Ports
		}
	}
	return c
}

// defaultSections is every default but the NFs' ports and list.
func defaultSections() *Config {
	slices := []SNSSAI{{SST: 1, SD: "010203"}, {SST: 1, SD: "112233"}}
	return &Config{
		PLMN:     PLMN{MCC: "208", MNC: "93"},
		TACs:     []string{"000001"},
		SNSSAIs:  slices,
		DNNs:     []string{"internet"},
		DataDir:  "run/data",
		LogDir:   "run/log",
		LogLevel: "info",
		SBI:      SBI{Transport: "xio", BindIP: "127.0.0.1", OAuth2: "on", TLS: "off", XIOSpin: XIOSpin{Budget: 50 * time.Microsecond}},
		NRF:      NRF{ValidityPeriod: time.Hour, HeartbeatTimer: 10 * time.Second, AccessTokenTTL: time.Hour},
		Tuning:   Tuning{Procs: Procs{All: 1}},

		LogMaxSizeMB: 100,
		LogMaxFiles:  5,
		AMF: AMF{
			Name:  "l25gc-amf",
			GUAMI: GUAMI{RegionID: 0xCA, SetID: 0x3F8, Pointer: 0},
			NGAP: NGAP{Addr: "127.0.0.1:38412", Transport: "auto",
				MaxUEsPerGNB: 16384, MaxUEs: 131072, UEReleaseTimeout: 5 * time.Second,
				MaxAssociations: 1024, MaxMessageSize: 256 << 10, SCTPImpl: "own",
				TNGRELOCprep: 5 * time.Second, TNGRELOCoverall: 10 * time.Second},
			NAS: NAS{
				Integrity: []string{"NIA2"},
				Ciphering: []string{"NEA2", "NEA0"},
				T3550:     6 * time.Second, T3560: 6 * time.Second, T3570: 6 * time.Second,
				MaxRetransmissions:     4,
				T3512:                  54 * time.Minute,
				UnknownSubscriberCause: 7,
				UnauthenticatedTimeout: 30 * time.Second,
				T3513:                  2 * time.Second,
				PagingRetransmissions:  2,
				ImplicitDeregistration: 4 * time.Minute,
			},
			Network:  NetName{Full: "L25GC+", Short: "L25GC"},
			Relative: 255,
			Persist:  Persist{Enabled: true, FlushInterval: 5 * time.Millisecond, MaxPending: 8192},
			Limiter:  DefaultLimiter(),
		},
		UDM: UDM{
			SUCIKeys: []SUCIKey{
				{ID: 1, Scheme: "profile_a", PrivateKey: DefaultSUCIProfileAKey},
				{ID: 2, Scheme: "profile_b", PrivateKey: DefaultSUCIProfileBKey},
			},
		},
		UDR: UDR{
			Store:          Store{Backend: "embedded", Path: "udr.db", MongoDB: MongoDB{URI: "mongodb://127.0.0.1:27017", Database: "free5gc"}},
			AdminTokenFile: "admin.token",
			MaxBulk:        10000,
		},
		SMF: defaultSMF(),
		UPF: UPF{
			C:           UPFC{PFCPAddr: "127.0.0.1:8805", T1: 3 * time.Second, N1: 3},
			N3:          UPFPort{IP: "10.100.0.1/24"},
			N6:          UPFPort{IP: "10.200.0.1/24"},
			MaxSessions: 65536,
			Buffer:      UPFBuffer{PerSession: 64, Total: 16384},
			QoS:         defaultUPFQoS(),
		},
		Subscribers: []SubscriberRange{{
			IMSI: DefaultFirstIMSI, Count: DefaultSubscriberCount,
			K: DefaultK, OPc: DefaultOPc, SQN: "000000000020", AMF: "8000",
			SNSSAIs: slices, DNNs: []string{"internet"},
			SessionAMBR: &AMBR{Uplink: "1 Gbps", Downlink: "2 Gbps"}, FiveQI: 9, ARPPriority: 8,
		}},
	}
}
