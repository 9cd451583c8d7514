package config

import (
	"reflect"
	"testing"

	"gopkg.in/yaml.v3"
)

// `l25gc config show` output and tools that write configs must load back
// to the same values.
func TestMarshalledConfigLoadsBackUnchanged(t *testing.T) {
	want := Default()
	want.AMF.NGAP.Transport = "udp"
	data, err := yaml.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse("roundtrip.yaml", data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	got.Path = ""
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip changed the config:\n%s", data)
	}
}
