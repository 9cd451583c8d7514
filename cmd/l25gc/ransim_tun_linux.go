package main

import (
	"errors"
	"os"
	"os/exec"
)

// tunPrerequisites says at once what --tun lacks, before the run starts.
func tunPrerequisites() error {
	if os.Geteuid() != 0 {
		return errors.New("--tun needs root: it creates a network namespace and a TUN device per UE (run with sudo)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return errors.New("--tun needs iproute2's ip command")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		return errors.New("--tun needs /dev/net/tun (modprobe tun)")
	}
	return nil
}
