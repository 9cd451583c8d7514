package config

import (
	"strings"
	"testing"
)

// The SMF's data networks are refused at load with the field that is
// wrong: a UE pool that cannot hand out an address, or that two DNNs
// would hand out twice.
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
