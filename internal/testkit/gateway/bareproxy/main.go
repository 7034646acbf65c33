// Command bareproxy serves gateway.BareProxy, the least a proxy does, as a
// process of its own; with -tcp it serves gateway.Relay, which passes bytes
// and reads no HTTP. BenchmarkBesidePortkey (internal/cli) runs both beside
// the meter's process.
//
//	bareproxy [-tcp] -listen 127.0.0.1:PORT -upstream http://127.0.0.1:PORT
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"

	"github.com/gns-guard/gns-guard/internal/testkit/gateway"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "the address to serve on")
	upstream := flag.String("upstream", "", "the upstream's base URL")
	tcp := flag.Bool("tcp", false, "relay each connection's bytes to the upstream's host, reading no HTTP")
	flag.Parse()
	u, err := url.Parse(*upstream)
	if err != nil || u.Host == "" {
		fmt.Fprintln(os.Stderr, "bareproxy: -upstream must be a URL such as http://127.0.0.1:8080")
		os.Exit(2)
	}
	if *tcp {
		l, err := net.Listen("tcp", *listen)
		if err == nil {
			err = gateway.Relay(l, u.Host)
		}
		fmt.Fprintln(os.Stderr, "bareproxy:", err)
		os.Exit(1)
	}
	if err := http.ListenAndServe(*listen, gateway.BareProxy(u)); err != nil {
		fmt.Fprintln(os.Stderr, "bareproxy:", err)
		os.Exit(1)
	}
}
