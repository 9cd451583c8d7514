package wiregolden

import (
	"encoding/json"
	"io"
	"os"
	"testing"

	"github.com/l25gc/l25gc/sbi"
)

// BenchmarkBodies times encoding and decoding each golden body, to compare
// the two encoding/json builds (go test -bench . with and without
// GOEXPERIMENT=jsonv2), and encoding/json's decoding with the SBI's
// (sbi.UnmarshalJSON, sbi-unmarshal/*).
func BenchmarkBodies(b *testing.B) {
	for _, body := range registrationBodies() {
		data, err := os.ReadFile(goldenPath(body.name))
		if err != nil {
			b.Fatal(err)
		}
		b.Run("marshal/"+body.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(body.value); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, dec := range []struct {
			name      string
			unmarshal func([]byte, any) error
		}{{"unmarshal", json.Unmarshal}, {"sbi-unmarshal", sbi.UnmarshalJSON}} {
			b.Run(dec.name+"/"+body.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := dec.unmarshal(data, body.fresh()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkWriteJSON times a producer's answer (sbi.WriteJSON) against the
// json.NewEncoder(w).Encode it replaced.
func BenchmarkWriteJSON(b *testing.B) {
	for _, body := range registrationBodies() {
		b.Run("newencoder/"+body.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = json.NewEncoder(io.Discard).Encode(body.value)
			}
		})
		b.Run("sbi/"+body.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = sbi.EncodeJSON(io.Discard, body.value)
			}
		})
	}
}

