package containertest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit"
	"github.com/gns-guard/gns-guard/internal/testkit/containertest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
	"gopkg.in/yaml.v3"
)

// The release the tests make: the project pushed as releaseRepo and tagged
// releaseTag, which starts .gitea/workflows/release.yml on the runner. It
// moves releaseMajor to a commit whose action.yml names the image by
// digest, so a workflow says `uses: <owner>/gns-guard-release@v0`.
const (
	releaseRepo  = "gns-guard-release"
	releaseTag   = "v0.9.0"
	releaseMajor = "v0"
)

// releasePlatforms are the binaries a release holds, by GOOS/GOARCH.
var releasePlatforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"}

var released struct {
	once sync.Once
	run  giteatest.WorkflowRun
	log  string
	took time.Duration
	err  error
}

// checkReleaseWorkflow checks what release.yml must say for the tests'
// release to mean anything: it runs on v* tags, in a job container the
// test runner's label serves. It returns the names of the job's steps.
func checkReleaseWorkflow(t testing.TB) []string {
	t.Helper()
	root, err := testkit.Root()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, ".gitea", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		On   map[string]map[string][]string `yaml:"on"`
		Jobs map[string]struct {
			RunsOn string `yaml:"runs-on"`
			Steps  []struct {
				Name string `yaml:"name"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatalf("release.yml: %v", err)
	}
	if tags := wf.On["push"]["tags"]; len(tags) != 1 || tags[0] != "v*" {
		t.Errorf("release.yml runs on tags %v, want v*", tags)
	}
	if len(wf.Jobs) != 1 {
		t.Fatalf("release.yml has %d jobs, want 1", len(wf.Jobs))
	}
	var steps []string
	for name, j := range wf.Jobs {
		if j.RunsOn != "ubuntu-latest" {
			t.Errorf("release.yml's job %s runs on %q; the test runner serves ubuntu-latest", name, j.RunsOn)
		}
		for _, st := range j.Steps {
			steps = append(steps, st.Name)
		}
	}
	return steps
}

// release pushes the project (its CI workflow left out) as releaseRepo,
// with the secret release.yml pushes the image with, tags it releaseTag
// and waits for the release workflow's run on the test runner. It fails the
// test unless the run succeeded.
func release(t testing.TB, w world) {
	t.Helper()
	checkReleaseWorkflow(t)
	released.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		owner := w.s.AdminLogin
		if released.err = containertest.CreateRepo(ctx, w.s, owner, releaseRepo); released.err != nil {
			return
		}
		if released.err = w.s.API(ctx, w.s.AdminToken, http.MethodPut, "/repos/"+owner+"/"+releaseRepo+"/actions/secrets/GNS_GUARD_REGISTRY_TOKEN", map[string]any{"data": w.s.AdminToken}, nil); released.err != nil {
			return
		}
		began := time.Now()
		withoutCI := func(dir string) error { return os.Remove(filepath.Join(dir, ".gitea", "workflows", "ci.yml")) }
		if _, released.err = containertest.PushFiles(ctx, w.s, owner, releaseRepo, withoutCI, releaseTag); released.err != nil {
			return
		}
		deadline := time.Now().Add(15 * time.Minute)
		for {
			runs, err := w.s.WorkflowRuns(ctx, owner, releaseRepo)
			if err != nil {
				released.err = err
				return
			}
			if len(runs) > 1 {
				released.err = fmt.Errorf("%s/%s has %d workflow runs, want the release's:\n%s", owner, releaseRepo, len(runs), giteatest.RunList(runs))
				return
			}
			if len(runs) == 1 && runs[0].Status == "completed" {
				released.run = runs[0]
				break
			}
			if time.Now().After(deadline) {
				released.err = fmt.Errorf("gave up waiting for the release run:\n%s\n--- runner output ---\n%s\n--- dockerd log ---\n%s", giteatest.RunList(runs), w.runner.LogTail(), w.e.LogTail())
				return
			}
			time.Sleep(time.Second)
		}
		released.took = time.Since(began)
		released.log, released.err = w.s.JobLog(ctx, owner, releaseRepo, released.run)
		if released.err == nil && released.run.Conclusion != "success" {
			released.err = fmt.Errorf("the release run, want success: %s\n%s", released.run, released.log)
		}
	})
	if released.err != nil {
		t.Fatal(released.err)
	}
}

type releaseAsset struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
	URL  string `json:"browser_download_url"`
}

// download fetches a URL of the server with the administrator's token.
func download(t *testing.T, s *giteatest.Server, u string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "token "+s.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d, %v", u, resp.StatusCode, err)
	}
	return b
}

// TestRelease pushes a tag and checks what the release workflow made on
// the real runner: a release with the four binaries and SHA256SUMS; each
// binary matches its checksum, is built for its platform, static and
// stripped, and carries the tag as its version; this machine's runs and
// says so; the image is in the registry; and the moving major tag's
// action.yml names that image by its digest.
func TestRelease(t *testing.T) {
	w := requireWorld(t)
	release(t, w)
	t.Logf("from the tag push to the finished release run: %s; its steps:\n%s", released.took.Round(100*time.Millisecond), stepTimes(released.log, checkReleaseWorkflow(t)))
	owner := w.s.AdminLogin
	repoAPI := "/repos/" + owner + "/" + releaseRepo
	if strings.Contains(released.log, w.s.AdminToken) {
		t.Error("the release run's log shows the registry token")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var rel struct {
		TagName    string         `json:"tag_name"`
		Prerelease bool           `json:"prerelease"`
		Draft      bool           `json:"draft"`
		Body       string         `json:"body"`
		Assets     []releaseAsset `json:"assets"`
	}
	if err := w.s.API(ctx, w.s.AdminToken, http.MethodGet, repoAPI+"/releases/tags/"+releaseTag, nil, &rel); err != nil {
		t.Fatalf("no release of %s: %v\n%s", releaseTag, err, released.log)
	}
	if rel.Draft || rel.Prerelease {
		t.Errorf("the release of %s is a draft (%v) or a prerelease (%v)", releaseTag, rel.Draft, rel.Prerelease)
	}
	assets := map[string]releaseAsset{}
	var names []string
	for _, a := range rel.Assets {
		assets[a.Name] = a
		names = append(names, a.Name)
	}
	want := []string{"SHA256SUMS"}
	for _, p := range releasePlatforms {
		want = append(want, "gns-guard-"+strings.ReplaceAll(p, "/", "-"))
	}
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("the release's assets are %v, want %v", names, want)
	}

	sums := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(download(t, w.s, assets["SHA256SUMS"].URL))), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q is not sha256sum's", line)
		}
		sums[name] = sum
	}
	for _, p := range releasePlatforms {
		goos, goarch, _ := strings.Cut(p, "/")
		name := "gns-guard-" + goos + "-" + goarch
		bin := download(t, w.s, assets[name].URL)
		if sum := sha256.Sum256(bin); hex.EncodeToString(sum[:]) != sums[name] {
			t.Errorf("%s: sha256 %x, SHA256SUMS says %s", name, sum, sums[name])
		}
		checkReleaseBinary(t, name, goos, goarch, bin)
		if goos == runtime.GOOS && goarch == runtime.GOARCH {
			path := filepath.Join(t.TempDir(), name)
			if err := os.WriteFile(path, bin, 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := exec.CommandContext(ctx, path, "--version").CombinedOutput()
			if err != nil || !strings.HasPrefix(string(out), "gns-guard "+releaseTag+" (commit ") || strings.Contains(string(out), "modified") {
				t.Errorf("%s --version: %v\n%s\nwant gns-guard %s (commit ..., go...)", name, err, out, releaseTag)
			}
		}
	}

	// The image, in the registry under the tag and the digest action.yml
	// names at the moving tag.
	var pkg struct {
		Version string `json:"version"`
	}
	if err := w.s.API(ctx, w.s.AdminToken, http.MethodGet, "/packages/"+owner+"/container/gns-guard/"+releaseTag, nil, &pkg); err != nil {
		t.Errorf("the server has no container package gns-guard %s: %v", releaseTag, err)
	}
	digest := manifestDigest(t, w.s, strings.ToLower(owner)+"/gns-guard", releaseTag)
	var atTag, atMajor string
	if err := w.s.API(ctx, w.s.AdminToken, http.MethodGet, repoAPI+"/raw/action.yml?ref="+releaseTag, nil, &atTag); err != nil {
		t.Fatal(err)
	}
	if err := w.s.API(ctx, w.s.AdminToken, http.MethodGet, repoAPI+"/raw/action.yml?ref="+releaseMajor, nil, &atMajor); err != nil {
		t.Fatalf("no action.yml at the moving tag %s: %v\n%s", releaseMajor, err, released.log)
	}
	image := regexp.MustCompile(`(?m)^  image: (.*)$`)
	m := image.FindStringSubmatch(atMajor)
	if m == nil || !strings.HasPrefix(m[1], "docker://") || !strings.HasSuffix(m[1], "/"+strings.ToLower(owner)+"/gns-guard@"+digest) {
		t.Errorf("action.yml at %s says image: %v, want docker://HOST/%s/gns-guard@%s", releaseMajor, m, strings.ToLower(owner), digest)
	} else if image.ReplaceAllString(atMajor, "  image: Dockerfile") != atTag {
		t.Errorf("action.yml at %s differs from %s's in more than runs.image", releaseMajor, releaseTag)
	}
	if !strings.Contains(rel.Body, "@"+digest) {
		t.Errorf("the release's notes do not name the image by digest %s:\n%s", digest, rel.Body)
	}
}

// checkReleaseBinary checks a released binary: built for goos/goarch, static
// and stripped, with the tag as its module version and a clean checkout's
// build settings.
func checkReleaseBinary(t *testing.T, name, goos, goarch string, bin []byte) {
	t.Helper()
	switch goos {
	case "linux":
		f, err := elf.NewFile(bytes.NewReader(bin))
		if err != nil {
			t.Errorf("%s is not an ELF binary: %v", name, err)
			return
		}
		machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[goarch]
		if f.Machine != machine {
			t.Errorf("%s is for %s, want %s", name, f.Machine, machine)
		}
		if static, err := containertest.IsStaticELF(f); err != nil || !static {
			t.Errorf("%s is not static (%v)", name, err)
		}
		if f.Section(".symtab") != nil || f.Section(".debug_info") != nil {
			t.Errorf("%s is not stripped", name)
		}
	case "darwin":
		f, err := macho.NewFile(bytes.NewReader(bin))
		if err != nil {
			t.Errorf("%s is not a Mach-O binary: %v", name, err)
			return
		}
		cpu := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[goarch]
		if f.Cpu != cpu {
			t.Errorf("%s is for %s, want %s", name, f.Cpu, cpu)
		}
		// Stripped, the symbol table keeps only what the binary imports
		// from libSystem.
		defined := 0
		if f.Symtab != nil {
			for _, sym := range f.Symtab.Syms {
				if sym.Sect != 0 {
					defined++
				}
			}
		}
		if defined > 0 || f.Segment("__DWARF") != nil {
			t.Errorf("%s is not stripped: %d symbols defined, DWARF %v", name, defined, f.Segment("__DWARF") != nil)
		}
	}
	bi, err := buildinfo.Read(bytes.NewReader(bin))
	if err != nil {
		t.Errorf("%s: no build information: %v", name, err)
		return
	}
	if bi.Main.Path != "github.com/gns-guard/gns-guard" || bi.Main.Version != releaseTag {
		t.Errorf("%s is module %s %s, want github.com/gns-guard/gns-guard %s", name, bi.Main.Path, bi.Main.Version, releaseTag)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	// (With -trimpath the go command does not record -ldflags.)
	for k, v := range map[string]string{"CGO_ENABLED": "0", "-trimpath": "true", "GOOS": goos, "GOARCH": goarch, "vcs": "git", "vcs.modified": "false"} {
		if settings[k] != v {
			t.Errorf("%s was built with %s=%q, want %q", name, k, settings[k], v)
		}
	}
}

// stepTimes lists how long each step of a job log took: a step's output
// starts with a "::group::Run " line, every line with a timestamp. names
// are the steps' names, in order.
func stepTimes(log string, names []string) string {
	var starts []time.Time
	var first, last time.Time
	for _, line := range strings.Split(log, "\n") {
		stamp, text, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, stamp)
		if err != nil {
			continue
		}
		if first.IsZero() {
			first = at
		}
		last = at
		if strings.HasPrefix(text, "::group::Run ") {
			starts = append(starts, at)
		}
	}
	if len(starts) == 0 {
		return "  (no steps in the log)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  %6.1fs  (setting up the job)\n", starts[0].Sub(first).Seconds())
	for i, at := range starts {
		end := last
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		name := fmt.Sprintf("step %d", i+1)
		if i < len(names) {
			name = names[i]
		}
		fmt.Fprintf(&b, "  %6.1fs  %s\n", end.Sub(at).Seconds(), name)
	}
	return strings.TrimRight(b.String(), "\n")
}

// manifestDigest asks the server's registry for the digest of repo:tag,
// as the administrator.
func manifestDigest(t *testing.T, s *giteatest.Server, repo, tag string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	do := func(req *http.Request) *http.Response {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			t.Fatalf("%s %s: HTTP %d: %s", req.Method, req.URL, resp.StatusCode, b)
		}
		return resp
	}
	q := url.Values{"service": {"container_registry"}, "scope": {"repository:" + repo + ":pull"}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/v2/token?"+q.Encode(), nil)
	req.SetBasicAuth(s.AdminLogin, s.AdminToken)
	resp := do(req)
	var tok struct {
		Token string `json:"token"`
	}
	err := json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if err != nil || tok.Token == "" {
		t.Fatalf("the registry's token: %v", err)
	}
	req, _ = http.NewRequestWithContext(ctx, http.MethodHead, s.URL+"/v2/"+repo+"/manifests/"+tag, nil)
	req.Header.Set("Authorization", "Bearer "+tok.Token)
	req.Header.Set("Accept", "application/vnd.docker.distribution.manifest.v2+json, application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.list.v2+json, application/vnd.oci.image.index.v1+json")
	resp = do(req)
	resp.Body.Close()
	digest := resp.Header.Get("Docker-Content-Digest")
	if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(digest) {
		t.Fatalf("the registry gives %s:%s the digest %q", repo, tag, digest)
	}
	return digest
}

// TestReleaseImage checks that a workflow using the action at the release's
// moving tag runs the released image: the runner pulls it by digest
// (logged in, as the README says runners must be) and builds nothing, and
// the guard says it is the tagged version.
func TestReleaseImage(t *testing.T) {
	w := requireWorld(t)
	release(t, w)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := w.e.RemoveImagesExcept(ctx); err != nil {
		t.Fatal(err)
	}
	runnerLogin(t, w)

	r := w.newRepo(t, guardWorkflow(w.s.AdminLogin+"/"+releaseRepo+"@"+releaseMajor, w.tokens.url, map[string]string{"default-max-depth": "2", "pressure-threshold": "0.9"}, nil))
	r.openIssue(1, "Rate limiting", example(t, "healthy.md", 1))
	runs := r.waitRuns(1, 1)
	log := r.jobLog(runs[0])
	if runs[0].Conclusion != "success" {
		t.Errorf("the run with the released image, want success:\n%s\n%s", giteatest.RunList(runs), log)
	}
	if strings.Contains(log, "docker build") {
		t.Errorf("the runner built an image, though action.yml names a released one:\n%s", log)
	}
	wantLine(t, log, "gns-guard: gns-guard "+releaseTag+" (commit ", "the released binary ran")
	wantLine(t, log, "outputs: result=pass ", "the pulled image ran the guard")

	out, err := w.e.Docker(ctx, nil, "image", "ls", "--digests", "--format", "{{.Repository}}@{{.Digest}}")
	if err != nil {
		t.Fatal(err)
	}
	digest := manifestDigest(t, w.s, strings.ToLower(w.s.AdminLogin)+"/gns-guard", releaseTag)
	if !strings.Contains(out, "/"+strings.ToLower(w.s.AdminLogin)+"/gns-guard@"+digest) {
		t.Errorf("the engine holds no gns-guard image by the digest %s the moving tag names:\n%s", digest, out)
	}
}

// runnerLogin logs the runner's user in to the server's registry, as
// `docker login` on the runner's machine would: the runner reads
// $HOME/.docker/config.json when it pulls an action's image. Both of the
// server's addresses: its own and the one the runner's jobs are given.
func runnerLogin(t testing.TB, w world) {
	t.Helper()
	dir := filepath.Join(w.runner.WorkDir, "home", ".docker")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	auth := base64.StdEncoding.EncodeToString([]byte(w.s.AdminLogin + ":" + w.s.AdminToken))
	auths := map[string]any{}
	for _, u := range []string{w.s.URL, w.proxy.url} {
		auths[strings.TrimPrefix(u, "http://")] = map[string]string{"auth": auth}
	}
	cfg, err := json.Marshal(map[string]any{"auths": auths})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
}
