package ransim

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/l25gc/l25gc/protocol/ngapx"
)

// Several gNBs in one simulator (issue 12): each its own N2 association
// (NG Setup with its own Global gNB ID, TS 38.413 8.7.1) and its own N3
// address, all in the same tracking area, so a UE moves between them by
// handover alone, without a mobility registration.

// NthN3 is the N3 address of the i-th gNB (0-based) when the first has
// first: consecutive addresses (10.100.0.2, .3, … in the lab).
func NthN3(first netip.Addr, i int) netip.Addr {
	a := first
	for range i {
		a = a.Next()
	}
	return a
}

// ConnectGNBs connects n gNBs like cfg, with gNB IDs cfg.ID, cfg.ID+1, …
// and N3 addresses NthN3(cfg.N3, i). On error the ones connected are closed.
func ConnectGNBs(ctx context.Context, cfg GNBConfig, n int) ([]*GNB, error) {
	if n < 1 {
		return nil, fmt.Errorf("%d gNBs: want at least 1", n)
	}
	if cfg.ID == 0 {
		cfg.ID = 1
	}
	if !cfg.N3.IsValid() {
		cfg.N3 = DefaultN3
	}
	gnbs := make([]*GNB, 0, n)
	for i := range n {
		c := cfg
		c.ID, c.N3 = cfg.ID+uint32(i), NthN3(cfg.N3, i)
		g, err := Connect(ctx, c)
		if err != nil {
			for _, done := range gnbs {
				done.Close()
			}
			return nil, fmt.Errorf("gNB %d: %w", c.ID, err)
		}
		gnbs = append(gnbs, g)
	}
	return gnbs, nil
}

// ID is the gNB ID of the gNB's Global RAN Node ID (TS 38.413 9.3.1.6).
func (g *GNB) ID() uint32 { return g.cfg.ID }

// Cell is the gNB's one cell (NR CGI and TAI).
func (g *GNB) Cell() ngapx.Cell { return g.cell }
