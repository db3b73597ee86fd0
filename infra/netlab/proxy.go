package netlab

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Toxic is what a Proxy does to the data of the clients it names, in both
// directions, as a slow, lossy link between them and the target would.
type Toxic struct {
	// From is the clients' addresses; the zero prefix: every client.
	From netip.Prefix
	// Latency delays each chunk of data, each way.
	Latency time.Duration
	// Loss is the probability that a segment (mss bytes) of a chunk is
	// lost. A proxy cannot drop bytes of a TCP stream, and TCP does not
	// lose them either: it resends after a retransmission timeout, and
	// everything behind the lost segment waits (head-of-line). So a lost
	// segment costs its chunk RTO() more, and later chunks never overtake
	// it.
	Loss float64
}

// mss is the segment a loss is drawn for (Ethernet's TCP payload).
const mss = 1448

// RTO is the retransmission timeout a lost segment costs: Linux's floor
// (200 ms) plus the round trip the toxic adds.
func (t *Toxic) RTO() time.Duration { return 200*time.Millisecond + 2*t.Latency }

func (t *Toxic) applies(ip netip.Addr) bool {
	return t != nil && (!t.From.IsValid() || t.From.Contains(ip.Unmap()))
}

// delay is what a chunk of n bytes waits under t.
func (t *Toxic) delay(n int) time.Duration {
	d := t.Latency
	for range (n + mss - 1) / mss {
		if t.Loss > 0 && rand.Float64() < t.Loss {
			d += t.RTO()
		}
	}
	return d
}

// Proxy forwards every TCP connection it accepts to a target address,
// applying its toxic (if any) to the clients the toxic names. With no
// toxic it only copies.
type Proxy struct {
	ln     net.Listener
	target string
	toxic  atomic.Pointer[Toxic]
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
	// Conns counts the connections accepted; Delayed the chunks a toxic
	// applied to.
	Conns, Delayed atomic.Int64
}

// Listen starts a proxy on addr (host:0 for a free port) to target.
func Listen(addr, target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("unable to listen for the proxy to %s: %w", target, err)
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Addr is the proxy's listening address, host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Target is where it forwards.
func (p *Proxy) Target() string { return p.target }

// SetToxic makes t (nil: none) apply from now on, to the data read after
// this call on every connection, established or new.
func (p *Proxy) SetToxic(t *Toxic) { p.toxic.Store(t) }

// Close stops accepting and closes every connection.
func (p *Proxy) Close() error {
	err := p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	_ = c.Close()
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // out of descriptors: do not spin
			continue
		}
		p.Conns.Add(1)
		p.wg.Add(1)
		go p.handle(c)
	}
}

// handle joins client c to a new connection to the target. Either side's
// end or error closes both: Kafka's and ClickHouse's protocols do not
// half-close.
func (p *Proxy) handle(c net.Conn) {
	defer p.wg.Done()
	if !p.track(c) {
		_ = c.Close()
		return
	}
	defer p.untrack(c)
	// A cut target: the dial waits as long as a client's connect would.
	up, err := net.DialTimeout("tcp", p.target, 10*time.Second)
	if err != nil {
		return
	}
	if !p.track(up) {
		_ = up.Close()
		return
	}
	defer p.untrack(up)
	from := netip.Addr{}
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		from = ap.Addr()
	}
	done := make(chan struct{}, 2)
	go func() { p.pipe(up, c, from); done <- struct{}{} }()
	go func() { p.pipe(c, up, from); done <- struct{}{} }()
	<-done
	_ = c.Close()
	_ = up.Close()
	<-done
}

// chunk is data read at one time, due for writing at due.
type chunk struct {
	b   []byte
	due time.Time
}

// pipe copies src to dst, each chunk held until its due time: read time
// plus the toxic's delay when it applies to the client. Due times never go
// backwards, so the stream stays in order (a delayed chunk holds up those
// behind it, as TCP's in-order delivery does), and chunks are delayed
// concurrently, not one after another (latency, not bandwidth).
func (p *Proxy) pipe(dst, src net.Conn, client netip.Addr) {
	q := make(chan chunk, 256)
	go func() {
		defer close(q)
		var last time.Time
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				due := time.Now()
				if t := p.toxic.Load(); t.applies(client) {
					due = due.Add(t.delay(n))
					p.Delayed.Add(1)
				}
				if due.Before(last) {
					due = last
				}
				last = due
				q <- chunk{buf[:n], due}
			}
			if err != nil {
				return
			}
		}
	}()
	defer func() {
		_ = dst.Close()
		for range q { // let the reader end
		}
	}()
	for c := range q {
		if d := time.Until(c.due); d > 0 {
			time.Sleep(d)
		}
		if _, err := dst.Write(c.b); err != nil {
			_ = src.Close()
			return
		}
	}
}
