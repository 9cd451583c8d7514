package config

import (
	"strings"
	"testing"
)

// The SMF's data networks are refused at load with the field that is
// wrong: a UE pool that cannot hand out an address, or that two DNNs
// would hand out twice; so are smf.qos.weights that are not a 5QI's.
func TestSMFValidation(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"pool not a prefix", "smf:\n  dnns:\n    - {dnn: internet, pool: 10.60.0.0}\n",
			`node.yaml:3: smf.dnns[0].pool: want an IPv4 prefix such as 10.60.0.0/16, got "10.60.0.0"`},
		{"IPv6 pool", "smf:\n  dnns:\n    - {dnn: internet, pool: \"fd00::/64\"}\n", "smf.dnns[0].pool: want an IPv4 prefix"},
		{"pool too small", "smf:\n  dnns:\n    - {dnn: internet, pool: 10.60.0.0/31}\n", "node.yaml:3: smf.dnns[0].pool: 10.60.0.0/31 has no room for UEs"},
		{"host bits", "smf:\n  dnns:\n    - {dnn: internet, pool: 10.60.0.1/16}\n", "smf.dnns[0].pool: 10.60.0.1/16 has host bits set: the prefix is 10.60.0.0/16"},
		{"overlapping pools", "smf:\n  dnns:\n    - {dnn: internet, pool: 10.60.0.0/16}\n    - {dnn: ims, pool: 10.60.8.0/24}\n",
			"node.yaml:4: smf.dnns[1].pool: 10.60.8.0/24 overlaps the pool 10.60.0.0/16 of another DNN"},
		{"DNN twice", "smf:\n  dnns:\n    - {dnn: internet, pool: 10.60.0.0/16}\n    - {dnn: Internet, pool: 10.61.0.0/16}\n",
			`node.yaml:4: smf.dnns[1].dnn: DNN "Internet" is listed twice`},
		{"bad DNN", "smf:\n  dnns:\n    - {dnn: \"my dnn\", pool: 10.60.0.0/16}\n", `smf.dnns[0].dnn: "my dnn" is not a DNN`},
		{"DNS not IPv4", "smf:\n  dnns:\n    - {dnn: internet, pool: 10.60.0.0/16, dns: [\"dns.google\"]}\n",
			`node.yaml:3: smf.dnns[0].dns[0]: want an IPv4 address, got "dns.google"`},
		{"SMF port clash", "smf:\n  sbi_port: 29518\n", "smf.sbi_port: port 29518 is already used by amf.sbi_port"},
		// smf.qos.weights: keys are 5QIs, weights 1..100
		{"5QI 0", "smf:\n  qos:\n    weights:\n      \"0\": 2\n",
			`node.yaml:4: smf.qos.weights.0: "0" is not a 5QI: want 1..254`},
		{"5QI 256", "smf:\n  qos:\n    weights:\n      9: 1\n      256: 2\n", `node.yaml:5: smf.qos.weights.256: "256" is not a 5QI`},
		{"not a number", "smf:\n  qos:\n    weights:\n      voice: 2\n", `node.yaml:4: smf.qos.weights.voice: "voice" is not a 5QI`},
		{"weight 0", "smf:\n  qos:\n    weights:\n      \"1\": 0\n", "node.yaml:4: smf.qos.weights.1: weight 0 of 5QI 1: want 1..100"},
		{"weight 101", "smf:\n  qos:\n    weights:\n      \"1\": 101\n", "node.yaml:4: smf.qos.weights.1: weight 101 of 5QI 1: want 1..100"},
		{"5QI twice", "smf:\n  qos:\n    weights:\n      \"9\": 1\n      \"09\": 2\n", `smf.qos.weights.9: 5QI 9 is listed twice ("09" and "9")`},
		{"weight not a number", "smf:\n  qos:\n    weights:\n      \"1\": high\n", "node.yaml:4: smf.qos.weights.1"},
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

func TestSMFDefaultsAndUPFAddress(t *testing.T) {
	c := Default()
	if len(c.SMF.DNNs) != 1 || c.SMF.DNNs[0].DNN != "internet" || c.SMF.DNNs[0].Pool != "10.60.0.0/16" {
		t.Fatalf("default SMF DNNs %+v", c.SMF.DNNs)
	}
	// This branch's table has no upf-c yet: UDP unless the node runs it.
	c.SBI.Transport = "tcp"
	if got := c.SMFUPFAddr(); got != "udp:127.0.0.1:8805" {
		t.Errorf("UPF N4 address over tcp %q, want udp:127.0.0.1:8805", got)
	}
	c.SBI.Transport, c.NFs = "xio", append(c.NFs, "upf-c")
	if got := c.SMFUPFAddr(); got != "xio:127.0.0.1:8805" {
		t.Errorf("UPF N4 address on an X-IO node with UPF-C %q, want xio:127.0.0.1:8805", got)
	}
	c, err := Parse("node.yaml", []byte("smf:\n  upf:\n    n4_addr: udp:10.0.0.9:8805\n  dnns:\n    - {dnn: internet, pool: 10.60.0.0/30}\n    - {dnn: ims, pool: 10.61.0.0/24}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.SMFUPFAddr() != "udp:10.0.0.9:8805" || len(c.SMF.DNNs) != 2 {
		t.Errorf("SMF section %+v", c.SMF)
	}
}

// smf.qos.weights: keys are 5QIs (quoted or not); an unlisted 5QI weighs
// 1, and none at all 0 (no weight sent). Bad ones: TestSMFValidation.
func TestSMFQoSWeights(t *testing.T) {
	c, err := Parse("node.yaml", []byte("smf:\n  qos:\n    weights: {\"1\": 3, 9: 2, 128: 100}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for fiveQI, want := range map[uint8]uint16{1: 3, 9: 2, 128: 100, 5: 1, 254: 1} {
		if got := c.SMF.QoS.Weight(fiveQI); got != want {
			t.Errorf("5QI %d weighs %d, want %d", fiveQI, got, want)
		}
	}
	if got := Default().SMF.QoS.Weight(9); got != 0 {
		t.Errorf("without weights 5QI 9 weighs %d, want 0 (none sent)", got)
	}
}
