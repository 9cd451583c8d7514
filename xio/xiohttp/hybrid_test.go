package xiohttp_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/xio/xiohttp"
)

func hybrids() []*xiohttp.Hybrid {
	return []*xiohttp.Hybrid{
		xiohttp.NewHybrid(xiohttp.NewMessageTransport(), sbi.NewTCP()),
		xiohttp.NewHybrid(xiohttp.NewSocketTransport(), sbi.NewTCP()),
	}
}

// A hybrid endpoint answers on this node's shared memory and on TCP at the
// same address, so tools and remote peers reach it too.
func TestHybridServesBothWays(t *testing.T) {
	for _, h := range hybrids() {
		t.Run(h.Name(), func(t *testing.T) {
			addr, _ := serve(t, h)
			for _, via := range []sbi.Transport{h, sbi.NewTCP()} {
				checkEcho(t, &http.Client{Transport: via.RoundTripper()}, addr)
			}
		})
	}
}

// A peer that only speaks TCP (another node) is reached over TCP, with the
// request body intact even when the caller's request cannot replay it.
func TestHybridFallsBackToTCPForPeersElsewhere(t *testing.T) {
	addr, _ := serve(t, sbi.NewTCP())
	for _, h := range hybrids() {
		t.Run(h.Name(), func(t *testing.T) {
			c := &http.Client{Transport: h.RoundTripper()}
			checkEcho(t, c, addr)
			req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/nudm-sdm/v2/imsi-1/am-data",
				io.NopCloser(strings.NewReader(`{"no":"GetBody"}`)))
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated || !strings.Contains(string(got), `{\"no\":\"GetBody\"}`) {
				t.Fatalf("status %d, body %s", resp.StatusCode, got)
			}
		})
	}
}

// Nobody at the address on either path: the caller gets the TCP refusal.
func TestHybridNobodyThere(t *testing.T) {
	addr := nextAddr()
	for _, h := range hybrids() {
		if _, err := (&http.Client{Transport: h.RoundTripper()}).Get("http://" + addr + "/x"); err == nil {
			t.Fatalf("%s: request to nobody succeeded", h.Name())
		}
	}
}
