package config

import (
	"reflect"
	"testing"
)

// The shipped example must load and say exactly what the defaults say, so
// that users reading it read the truth.
func TestShippedExampleMatchesDefaults(t *testing.T) {
	cfg, err := Load("../deploy/config/l25gc.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Path = ""
	if want := Default(); !reflect.DeepEqual(cfg, want) {
		t.Fatalf("deploy/config/l25gc.yaml differs from config.Default():\n got %+v\nwant %+v", cfg, want)
	}
}
