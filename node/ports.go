package node

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/n2"
)

// socket is one socket an NF of this node will bind.
type socket struct {
	nf      string
	field   string // the config field that sets its port
	network string // tcp, udp or n2
	addr    string
	n2      string // N2 transport (kernel, udp, auto) when network is n2
}

// sockets lists what the NFs cfg runs will bind: each one's SBI and metrics
// ports over TCP on sbi.bind_ip (the SBI keeps TCP beside X-IO for peers on
// other nodes) and its extra sockets (the AMF's N2).
func sockets(cfg *config.Config, cat config.Catalog) []socket {
	var out []socket
	for _, spec := range runHere(cfg, cat) {
		ports := spec.PortsIn(cfg)
		if spec.HasSBI() {
			out = append(out, socket{spec.Name, spec.Key() + ".sbi_port", "tcp", cfg.Addr(ports.SBIPort), ""})
		}
		out = append(out, socket{spec.Name, spec.Key() + ".metrics_port", "tcp", cfg.Addr(ports.MetricsPort), ""})
		for _, x := range spec.Extra {
			out = append(out, socket{spec.Name, x.Addr, x.Network, cfg.AddrOf(x), cfg.TransportOf(x)})
		}
	}
	return out
}

// CheckPorts binds, and releases at once, every socket the NFs cfg runs
// will bind, the way each binds it, and refuses the first one taken with
// a line naming its port and config field, and when an L25GC+ core holds
// it, how to stop that core. An NF started on a taken port would only exit
// and be restarted in vain.
func CheckPorts(cfg *config.Config, cat config.Catalog) error {
	for _, s := range sockets(cfg, cat) {
		err := tryBind(s)
		if err == nil {
			continue
		}
		port := portOf(s.addr)
		if !errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("node: %s cannot bind %s (%s): %v", s.nf, s.addr, s.field, err)
		}
		if owner := coreHolding(cfg, port); owner != "" {
			return fmt.Errorf("node: port %d (%s, %s %s) is in use by %s; stop it with `l25gc down`, or give this node other ports",
				port, s.field, s.network, s.addr, owner)
		}
		return fmt.Errorf("node: port %d (%s, %s %s) is in use by another program; stop it, or set %s to a free port",
			port, s.field, s.network, s.addr, s.field)
	}
	return nil
}

func tryBind(s socket) error {
	switch s.network {
	case "tcp":
		ln, err := net.Listen("tcp", s.addr)
		if err == nil {
			ln.Close()
		}
		return err
	case "n2":
		ln, _, err := n2.Listen(s.n2, s.addr)
		if err == nil {
			ln.Close()
		}
		return err
	default:
		pc, err := net.ListenPacket(s.network, s.addr)
		if err == nil {
			pc.Close()
		}
		return err
	}
}

func portOf(addr string) int {
	_, p, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(p)
	return port
}

// coreHolding names the running L25GC+ core that serves port, if any: the
// one of cfg's data directory or the one `l25gc up` started last.
func coreHolding(cfg *config.Config, port int) string {
	for _, read := range []func() (*State, error){
		func() (*State, error) { return ReadState(cfg) },
		ReadCurrentState,
	} {
		st, err := read()
		if err != nil || !Alive(st.SupervisorPID) || !st.uses(port) {
			continue
		}
		return fmt.Sprintf("the L25GC+ core of supervisor pid %d (%s)", st.SupervisorPID, st.Path)
	}
	return ""
}

// uses reports whether one of the core's processes serves port.
func (st *State) uses(port int) bool {
	if portOf(st.N2) == port {
		return true
	}
	for _, p := range st.NFs {
		if portOf(p.SBIAddr) == port || portOf(p.MetricsAddr) == port {
			return true
		}
	}
	return false
}
