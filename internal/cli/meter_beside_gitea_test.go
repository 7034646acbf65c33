package cli_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/gateway"
	"github.com/gns-guard/gns-guard/internal/testkit/standin"
)

// BenchmarkBesidePortkey measures the meter beside Portkey's open-source
// AI gateway (package gateway), for reading: a round (b.N is the rounds;
// .ci/bench runs 3) makes the same calls by five paths to one stand-in
// provider, with one keep-alive client: straight (direct), through
// Portkey's node process, through a process that relays bytes and reads
// no HTTP (the floor of any process in the path), through a bare Go
// reverse proxy's process (the hop's own cost; both are package
// gateway/bareproxy), and through the meter's own process, the binary, on
// the real server, spending on an issue the guard judged.
// The meter reads the issue again every 2 s (--issue-ttl's default) and
// writes its log line a call to a file. The table is
// printed at the end; docs/meter.md#beside-portkeys-gateway shows one.
func BenchmarkBesidePortkey(b *testing.B) {
	f := newFlow(b, 1_000_000_000_000, "cascade::depth-2", "size::medium")
	prov := standin.Start(b)
	prov.Unrecorded.Store(true)
	// As deployed: the reading kept its default 2 s, the metrics on.
	m := startMeterProcess(b, f, prov.URL, "", "--metrics-token-env", "GNS_GUARD_METRICS_TOKEN")
	gw := startPortkey(b)
	relay := startBareProxy(b, prov.URL, "-tcp")
	bare := startBareProxy(b, prov.URL)
	bench := &gateway.Bench{Plan: gateway.DefaultPlan, Progress: os.Stderr,
		Client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}},
		Paths: []*gateway.Path{
			{Name: "direct", URL: prov.URL + "/v1/chat/completions", Header: bearer(standin.OpenAIKey)},
			{Name: "Portkey", URL: gw.URL + "/v1/chat/completions", Header: bearer(standin.OpenAIKey), PID: gw.PID},
			{Name: "TCP relay", URL: relay.URL + "/v1/chat/completions", Header: bearer(standin.OpenAIKey), PID: relay.Process.Pid},
			{Name: "Go proxy", URL: bare.URL + "/v1/chat/completions", Header: bearer(standin.OpenAIKey), PID: bare.Process.Pid},
			{Name: "meter", URL: fmt.Sprintf("%s/%s/%s/issues/%d/invocations/inv-1/openai/v1/chat/completions", m.URL, f.r.Owner, f.r.Name, f.n),
				Header: bearer(f.agent.Token), PID: m.Process.Pid},
		}}
	for k, v := range gateway.Headers(prov.URL) {
		bench.Paths[1].Header[k] = v
	}
	ctx := context.Background()
	if err := bench.WarmUp(ctx); err != nil {
		b.Fatalf("%v\nthe meter's log:\n%s", err, m.Log)
	}
	for b.Loop() {
		if err := bench.Round(ctx); err != nil {
			b.Fatalf("%v\nthe meter's log:\n%s", err, m.Log)
		}
	}
	if err := bench.ReadPeakRSS(); err != nil {
		b.Fatal(err)
	}
	if err := bench.Report(os.Stdout); err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"Portkey", "TCP relay", "Go proxy", "meter"} {
		fig := bench.Figures(name)
		name = strings.ReplaceAll(name, " ", "-")
		b.ReportMetric(fig.AddedP50.Seconds()*1e3, name+"-added-p50-ms")
		b.ReportMetric(fig.CallsPerSecond, name+"-calls/s")
	}
}

func bearer(key string) http.Header {
	return http.Header{"Authorization": {"Bearer " + key}, "Content-Type": {"application/json"}}
}

// startPortkey starts Portkey's gateway; its output goes to a file kept
// in the test's temporary folder.
func startPortkey(t testing.TB) *gateway.Gateway {
	t.Helper()
	log, err := os.Create(filepath.Join(t.TempDir(), "portkey.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	gw, err := gateway.Start(log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gw.Stop)
	return gw
}

// proxyProcess is a proxy's own process: the gns-guard binary serving
// as a meter, or the bare proxy.
type proxyProcess struct {
	*exec.Cmd
	URL string
	Log logFile // its standard error: a line a call
}

// logFile is a file a process writes, as a log collector keeps it.
type logFile string

// String is the file's last 4 KiB.
func (l logFile) String() string {
	data, err := os.ReadFile(string(l))
	if err != nil {
		return err.Error()
	}
	return string(data[max(0, len(data)-4096):])
}

// startMeterProcess starts `gns-guard meter` for the flow's owner on
// store (empty: a SQLite file of its own), in front of the stand-in at
// upstream, with more args.
func startMeterProcess(t testing.TB, f *flow, upstream, store string, args ...string) *proxyProcess {
	t.Helper()
	if store == "" {
		store = filepath.Join(t.TempDir(), "meter.db")
	}
	addr := freeAddr(t)
	base := []string{"meter", "--server", f.r.S.URL, "--scope", f.r.Owner, "--listen", addr, "--openai-url", upstream, "--store", store}
	cmd := exec.Command(actiontest.Binary(t), append(base, args...)...)
	cmd.Env = append(os.Environ(), "GNS_GUARD_METER_KEY="+strings.Repeat("meter-key-", 4), "OPENAI_API_KEY="+standin.OpenAIKey,
		"GNS_GUARD_METRICS_TOKEN=bench")
	return startProcess(t, cmd, addr)
}

// startBareProxy builds and starts package gateway/bareproxy in front of
// upstream, with more flags.
func startBareProxy(t testing.TB, upstream string, flags ...string) *proxyProcess {
	t.Helper()
	root, err := testkit.Root()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "bareproxy")
	build := exec.Command("go", "build", "-o", bin, "./internal/testkit/gateway/bareproxy")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build bareproxy: %v\n%s", err, out)
	}
	addr := freeAddr(t)
	return startProcess(t, exec.Command(bin, append(flags, "-listen", addr, "-upstream", upstream)...), addr)
}

// startProcess starts cmd, which serves on addr, its standard error in a
// file, and returns once it answers /healthz. It is killed when the test
// ends.
func startProcess(t testing.TB, cmd *exec.Cmd, addr string) *proxyProcess {
	t.Helper()
	log, err := os.Create(filepath.Join(t.TempDir(), filepath.Base(cmd.Path)+".log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close() // the process has its own descriptor
	p := &proxyProcess{Cmd: cmd, URL: "http://" + addr, Log: logFile(log.Name())}
	p.Stderr = log
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Process.Kill()
		_ = p.Wait()
	})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(p.URL + "/healthz"); err == nil {
			resp.Body.Close()
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not start:\n%s", cmd.Path, p.Log)
		}
	}
}

// freeAddr is a free address of 127.0.0.1.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
