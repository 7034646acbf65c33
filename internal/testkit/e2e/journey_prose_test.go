package e2e

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// prose writes what the journey's agents write: result texts of a few
// hundred words of plausible engineering prose, history actions and the
// tokens their own work took, from a seeded generator so that every run
// of the journey writes the same issue.
type prose struct{ rng *rand.Rand }

func newProse(seed uint64) *prose {
	return &prose{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

func (p *prose) pick(xs []string) string { return xs[p.rng.IntN(len(xs))] }

// work is the tokens an agent's own work took besides what it loaded and
// wrote: reading code, running tools.
func (p *prose) work() int { return 200 + p.rng.IntN(500) }

// action is the one-line history entry of agent's step k.
func (p *prose) action(agent string, k int) string {
	return fmt.Sprintf("%s (step %d)", p.pick(actions[agent]), k)
}

var actions = map[string][]string{
	"orchestrator": {"split the remaining work into three tasks", "re-planned after the review", "assigned the next round",
		"collected the open findings into one list", "asked for a second review of the limits"},
	"architect": {"chose a token bucket per API key", "specified Retry-After and the limits file", "reviewed the storage interface",
		"settled the burst parameter", "drew the request path through the limiter"},
	"lead-developer": {"implemented the limiter middleware", "fixed the refill on idle keys", "wired the limits into the gateway config",
		"addressed the review findings", "added the Redis store behind the interface"},
	"code-reviewer": {"reviewed the middleware: two fixes asked", "reviewed the config loader", "approved the refill fix",
		"asked for tests of the error paths", "checked the metrics labels"},
	"tester": {"ran the integration suite: green", "load-tested forty clients for a minute", "found a flaky Retry-After test",
		"measured latency with the Redis store", "checked the 429 bodies against the docs"},
}

var (
	openers = []string{
		"I picked up where the last step left off and read the checkpoint, the previous result and the open remarks before touching anything.",
		"This step followed the plan in the checkpoint's current task; nothing in the last comments changed it.",
		"Most of the time went into reading the gateway's request path again, since the limiter sits between authentication and routing.",
		"I started from the failing case the previous agent described and reproduced it locally before changing code.",
	}
	findings = []string{
		"The token bucket is kept per API key and refilled lazily on read, so idle keys cost no timer and no memory beyond their last timestamp.",
		"Retry-After is now derived from the bucket's deficit and rounded up to whole seconds, which is what the clients in the test suite expect.",
		"The limits file is read once at start-up and on SIGHUP; a malformed file keeps the old limits and logs the line and column of the error.",
		"Keys without an explicit limit fall back to the route's default, and routes without one fall back to the global default of 100 requests a minute.",
		"The Redis store uses one Lua script per request, so the read, the refill and the decrement happen atomically even under concurrent gateways.",
		"Metrics carry the route and the outcome but not the key, to keep the label cardinality bounded.",
		"The middleware returns 429 with a JSON body naming the limit and the reset time, documented in docs/limits.md.",
		"Clock skew between gateways matters only with the Redis store; the script uses the server's TIME, not the caller's clock.",
		"The benchmark shows about two microseconds per request with the in-memory store and under half a millisecond with Redis on loopback.",
		"Two error paths were untested: a Redis timeout and a limits file removed while the gateway runs; both now have tests.",
		"The burst parameter defaults to the limit itself, so a client may spend a full minute's allowance at once after an idle period.",
		"Coverage of the limiter package went from 64 to 89 percent; what remains is logging in the error paths.",
	}
	concerns = []string{
		"One concern stays open: the in-memory store grows with the number of distinct keys and has no eviction yet.",
		"I am not sure the default of 100 requests a minute suits the batch clients; the owner should confirm it.",
		"The flaky test depended on wall-clock time; it now uses the fake clock the rest of the suite uses.",
		"The config loader accepts unknown keys silently, which hid a typo in the staging limits; it now rejects them.",
		"Nothing blocks the next step, but the docs still describe the old header format in one example.",
	}
	closers = []string{
		"The next agent should start from the updated current task in the checkpoint; the files involved are listed in the key stats.",
		"I left the branch rebased on main with every test green, and noted the open question above for the next step.",
		"Handing over with the estimate below; the next step is smaller than this one.",
	}
)

// result is the result text of agent's step k: a few hundred words.
func (p *prose) result(agent string, k int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Step %d, %s.\n\n%s", k, agent, p.pick(openers))
	paragraphs := 3 + p.rng.IntN(3)
	for range paragraphs {
		b.WriteString("\n\n")
		for i := range 3 + p.rng.IntN(2) {
			if i > 0 {
				b.WriteString(" ")
			}
			b.WriteString(p.pick(findings))
		}
	}
	fmt.Fprintf(&b, "\n\n%s %s\n", p.pick(concerns), p.pick(closers))
	return b.String()
}
