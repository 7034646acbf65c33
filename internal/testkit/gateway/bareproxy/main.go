// Command bareproxy serves gateway.BareProxy, the least a proxy does, as a
// process of its own. BenchmarkBesidePortkey (internal/cli) runs it beside
// the meter's process.
//
//	bareproxy -listen 127.0.0.1:PORT -upstream http://127.0.0.1:PORT
package main

import (
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"

	"github.com/gns-guard/gns-guard/internal/testkit/gateway"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "the address to serve on")
	upstream := flag.String("upstream", "", "the upstream's base URL")
	flag.Parse()
	u, err := url.Parse(*upstream)
	if err != nil || u.Host == "" {
		fmt.Fprintln(os.Stderr, "bareproxy: -upstream must be a URL such as http://127.0.0.1:8080")
		os.Exit(2)
	}
	if err := http.ListenAndServe(*listen, gateway.BareProxy(u)); err != nil {
		fmt.Fprintln(os.Stderr, "bareproxy:", err)
		os.Exit(1)
	}
}
