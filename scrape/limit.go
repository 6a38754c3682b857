package scrape

import (
	"container/list"
	"net"
	"sync"
)

// MaxConns is how many connections the endpoint holds open at once. A
// scrape is one short request (no keep-alive: the response closes it), so
// a Prometheus server, a liveness probe and a person with curl fit many
// times over; whoever can reach the port — on loopback, every local user
// — can open more, and each would be one of the watch's descriptors.
const MaxConns = 16

// capListener accepts every connection at once and, past max held, closes
// the one held longest. So the endpoint never holds more than max+1
// descriptors, however many clients come (a pass's open, a pidfd, a lock
// or a reload never meets EMFILE for them), and no client can keep the
// others out by holding its connections: netutil.LimitListener's
// semaphore would leave a new scrape waiting in the kernel's backlog
// behind every connection an attacker holds idle, until each one timed
// out; here the oldest gives way. A real scrape is over in milliseconds
// on loopback; to keep one out, a client must open max connections
// within its request.
type capListener struct {
	net.Listener
	max int

	mu   sync.Mutex
	held list.List // of *heldConn, oldest first
}

func limitListener(l net.Listener, max int) *capListener {
	return &capListener{Listener: l, max: max}
}

func (l *capListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	h := &heldConn{Conn: c, l: l}
	l.mu.Lock()
	h.elem = l.held.PushBack(h)
	var oldest *heldConn
	if l.held.Len() > l.max {
		oldest = l.held.Front().Value.(*heldConn)
		l.held.Remove(oldest.elem)
		oldest.elem = nil
	}
	l.mu.Unlock()
	if oldest != nil {
		oldest.Conn.Close() // its handler's next read or write fails; Close is still called once
	}
	return h, nil
}

// Held is how many connections are open now.
func (l *capListener) Held() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held.Len()
}

// heldConn is a connection the listener counts until it is closed.
type heldConn struct {
	net.Conn
	l    *capListener
	elem *list.Element // nil once let go of
	once sync.Once
}

func (c *heldConn) Close() error {
	var err error
	c.once.Do(func() {
		c.l.mu.Lock()
		if c.elem != nil {
			c.l.held.Remove(c.elem)
			c.elem = nil
		}
		c.l.mu.Unlock()
		err = c.Conn.Close()
	})
	return err
}
