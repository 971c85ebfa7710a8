// Package redistest starts real redis-server processes for tests: a
// standalone node or a cluster of masters made with redis-cli --cluster
// create, on free loopback ports, each in its own directory with its
// append-only file, and stops them when the test ends. Nodes can be killed
// (SIGKILL) and restarted from their directory, as an operator would.
//
// The servers are Debian's redis-server and redis-cli (packages
// redis-server, redis-tools; .ci/run installs them). Under CI=true a
// missing tool fails the test; elsewhere the test is skipped with a
// message, so that a developer without Redis still runs everything else.
package redistest

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// TB is what the helpers need of a test: testing.TB satisfies it, and a
// benchmark program can supply its own.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
	TempDir() string
	Cleanup(func())
}

// Need returns the path of a Redis tool ("redis-server", "redis-cli",
// "redis-benchmark"). Under CI=true a missing tool fails the test;
// elsewhere the test is skipped with a message.
func Need(t TB, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed (apt-get install redis-server redis-tools); CI must have it", tool)
		}
		t.Skipf("%s is not installed (apt-get install redis-server redis-tools): skipping", tool)
	}
	return p
}

// Options configure a node.
type Options struct {
	// AppendFsync is the append-only file's fsync policy: "always",
	// "everysec" or "no". Empty: no append-only file.
	AppendFsync string
	// Password, if set, is required (requirepass).
	Password string
	// TLS serves TLS only (tls-port), with these PEM files.
	TLS *TLSFiles
	// Extra are more "--name value" arguments.
	Extra []string
}

// TLSFiles are the PEM files of a TLS server.
type TLSFiles struct{ Cert, Key, CA string }

// NewTLS writes, in a temporary directory, a certificate authority and a
// server certificate it signs for 127.0.0.1 and localhost, and returns
// the PEM files (CA is the authority's certificate, for clients to
// trust).
func NewTLS(t TB) *TLSFiles {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("%v", err)
	}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bloomlab test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatalf("%v", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("%v", err)
	}
	srv := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	srvDER, err := x509.CreateCertificate(rand.Reader, srv, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatalf("%v", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatalf("%v", err)
	}
	f := &TLSFiles{CA: filepath.Join(dir, "ca.pem"), Cert: filepath.Join(dir, "server.pem"), Key: filepath.Join(dir, "server.key")}
	for path, block := range map[string]*pem.Block{
		f.CA:   {Type: "CERTIFICATE", Bytes: caDER},
		f.Cert: {Type: "CERTIFICATE", Bytes: srvDER},
		f.Key:  {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatalf("%v", err)
		}
	}
	return f
}

