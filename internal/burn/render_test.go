package burn

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestGoldenChartsRenderInABrowser renders every golden Mermaid chart (this
// package's and the status comments' in testdata/status) with Mermaid in
// headless Chromium and fails on any parse or render error, or a chart that
// draws fewer lines than it declares. .ci/render-charts installs what it
// needs and runs it; without GNS_GUARD_MERMAID_JS (the path of
// mermaid.min.js) and GNS_GUARD_CHROMIUM it is skipped. With
// GNS_GUARD_BURN_PICTURE set it also writes a PNG of the issue chart there.
func TestGoldenChartsRenderInABrowser(t *testing.T) {
	js, browser := os.Getenv("GNS_GUARD_MERMAID_JS"), os.Getenv("GNS_GUARD_CHROMIUM")
	if js == "" || browser == "" {
		t.Skip("set GNS_GUARD_MERMAID_JS and GNS_GUARD_CHROMIUM (.ci/render-charts does)")
	}
	var charts []chart
	for _, pattern := range []string{"testdata/*.golden", "../../testdata/status/*.md"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			charts = append(charts, mermaidBlocks(filepath.Base(f), string(data))...)
		}
	}
	if len(charts) < 2 {
		t.Fatalf("found %d golden charts, expected the issue and repository charts at least", len(charts))
	}
	// The check must be able to fail: a chart Mermaid cannot parse.
	charts = append(charts, chart{Name: "broken (must fail)", Text: "xychart-beta\n    x-axis [\"a\", \"b\"\n    line [1, 2\n", Lines: 1})
	results := renderAll(t, browser, js, charts)
	if len(results) != len(charts) {
		t.Fatalf("the browser reported %d charts of %d", len(results), len(charts))
	}
	for i, r := range results {
		c := charts[i]
		if c.Name == "broken (must fail)" {
			if r.OK {
				t.Errorf("Mermaid rendered a broken chart without an error: the check cannot see errors")
			}
			continue
		}
		if !r.OK {
			t.Errorf("%s: Mermaid reports: %s\n%s", c.Name, r.Error, c.Text)
			continue
		}
		if r.Lines < c.Lines {
			t.Errorf("%s: %d line plot(s) drawn, the chart declares %d", c.Name, r.Lines, c.Lines)
		}
		t.Logf("%s: rendered, %d line plot(s)", c.Name, r.Lines)
	}
	if out := os.Getenv("GNS_GUARD_BURN_PICTURE"); out != "" {
		picture(t, browser, js, IssueChart(issueSeries()), out)
	}
}

// chart is one Mermaid block: where it came from, its text and how many
// line plots it declares.
type chart struct {
	Name  string `json:"name"`
	Text  string `json:"text"`
	Lines int    `json:"-"`
}

type rendered struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
	Lines int    `json:"lines"`
}

var mermaidBlock = regexp.MustCompile("(?s)```mermaid\n(.*?)```")

func mermaidBlocks(name, text string) []chart {
	var out []chart
	for i, m := range mermaidBlock.FindAllStringSubmatch(text, -1) {
		out = append(out, chart{Name: fmt.Sprintf("%s#%d", name, i+1), Text: m[1], Lines: strings.Count(m[1], "\n    line [")})
	}
	return out
}

// page is an HTML page that renders charts with Mermaid and writes the
// outcome, base64 JSON, into the element #out.
const page = `<!doctype html><meta charset="utf-8"><body style="margin:0;background:#fff">
<pre id="out" style="display:none">pending</pre><div id="charts" style="width:860px"></div>
<script src="%s"></script>
<script>
const charts = %s;
mermaid.initialize({startOnLoad: false, securityLevel: "strict"});
(async () => {
  const res = [];
  for (const [i, c] of charts.entries()) {
    try {
      await mermaid.parse(c.text);
      const {svg} = await mermaid.render("chart" + i, c.text);
      const d = document.createElement("div");
      d.innerHTML = svg;
      document.getElementById("charts").appendChild(d);
      res.push({ok: true, lines: d.querySelectorAll("g[class*='line-plot-'] path").length});
    } catch (e) {
      res.push({ok: false, error: String((e && e.message) || e)});
    }
  }
  document.getElementById("out").textContent = "RESULT:" + btoa(unescape(encodeURIComponent(JSON.stringify(res)))) + ":END";
})();
</script>`

var resultRe = regexp.MustCompile(`RESULT:([A-Za-z0-9+/=]+):END`)

// renderAll renders charts in one headless browser and returns what Mermaid
// said of each.
func renderAll(t *testing.T, browser, js string, charts []chart) []rendered {
	t.Helper()
	html := writePage(t, js, charts)
	out := runBrowser(t, browser, "--dump-dom", "file://"+html)
	m := resultRe.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the page did not finish rendering (is %s Mermaid?); the browser printed:\n%.2000s", js, out)
	}
	raw, err := base64.StdEncoding.DecodeString(m[1])
	if err != nil {
		t.Fatal(err)
	}
	var res []rendered
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// picture writes a PNG of one chart, as a browser shows it.
func picture(t *testing.T, browser, js, block, out string) {
	t.Helper()
	cs := mermaidBlocks("picture", block)
	if len(cs) != 1 {
		t.Fatalf("the chart to picture holds %d Mermaid blocks", len(cs))
	}
	html := writePage(t, js, cs)
	runBrowser(t, browser, "--screenshot="+out, "--window-size=880,520", "--hide-scrollbars", "file://"+html)
	if st, err := os.Stat(out); err != nil || st.Size() == 0 {
		t.Fatalf("no picture written to %s: %v", out, err)
	}
	t.Logf("wrote %s", out)
}

func writePage(t *testing.T, js string, charts []chart) string {
	t.Helper()
	data, err := json.Marshal(charts)
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(js)
	if err != nil {
		t.Fatal(err)
	}
	// JSON escapes < and >, so no chart text can close the script.
	html := filepath.Join(t.TempDir(), "charts.html")
	if err := os.WriteFile(html, fmt.Appendf(nil, page, "file://"+abs, data), 0o644); err != nil {
		t.Fatal(err)
	}
	return html
}

// runBrowser runs headless Chromium with the flags that keep it off the
// network, and a fresh profile, and returns what it printed.
func runBrowser(t *testing.T, browser string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--virtual-time-budget=20000", "--run-all-compositor-stages-before-draw"}
	cmd := exec.CommandContext(ctx, browser, append(base, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%.3000s", browser, err, stderr.String())
	}
	return stdout.String()
}
