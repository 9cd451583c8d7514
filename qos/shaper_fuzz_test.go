package qos

import (
	"errors"
	"testing"
)

// FuzzShaper drives a shaper with arbitrary packets, clock steps, rule
// changes and flushes (packets in by Enqueue or by Submit, the fast path),
// and checks that nothing is lost or duplicated:
// every packet queued comes back exactly once (sent or flushed), in its
// flow's order, and no Dequeue returns more than asked.
func FuzzShaper(f *testing.F) {
	f.Add([]byte{0, 0, 200, 1, 0, 1, 100, 1, 2, 0, 0, 50, 0, 1, 255, 9, 3, 0, 0, 0})
	f.Add([]byte{1, 7, 250, 3, 4, 1, 0, 0, 0, 7, 80, 0, 2, 0, 9, 200})
	f.Add([]byte{5, 0, 30, 0, 5, 1, 30, 0, 5, 0, 250, 0, 5, 1, 20, 1, 2, 0, 31, 90, 5, 2, 10, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		cfg := ShaperConfig{AMBR: 4 * mbit, Hz: nsHz, Flows: []FlowConfig{{GBR: mbit, MBR: 2 * mbit}, {}, {MBR: 3 * mbit, Weight: 2}}}
		s, err := NewShaper(cfg, 0)
		if err != nil {
			t.Fatal(err)
		}
		queued := make([][]uint64, MaxFlows) // handles in flight, per flow, in order
		take := func(p Packet) {
			q := queued[p.Flow]
			if len(q) == 0 || q[0] != p.Handle {
				t.Fatalf("flow %d gave handle %d, expected the head of %v", p.Flow, p.Handle, q)
			}
			queued[p.Flow] = q[1:]
		}
		var now, handle uint64
		for i := 0; i+3 < len(ops); i += 4 {
			op, flow, a, b := ops[i]%6, int(ops[i+1]%MaxFlows), ops[i+2], ops[i+3]
			now += uint64(b) * 37_000
			switch op {
			case 0, 1: // a packet
				handle++
				v := s.Enqueue(flow, now, handle, uint32(a)*40+1, Colour(op))
				if v.Queued() {
					queued[flow] = append(queued[flow], handle)
				}
			case 2: // the forwarding loop
				max := int(a % 40)
				out := s.Dequeue(now, max, nil)
				if len(out) > max {
					t.Fatalf("Dequeue(max %d) gave %d", max, len(out))
				}
				for _, p := range out {
					take(p)
				}
			case 3: // a rule change
				if flow < len(cfg.Flows) {
					cfg.Flows[flow].GBR = uint64(a) * 20_000
					cfg.Flows[flow].MBR = uint64(a)*20_000 + uint64(b)*40_000
					cfg.Flows[flow].Removed = b%7 == 0
				}
				if err := s.Configure(cfg, now); err != nil && !errors.Is(err, ErrBusy) {
					t.Fatalf("configure %+v: %v", cfg, err)
				}
			case 4: // a flow or session going away
				for _, p := range s.Flush(flow) {
					take(p)
				}
			case 5: // a packet by UPF-U's fast path: sent at once only when nothing is queued
				handle++
				v, p := s.Submit(flow, now, handle, uint32(a)*40+1, Colour(b%2))
				switch {
				case v.Sent():
					for fl, q := range queued {
						if len(q) != 0 {
							t.Fatalf("handle %d of flow %d sent at once while flow %d holds %v", handle, flow, fl, q)
						}
					}
					if p.Handle != handle || p.Flow != flow {
						t.Fatalf("Submit sent %+v for handle %d of flow %d", p, handle, flow)
					}
				case v.Queued():
					queued[flow] = append(queued[flow], handle)
				}
			}
		}
		for fl := 0; fl < MaxFlows; fl++ {
			for _, p := range s.Flush(fl) {
				take(p)
			}
			if len(queued[fl]) != 0 {
				t.Fatalf("flow %d lost %v", fl, queued[fl])
			}
		}
		if s.Backlog() != 0 {
			t.Fatalf("backlog %b after flushing all", s.Backlog())
		}
	})
}