// Server is one redis-server process.
type Server struct {
	Addr string // 127.0.0.1:PORT
	Port int
	Dir  string // its working directory: append-only file, nodes.conf, log

	t    TB
	bin  string
	args []string
	tls  bool
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// freePort returns a loopback port nobody listens on now.
func freePort(t TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("%v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Start starts a standalone node and waits until it answers.
func Start(t TB, o Options) *Server {
	t.Helper()
	return start(t, o, nil)
}

func start(t TB, o Options, extra func(port int) []string) *Server {
	t.Helper()
	bin := Need(t, "redis-server")
	dir := t.TempDir()
	var last error
	for attempt := 0; attempt < 3; attempt++ { // a free port can be taken before the server binds it
		port := freePort(t)
		args := []string{"--bind", "127.0.0.1", "--dir", dir, "--logfile", filepath.Join(dir, "redis.log"),
			"--save", "", "--protected-mode", "no", "--daemonize", "no", "--databases", "16"}
		if o.TLS != nil {
			args = append(args, "--port", "0", "--tls-port", strconv.Itoa(port), "--tls-cert-file", o.TLS.Cert,
				"--tls-key-file", o.TLS.Key, "--tls-ca-cert-file", o.TLS.CA, "--tls-auth-clients", "no")
		} else {
			args = append(args, "--port", strconv.Itoa(port))
		}
		if o.AppendFsync != "" {
			args = append(args, "--appendonly", "yes", "--appendfsync", o.AppendFsync)
		}
		if o.Password != "" {
			args = append(args, "--requirepass", o.Password)
		}
		if extra != nil {
			args = append(args, extra(port)...)
		}
		args = append(args, o.Extra...)
		s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), Port: port, Dir: dir, t: t, bin: bin, args: args, tls: o.TLS != nil}
		if last = s.launch(o.TLS != nil); last == nil {
			t.Cleanup(s.Stop)
			return s
		}
	}
	t.Fatalf("redis-server did not start: %v", last)
	return nil
}

// launch starts the process and waits until the port accepts connections
// and the server has loaded its data (PING answers PONG, not LOADING).
func (s *Server) launch(tls bool) error {
	cmd := exec.Command(s.bin, s.args...)
	cmd.Dir = s.Dir
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return fmt.Errorf("redis-server exited: %s", s.LogTail())
		default:
		}
		if tls {
			if c, err := net.DialTimeout("tcp", s.Addr, 200*time.Millisecond); err == nil {
				c.Close()
				time.Sleep(50 * time.Millisecond)
				return nil
			}
		} else if ok := s.ping(); ok {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	<-done
	return fmt.Errorf("redis-server on %s did not answer within 20 s: %s", s.Addr, s.LogTail())
}

// ping reports whether the server answers PONG (without authenticating:
// NOAUTH also proves it is up).
func (s *Server) ping() bool {
	c, err := net.DialTimeout("tcp", s.Addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && (strings.HasPrefix(line, "+PONG") || strings.HasPrefix(line, "-NOAUTH"))
}

// LogTail returns the end of the server's log.
func (s *Server) LogTail() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// Kill ends the process with SIGKILL, as a crash would, and waits for it.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-done
}

// Restart starts the process again with the same arguments and directory
// (so it reloads its append-only file and, in a cluster, its nodes.conf)
// and waits until it answers.
func (s *Server) Restart() {
	s.t.Helper()
	if err := s.launch(s.tls); err != nil {
		s.t.Fatalf("restart %s: %v", s.Addr, err)
	}
}

// Stop kills the process if it runs.
func (s *Server) Stop() { s.Kill() }

// Client returns a go-redis client of the node (closed when the test
// ends).
func (s *Server) Client(password string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, Password: password, DisableIdentity: true,
		DialTimeout: 2 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
	s.t.Cleanup(func() { c.Close() })
	return c
}

// Cluster is a Redis Cluster of masters without replicas.
type Cluster struct {
	Nodes []*Server
	t     TB
}

// ClusterOptions configure a cluster.
type ClusterOptions struct {
	Masters int // default 3
	Node    Options
	// NodeTimeout is cluster-node-timeout (default 2 s).
	NodeTimeout time.Duration
	// FullCoverage is cluster-require-full-coverage: false lets the live
	// masters serve their slots while another is down.
	FullCoverage bool
}

// StartCluster starts the masters, joins them with redis-cli --cluster
// create … --cluster-yes (slots split evenly, in node order) and waits
// until every node reports cluster_state:ok.
func StartCluster(t TB, o ClusterOptions) *Cluster {
	t.Helper()
	cli := Need(t, "redis-cli")
	if o.Masters == 0 {
		o.Masters = 3
	}
	if o.NodeTimeout == 0 {
		o.NodeTimeout = 2 * time.Second
	}
	cov := "no"
	if o.FullCoverage {
		cov = "yes"
	}
	c := &Cluster{t: t}
	for range o.Masters {
		c.Nodes = append(c.Nodes, start(t, o.Node, func(int) []string {
			return []string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
				"--cluster-node-timeout", strconv.FormatInt(o.NodeTimeout.Milliseconds(), 10),
				"--cluster-port", strconv.Itoa(freePort(t)), "--cluster-require-full-coverage", cov}
		}))
	}
	args := []string{"--cluster", "create"}
	for _, n := range c.Nodes {
		args = append(args, n.Addr)
	}
	args = append(args, "--cluster-yes")
	if o.Node.Password != "" {
		args = append(args, "-a", o.Node.Password, "--no-auth-warning")
	}
	out, err := exec.Command(cli, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	if err := c.WaitOK(30 * time.Second); err != nil {
		t.Fatalf("%v", err)
	}
	return c
}

// Addrs returns the nodes' addresses.
func (c *Cluster) Addrs() []string {
	var a []string
	for _, n := range c.Nodes {
		a = append(a, n.Addr)
	}
	return a
}

// WaitOK waits until every running node answers CLUSTER INFO with
// cluster_state:ok, 16384 slots ok and every node known.
func (c *Cluster) WaitOK(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		bad := ""
		for _, n := range c.Nodes {
			info, err := n.clusterInfo()
			if err != nil {
				bad = err.Error()
				break
			}
			if info["cluster_state"] != "ok" || info["cluster_slots_ok"] != "16384" || info["cluster_known_nodes"] != strconv.Itoa(len(c.Nodes)) {
				bad = fmt.Sprintf("%s: state %s, slots ok %s, known nodes %s", n.Addr, info["cluster_state"], info["cluster_slots_ok"], info["cluster_known_nodes"])
				break
			}
		}
		if bad == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster not ok after %v: %s", timeout, bad)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WaitState waits until node n reports cluster_state:want.
func (c *Cluster) WaitState(n *Server, want string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		info, err := n.clusterInfo()
		if err == nil && info["cluster_state"] == want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: cluster_state %q after %v, want %q (%v)", n.Addr, info["cluster_state"], timeout, want, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *Server) clusterInfo() (map[string]string, error) {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true, MaxRetries: -1,
		DialTimeout: time.Second, DialerRetries: 1, ReadTimeout: 2 * time.Second})
	defer c.Close()
	txt, err := c.ClusterInfo(context.Background()).Result()
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, line := range strings.Split(txt, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			m[k] = v
		}
	}
	return m, nil
}

