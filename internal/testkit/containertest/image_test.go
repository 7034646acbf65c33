package containertest_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/x509"
	"debug/elf"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit/containertest"
)

// maxImageBytes is the most a runner may download for the action's image
// (its layers gzip-compressed, as a registry stores them): every runner
// pulls it before the first verdict. maxUnpackedBytes bounds the image on
// disk: the base, the binary and the tokenizer vocabularies it embeds
// compressed (internal/tokens); the meter and its store drivers are left
// out (the nometer build tag).
const (
	maxImageBytes    = 15 << 20
	maxUnpackedBytes = 15 << 20
)

// TestImage builds the Dockerfile, unmodified, with the legacy builder and
// checks what the runner relies on: the entrypoint runs the guard, the
// image runs as root (the runner mounts the workspace and the output files
// owned by root), the binary is static (the base has no C library), the CA
// bundle is there (a Gitea behind HTTPS), and the image is small.
func TestImage(t *testing.T) {
	e := containertest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	img, took := buildImage(t, e)
	t.Logf("docker build (legacy builder, its layer cache shared with the other tests) of the Dockerfile: %s", took.Round(100*time.Millisecond))

	out, err := e.Docker(ctx, nil, "image", "inspect", img)
	if err != nil {
		t.Fatal(err)
	}
	var inspect []struct {
		Size   int64
		Config struct {
			User       string
			Entrypoint []string
			Cmd        []string
		}
	}
	if err := json.Unmarshal([]byte(out), &inspect); err != nil || len(inspect) != 1 {
		t.Fatalf("docker image inspect: %v\n%s", err, out)
	}
	im := inspect[0]
	t.Logf("image size: %d bytes (%.1f MB; the base is a stand-in for %s)", im.Size, float64(im.Size)/(1<<20), e.Images.Base)
	pull := compressedSize(t, e, img)
	t.Logf("image download size (gzip, as pushed): %d bytes (%.1f MB)", pull, float64(pull)/(1<<20))
	if pull > maxImageBytes {
		t.Errorf("a runner downloads %.1f MB for the image, more than %d MB", float64(pull)/(1<<20), maxImageBytes>>20)
	}
	// The bound catches a fat base, an unstripped binary, or the tokenizer
	// library's own vocabularies linked in beside the compressed copies
	// (about 7 MB).
	if im.Size > maxUnpackedBytes {
		t.Errorf("the image unpacks to %.1f MB, more than %d MB", float64(im.Size)/(1<<20), maxUnpackedBytes>>20)
	}
	switch im.Config.User {
	case "", "0", "root", "0:0", "root:root":
	default:
		t.Errorf("the image runs as %q; Docker actions must run as root to write the workspace and GITHUB_OUTPUT the runner mounts", im.Config.User)
	}
	if ep := strings.Join(im.Config.Entrypoint, " "); ep != "/usr/local/bin/gns-guard" {
		t.Errorf("entrypoint %q, want /usr/local/bin/gns-guard (action.yml's args follow it)", ep)
	}

	bin := fileFromImage(t, e, img, "/usr/local/bin/gns-guard")
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatalf("/usr/local/bin/gns-guard is not an ELF binary: %v", err)
	}
	if static, err := containertest.IsStaticELF(f); err != nil || !static {
		t.Errorf("/usr/local/bin/gns-guard is not static (%v): it needs a C library the distroless static base does not have", err)
	}
	if f.Section(".debug_info") != nil || f.Section(".symtab") != nil {
		t.Error("/usr/local/bin/gns-guard is not stripped (-ldflags=\"-s -w\")")
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(fileFromImage(t, e, img, "/etc/ssl/certs/ca-certificates.crt")) {
		t.Error("the image's /etc/ssl/certs/ca-certificates.crt holds no certificate: the guard could not reach a Gitea behind HTTPS")
	}

	// The image runs the guard with no shell: the CLI answers.
	schema, err := e.Docker(ctx, nil, "run", "--rm", "--network", "none", img, "schema")
	if err != nil {
		t.Fatalf("running the image: %v", err)
	}
	if !json.Valid([]byte(schema)) || !strings.Contains(schema, "checkpoint") {
		t.Errorf("`gns-guard schema` in the image printed:\n%.300s", schema)
	}
	// The step's image leaves the meter out, and says where it is.
	if out, err := e.Docker(ctx, nil, "run", "--rm", "--network", "none", img, "meter"); err == nil || !strings.Contains(err.Error()+out, "this build of gns-guard has no meter") {
		t.Errorf("`gns-guard meter` in the step's image: %v\n%.300s", err, out)
	}
}

// fileFromImage returns a file's content from the image's file system.
func fileFromImage(t *testing.T, e *containertest.Engine, img, path string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id, err := e.Docker(ctx, nil, "create", img)
	if err != nil {
		t.Fatal(err)
	}
	id = strings.TrimSpace(id)
	defer e.Docker(ctx, nil, "rm", "-f", id) //nolint:errcheck
	out, err := e.Docker(ctx, nil, "cp", id+":"+path, "-")
	if err != nil {
		t.Fatalf("the image has no %s: %v", path, err)
	}
	tr := tar.NewReader(strings.NewReader(out))
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("reading %s from the image: %v", path, err)
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
}

// The image the tests build themselves, once per test process.
var built struct {
	once sync.Once
	tag  string
	took time.Duration
	err  error
}

// buildImage builds the Dockerfile into a local image once and returns its
// tag and how long the build took.
func buildImage(t *testing.T, e *containertest.Engine) (string, time.Duration) {
	t.Helper()
	built.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		built.tag = "gns-guard-test/gns-guard:built"
		built.took, built.err = e.Build(ctx, built.tag)
	})
	if built.err != nil {
		t.Fatalf("building the Dockerfile: %v\n--- dockerd log ---\n%s", built.err, e.LogTail())
	}
	return built.tag, built.took
}

// compressedSize is the image's size as a registry holds it: its saved
// layers, gzip-compressed at the default level, as docker push does.
func compressedSize(t *testing.T, e *containertest.Engine, img string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := e.Command(ctx, "save", img)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var n countWriter
	zw := gzip.NewWriter(&n)
	if _, err := io.Copy(zw, out); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("docker save %s: %v", img, err)
	}
	return int64(n)
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}
