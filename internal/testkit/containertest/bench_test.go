package containertest_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// BenchmarkEventToVerdict measures what a user waits for: from an issue
// event to the guard's finished run, through the container-mode runner,
// for the first event (the runner builds the Dockerfile, or pulls the
// prebuilt image) and the second (the image is there), with action.yml's
// image: Dockerfile and with the released image (the release workflow's
// moving tag, its action.yml naming the image by digest). Run it with
//
//	GNS_GUARD_INTEGRATION=1 go test -run '^$' -bench EventToVerdict -benchtime 1x ./internal/testkit/containertest/
func BenchmarkEventToVerdict(b *testing.B) {
	w := requireWorld(b)
	release(b, w)
	runnerLogin(b, w)
	firsts := map[string]time.Duration{}
	for _, v := range []struct{ name, uses string }{
		{"Dockerfile", w.uses},
		{"prebuilt", w.s.AdminLogin + "/" + releaseRepo + "@" + releaseMajor},
	} {
		b.Run(v.name, func(b *testing.B) {
			var first, second time.Duration
			for i := 0; i < b.N; i++ {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				// Nothing built or pulled: the next run starts from the
				// stand-in base images, as a fresh runner does.
				if err := w.e.RemoveImagesExcept(ctx); err != nil {
					b.Fatal(err)
				}
				cancel()
				r := w.newRepo(b, guardWorkflow(v.uses, w.tokens.url, map[string]string{"default-max-depth": "2", "pressure-threshold": "0.9"}, nil))
				first += timeRun(b, r, 1)
				second += timeRun(b, r, 2)
			}
			first /= time.Duration(b.N)
			second /= time.Duration(b.N)
			firsts[v.name] = first
			b.ReportMetric(first.Seconds(), "first-s/event")
			b.ReportMetric(second.Seconds(), "second-s/event")
			fmt.Fprintf(os.Stderr, "%s: first event %.1f s, second event %.1f s\n", v.name, first.Seconds(), second.Seconds())
		})
	}
	if d, p := firsts["Dockerfile"], firsts["prebuilt"]; d > 0 && p > 0 {
		fmt.Fprintf(os.Stderr, "first event: image: Dockerfile takes %.1fx the prebuilt image\n", d.Seconds()/p.Seconds())
	}
}

// timeRun opens issue n and returns how long until its run finished.
func timeRun(b *testing.B, r *repo, n int64) time.Duration {
	b.Helper()
	began := time.Now()
	r.openIssue(n, "Rate limiting", example(b, "healthy.md", n))
	runs := r.waitRuns(n, 1)
	took := time.Since(began)
	if runs[0].Conclusion != "success" {
		b.Fatalf("issue #%d: %s\n%s", n, runs[0], r.jobLog(runs[0]))
	}
	return took
}
