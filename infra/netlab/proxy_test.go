package netlab

import (
	"bytes"
	"crypto/rand"
	"io"
	"net"
	"net/netip"
	"testing"
	"time"
)

// echo serves on loopback, writing back what it reads.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

// roundTrip sends data through the proxy from the local address from and
// returns what came back.
func roundTrip(t *testing.T, p *Proxy, from string, data []byte) []byte {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() { _, _ = c.Write(data) }()
	got := make([]byte, len(data))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("read back %d bytes: %v", len(data), err)
	}
	return got
}

// TestProxyToxicNamesItsClients: the toxic applies to the clients its
// prefix names and not to the others, and under loss every byte still
// arrives, in order (a loss delays, it never drops or reorders).
func TestProxyToxicNamesItsClients(t *testing.T) {
	p, err := Listen("127.0.0.1:0", echo(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.SetToxic(&Toxic{From: netip.MustParsePrefix("127.0.0.2/32"), Latency: time.Millisecond, Loss: 0.05})
	data := make([]byte, 1<<20)
	_, _ = rand.Read(data)

	if got := roundTrip(t, p, "127.0.0.1", data); !bytes.Equal(got, data) {
		t.Fatal("bytes from 127.0.0.1 came back changed")
	}
	if n := p.Delayed.Load(); n != 0 {
		t.Fatalf("%d chunks of 127.0.0.1 delayed; the toxic names 127.0.0.2 only", n)
	}
	if got := roundTrip(t, p, "127.0.0.2", data); !bytes.Equal(got, data) {
		t.Fatal("bytes from 127.0.0.2 came back changed or reordered under loss")
	}
	if p.Delayed.Load() == 0 {
		t.Fatal("no chunk of 127.0.0.2 delayed")
	}
	p.SetToxic(nil)
	before := p.Delayed.Load()
	roundTrip(t, p, "127.0.0.2", data[:1000])
	if p.Delayed.Load() != before {
		t.Fatal("chunks delayed after the toxic was cleared")
	}
	if p.Conns.Load() != 3 {
		t.Fatalf("%d connections counted, want 3", p.Conns.Load())
	}
}

// TestToxicDelay: a chunk waits the latency, plus one retransmission
// timeout per lost segment.
func TestToxicDelay(t *testing.T) {
	tx := &Toxic{Latency: 200 * time.Millisecond}
	if d := tx.delay(10 * mss); d != 200*time.Millisecond {
		t.Errorf("no loss: %s, want 200ms", d)
	}
	tx.Loss = 1
	if got, want := tx.delay(3*mss+1), 200*time.Millisecond+4*tx.RTO(); got != want {
		t.Errorf("every segment lost: %s, want %s", got, want)
	}
	if tx.RTO() != 600*time.Millisecond {
		t.Errorf("RTO %s, want 600ms (200 ms floor + the added round trip)", tx.RTO())
	}
	if !(&Toxic{}).applies(netip.MustParseAddr("10.1.2.3")) {
		t.Error("a toxic without From applies to no one")
	}
	var none *Toxic
	if none.applies(netip.MustParseAddr("10.1.2.3")) {
		t.Error("no toxic applies")
	}
}