// NodeOfSlot returns the node that serves slot, from the node's own view
// (CLUSTER SLOTS of the first running node).
func (c *Cluster) NodeOfSlot(slot int) *Server {
	for _, n := range c.Nodes {
		cl := redis.NewClient(&redis.Options{Addr: n.Addr, DisableIdentity: true, MaxRetries: -1, DialTimeout: time.Second, DialerRetries: 1})
		slots, err := cl.ClusterSlots(context.Background()).Result()
		cl.Close()
		if err != nil {
			continue
		}
		for _, r := range slots {
			if slot >= r.Start && slot <= r.End && len(r.Nodes) > 0 {
				for _, m := range c.Nodes {
					if m.Addr == r.Nodes[0].Addr {
						return m
					}
				}
			}
		}
		return nil
	}
	return nil
}

// Client returns a cluster client over every node (closed when the test
// ends). MaxRedirects, dials and timeouts are few and short so that a dead
// node is reported quickly.
func (c *Cluster) Client() *redis.ClusterClient {
	cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), DisableIdentity: true,
		DialTimeout: time.Second, DialerRetries: 1, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second,
		MaxRedirects: 3, MaxRetries: 1})
	c.t.Cleanup(func() { cl.Close() })
	return cl
}

// CommandCalls returns the number of calls of each command the node has
// executed since its last CONFIG RESETSTAT (INFO commandstats), by
// lower-case name.
func CommandCalls(ctx context.Context, c redis.Cmdable) (map[string]int64, error) {
	txt, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	m := map[string]int64{}
	for _, line := range strings.Split(txt, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		for _, f := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(f, "calls="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				m[strings.TrimPrefix(name, "cmdstat_")] = n
			}
		}
	}
	return m, nil
}

// SentinelOptions configure StartSentinel.
type SentinelOptions struct {
	// Master is the monitored group's name (default "mymaster"), Addr its
	// primary's HOST:PORT, Quorum the sentinels that must agree (default 2).
	Master string
	Addr   string
	Quorum int
	// DownAfter and FailoverTimeout are Sentinel's down-after-milliseconds
	// (default 1 s) and failover-timeout (default 3 s, not its 180 s).
	DownAfter, FailoverTimeout time.Duration
}

// StartSentinel starts a Redis Sentinel (redis-server CONF --sentinel) on
// a free port, monitoring o.Addr, and waits until it answers.
func StartSentinel(t TB, o SentinelOptions) *Server {
	t.Helper()
	bin := Need(t, "redis-server")
	if o.Master == "" {
		o.Master = "mymaster"
	}
	if o.Quorum == 0 {
		o.Quorum = 2
	}
	if o.DownAfter == 0 {
		o.DownAfter = time.Second
	}
	if o.FailoverTimeout == 0 {
		o.FailoverTimeout = 3 * time.Second
	}
	host, port, err := net.SplitHostPort(o.Addr)
	if err != nil {
		t.Fatalf("sentinel: %v", err)
	}
	dir := t.TempDir()
	var last error
	for attempt := 0; attempt < 3; attempt++ {
		p := freePort(t)
		conf := filepath.Join(dir, "sentinel.conf")
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nlogfile %s\nprotected-mode no\n"+
			"sentinel monitor %s %s %s %d\nsentinel down-after-milliseconds %s %d\n"+
			"sentinel failover-timeout %s %d\nsentinel parallel-syncs %s 1\n",
			p, dir, filepath.Join(dir, "redis.log"), o.Master, host, port, o.Quorum,
			o.Master, o.DownAfter.Milliseconds(), o.Master, o.FailoverTimeout.Milliseconds(), o.Master)
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			t.Fatalf("sentinel: %v", err)
		}
		s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", p), Port: p, Dir: dir, t: t, bin: bin, args: []string{conf, "--sentinel"}}
		if last = s.launch(false); last == nil {
			t.Cleanup(s.Stop)
			return s
		}
	}
	t.Fatalf("sentinel did not start: %v", last)
	return nil
}
