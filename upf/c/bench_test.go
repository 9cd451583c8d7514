package upfc

import (
	"context"
	"testing"

	"github.com/l25gc/l25gc/protocol/pfcpx"
	"github.com/l25gc/l25gc/upf/rules"
)

// BenchmarkEstablishDelete measures one PFCP session establishment and
// deletion round trip between pfcpx.Client and UPF-C, over UDP and over
// X-IO: go test -run - -bench EstablishDelete -benchtime 2000x ./upf/c
func BenchmarkEstablishDelete(b *testing.B) {
	for _, transport := range []string{"tcp", "xio"} {
		name := map[string]string{"tcp": "udp", "xio": "xio"}[transport]
		b.Run(name, func(b *testing.B) {
			cfg := testConfig(b)
			cfg.SBI.Transport = transport
			cfg.UPF.C.PFCPAddr = freeUDPAddr(b)
			u := startUPFC(b, cfg, rules.NewMemTable())
			c := pfcpx.NewClient(pfcpx.ClientConfig{UDPAddr: "127.0.0.1:0"})
			defer c.Close()
			upf := pfcpx.Addr(cfg)
			ctx := context.Background()
			if err := c.Associate(ctx, upf); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				est, err := c.Establish(ctx, upf, pduSession("10.60.0.1"))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.Delete(ctx, upf, est.UPSEID); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			u.Stop(ctx)
		})
	}
}
