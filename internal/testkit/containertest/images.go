package containertest

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// standInNames reads the base images the Dockerfile's stages start from
// and returns the stand-in names: the build stage's golang image and the
// final stage's distroless static image. A base image with no stand-in is an
// error that says so. FROM lines may name an ARG declared before the first
// FROM; its default value counts.
func standInNames(root string) (StandIns, error) {
	df, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		return StandIns{}, fmt.Errorf("containertest: %w", err)
	}
	var s StandIns
	stages := map[string]bool{}
	args := map[string]string{}
	seenFrom := false
	sc := bufio.NewScanner(bytes.NewReader(df))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && strings.EqualFold(f[0], "ARG") && !seenFrom {
			name, value, _ := strings.Cut(f[1], "=")
			args[name] = strings.Trim(value, `"'`)
			continue
		}
		if len(f) < 2 || !strings.EqualFold(f[0], "FROM") {
			continue
		}
		seenFrom = true
		var image string
		for _, w := range f[1:] {
			if !strings.HasPrefix(w, "--") {
				image = os.Expand(w, func(name string) string { return args[name] })
				break
			}
		}
		if len(f) >= 4 && strings.EqualFold(f[len(f)-2], "AS") {
			stages[strings.ToLower(f[len(f)-1])] = true
		}
		switch {
		case stages[strings.ToLower(image)] && !strings.Contains(image, ":"):
			// a stage of this Dockerfile
		case strings.HasPrefix(image, "golang:"):
			s.Builder = image
		case strings.HasPrefix(image, "gcr.io/distroless/static"):
			s.Base = image
		default:
			return StandIns{}, fmt.Errorf("containertest: the Dockerfile starts a stage from %s, which has no local stand-in (no image registry is reachable in CI): add one in internal/testkit/containertest", image)
		}
	}
	if s.Builder == "" || s.Base == "" {
		return StandIns{}, fmt.Errorf("containertest: the Dockerfile has no golang build stage and distroless final stage to stand in for (found %+v)", s)
	}
	s.Job = JobImage
	return s, nil
}

// checkGoTag checks that the golang image's tag names the Go the stand-in
// is made from (golang:1.26-bookworm for go1.26.x): a stand-in must not
// pretend to be another Go.
func checkGoTag(image, goVersion string) error {
	tag := strings.TrimPrefix(image, "golang:")
	tagVersion, _, _ := strings.Cut(tag, "-")
	v := strings.TrimPrefix(goVersion, "go")
	if v == tagVersion || strings.HasPrefix(v, tagVersion+".") {
		return nil
	}
	return fmt.Errorf("containertest: the Dockerfile builds with %s, but the Go here is %s: the stand-in is made from this Go, so install Go %s or change the Dockerfile", image, goVersion, tagVersion)
}

// ensureStandIns imports each stand-in image the engine lacks.
func (e *Engine) ensureStandIns(ctx context.Context, root string) error {
	type standIn struct {
		name    string
		changes []string
		write   func(*rootfs) error
	}
	goroot, err := goEnv(ctx, "GOROOT")
	if err != nil {
		return err
	}
	goVersion, err := goEnv(ctx, "GOVERSION")
	if err != nil {
		return err
	}
	list := []standIn{
		{
			name: e.Images.Builder,
			// What the golang image sets, plus an offline module proxy: the
			// project's modules are in /go/pkg/mod.
			changes: []string{
				"ENV PATH=/usr/local/go/bin:/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
				"ENV GOLANG_VERSION=" + strings.TrimPrefix(goVersion, "go"),
				"ENV GOPATH=/go",
				"ENV GOTOOLCHAIN=local",
				"ENV GOPROXY=off",
				"ENV GOFLAGS=-mod=mod",
				"ENV HOME=/root",
				"WORKDIR /go",
			},
			write: func(r *rootfs) error { return writeBuilder(ctx, r, root, goroot) },
		},
		{
			name:    e.Images.Base,
			changes: []string{"ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"},
			write:   writeStaticBase,
		},
		{
			name:    e.Images.Job,
			changes: []string{"ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "CMD [\"sh\"]"},
			write:   func(r *rootfs) error { return writeJobImage(r, e.docker) },
		},
	}
	for _, s := range list {
		if _, err := e.Docker(ctx, nil, "image", "inspect", "--format", "{{.Id}}", s.name); err == nil {
			continue
		}
		began := time.Now()
		if err := e.importRootfs(ctx, s.name, s.changes, s.write); err != nil {
			return fmt.Errorf("containertest: making the stand-in for %s: %w", s.name, err)
		}
		fmt.Fprintf(os.Stderr, "containertest: imported the stand-in %s in %s (cached in %s)\n", s.name, time.Since(began).Round(100*time.Millisecond), e.dataRoot)
	}
	return nil
}

// importRootfs streams a root file system written by write into `docker
// import` under name.
func (e *Engine) importRootfs(ctx context.Context, name string, changes []string, write func(*rootfs) error) error {
	args := []string{"import"}
	for _, c := range changes {
		args = append(args, "--change", c)
	}
	args = append(args, "-", name)
	pr, pw := io.Pipe()
	go func() {
		r := &rootfs{tw: tar.NewWriter(pw), seen: map[string]bool{}}
		err := write(r)
		if err == nil {
			err = r.tw.Close()
		}
		pw.CloseWithError(err)
	}()
	_, err := e.Docker(ctx, pr, args...)
	pr.Close()
	if err != nil {
		// docker import may have taken the stream cut short for a whole
		// file system: never leave a partial stand-in behind.
		_, _ = e.Docker(context.WithoutCancel(ctx), nil, "image", "rm", "-f", name)
	}
	return err
}

// rootfs writes a root file system as a tar stream, every entry owned by
// root.
type rootfs struct {
	tw   *tar.Writer
	seen map[string]bool
}

var epoch = time.Unix(0, 0)

// dir adds a directory and its missing parents.
func (r *rootfs) dir(name string, mode int64) error {
	name = strings.Trim(name, "/")
	if name == "" || r.seen[name] {
		return nil
	}
	if parent := filepath.Dir(name); parent != "." {
		if err := r.dir(parent, 0o755); err != nil {
			return err
		}
	}
	r.seen[name] = true
	return r.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, ModTime: epoch})
}

func (r *rootfs) file(name string, mode int64, data []byte) error {
	name = strings.Trim(name, "/")
	if err := r.dir(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	r.seen[name] = true
	if err := r.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: epoch}); err != nil {
		return err
	}
	_, err := r.tw.Write(data)
	return err
}

func (r *rootfs) symlink(name, target string) error {
	name = strings.Trim(name, "/")
	if r.seen[name] {
		return nil
	}
	if err := r.dir(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	r.seen[name] = true
	return r.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777, ModTime: epoch})
}

// hostFile copies a file of this machine to name, keeping its mode.
func (r *rootfs) hostFile(src, name string) error {
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	name = strings.Trim(name, "/")
	if err := r.dir(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	r.seen[name] = true
	if err := r.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: int64(fi.Mode().Perm()), Size: fi.Size(), ModTime: fi.ModTime()}); err != nil {
		return err
	}
	_, err = io.Copy(r.tw, f)
	return err
}

// tree copies the directory src to name, skipping the entries skip names
// (paths relative to src).
func (r *rootfs) tree(src, name string, skip func(rel string) bool) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if skip != nil && rel != "." && skip(filepath.ToSlash(rel)) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		dst := filepath.Join(name, rel)
		switch {
		case d.IsDir():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			return r.dir(dst, int64(fi.Mode().Perm()))
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return r.symlink(dst, target)
		case d.Type().IsRegular():
			return r.hostFile(p, dst)
		}
		return nil // sockets, devices: nothing a build needs
	})
}

const caBundle = "/etc/ssl/certs/ca-certificates.crt"

// etc writes the files every stand-in has: users and groups as distroless
// has them, name resolution, the CA bundle of this machine, /tmp and root's
// home.
func etc(r *rootfs) error {
	files := map[string]string{
		"etc/passwd":        "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n",
		"etc/group":         "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n",
		"etc/nsswitch.conf": "hosts: files dns\n",
	}
	for _, name := range []string{"etc/passwd", "etc/group", "etc/nsswitch.conf"} {
		if err := r.file(name, 0o644, []byte(files[name])); err != nil {
			return err
		}
	}
	if err := r.hostFile(caBundle, caBundle); err != nil {
		return fmt.Errorf("the CA bundle (install ca-certificates): %w", err)
	}
	if err := r.dir("tmp", 0o1777); err != nil {
		return err
	}
	if err := r.dir("root", 0o700); err != nil {
		return err
	}
	return r.dir("home/nonroot", 0o700)
}

// busybox adds a static busybox as /bin/busybox with a link per applet, so
// /bin/sh and the usual tools exist.
func busybox(r *rootfs) error {
	path, err := exec.LookPath("busybox")
	if err != nil {
		return fmt.Errorf("no busybox on PATH: install Debian's busybox-static (.ci/run does): %w", err)
	}
	if path, err = filepath.EvalSymlinks(path); err != nil {
		return err
	}
	if static, err := isStatic(path); err != nil || !static {
		return fmt.Errorf("%s is not a static binary (%v): install Debian's busybox-static (.ci/run does)", path, err)
	}
	if err := r.hostFile(path, "bin/busybox"); err != nil {
		return err
	}
	out, err := exec.Command(path, "--list-full").Output()
	if err != nil {
		return fmt.Errorf("busybox --list-full: %w", err)
	}
	for _, applet := range strings.Fields(string(out)) {
		if applet == "bin/busybox" {
			continue
		}
		if err := r.symlink(applet, "/bin/busybox"); err != nil {
			return err
		}
	}
	return nil
}

// isStatic reports whether the ELF file at path needs no dynamic loader and
// no shared library.
func isStatic(path string) (bool, error) {
	f, err := elf.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	return IsStaticELF(f)
}

// IsStaticELF reports whether the ELF file needs no dynamic loader and no
// shared library.
func IsStaticELF(f *elf.File) (bool, error) {
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false, nil
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return false, err
	}
	return len(libs) == 0, nil
}

// writeStaticBase writes the stand-in for gcr.io/distroless/static-debian12:
// users, CA certificates, /tmp. No shell, like the real one.
func writeStaticBase(r *rootfs) error {
	return etc(r)
}

// writeJobImage writes the job container's image, a stand-in for a
// runner's ubuntu-latest image as far as the project's workflows need one:
// busybox (a shell, sha256sum, the usual tools), and this machine's git,
// curl and docker CLI (docker), for the release workflow.
func writeJobImage(r *rootfs, docker string) error {
	if err := etc(r); err != nil {
		return err
	}
	if err := busybox(r); err != nil {
		return err
	}
	if err := r.program(docker, "usr/bin/docker"); err != nil {
		return fmt.Errorf("the docker CLI: %w", err)
	}
	// busybox's wget cuts a file it posts at the first NUL byte.
	curl, err := exec.LookPath("curl")
	if err != nil {
		return fmt.Errorf("no curl on PATH: install curl: %w", err)
	}
	if err := r.program(curl, "usr/bin/curl"); err != nil {
		return fmt.Errorf("curl: %w", err)
	}
	return gitTools(r, true)
}

// gitTools adds this machine's git with the shared libraries it loads, and
// with remote, its helper for http(s) remotes.
func gitTools(r *rootfs, remote bool) error {
	git, err := exec.LookPath("git")
	if err != nil {
		return fmt.Errorf("no git on PATH: install git: %w", err)
	}
	if err := r.program(git, "usr/bin/git"); err != nil {
		return fmt.Errorf("git: %w", err)
	}
	if !remote {
		return nil
	}
	// The templates git init copies (it warns without them).
	if fi, err := os.Stat("/usr/share/git-core/templates"); err == nil && fi.IsDir() {
		if err := r.tree("/usr/share/git-core/templates", "usr/share/git-core/templates", nil); err != nil {
			return err
		}
	}
	out, err := exec.Command(git, "--exec-path").Output()
	if err != nil {
		return fmt.Errorf("git --exec-path: %w", err)
	}
	// git runs its helpers from the exec path compiled into it.
	execPath := strings.TrimSpace(string(out))
	if err := r.program(filepath.Join(execPath, "git-remote-http"), filepath.Join(execPath, "git-remote-http")); err != nil {
		return fmt.Errorf("git's http helper: %w", err)
	}
	return r.symlink(filepath.Join(execPath, "git-remote-https"), "git-remote-http")
}

// program adds the executable at path (on this machine) as name, with the
// shared libraries it loads at the paths the dynamic loader finds them on
// this machine (ldd's answer), the loader among them.
func (r *rootfs) program(path, name string) error {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	if err := r.hostFile(real, name); err != nil {
		return err
	}
	static, err := isStatic(real)
	if err != nil || static {
		return err
	}
	out, err := exec.Command("ldd", real).Output()
	if err != nil {
		return fmt.Errorf("ldd %s: %w", real, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		// "libz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x...)" or
		// "/lib64/ld-linux-x86-64.so.2 (0x...)"; the vDSO has no file.
		f := strings.Fields(line)
		var lib string
		switch {
		case len(f) >= 3 && f[1] == "=>" && strings.HasPrefix(f[2], "/"):
			lib = f[2]
		case len(f) >= 1 && strings.HasPrefix(f[0], "/"):
			lib = f[0]
		default:
			continue
		}
		if r.seen[strings.Trim(lib, "/")] {
			continue
		}
		libReal, err := filepath.EvalSymlinks(lib)
		if err != nil {
			return err
		}
		if err := r.hostFile(libReal, lib); err != nil {
			return err
		}
	}
	return nil
}

// writeBuilder writes the stand-in for the golang image: busybox for
// /bin/sh, git, this machine's Go as /usr/local/go, and the project's modules in
// /go/pkg/mod (the module cache's extracted trees and the download cache's
// files the go command checks), so the Dockerfile's `go mod download` and
// `go build` run with no network.
func writeBuilder(ctx context.Context, r *rootfs, root, goroot string) error {
	if err := etc(r); err != nil {
		return err
	}
	if err := busybox(r); err != nil {
		return err
	}
	// git, for the version the go command stamps into a release's binaries
	// (the golang image has it).
	if err := gitTools(r, false); err != nil {
		return err
	}
	if err := r.tree(goroot, "usr/local/go", func(rel string) bool {
		return rel == "test" || rel == "doc" || rel == "api"
	}); err != nil {
		return fmt.Errorf("copying Go from %s: %w", goroot, err)
	}
	if err := r.dir("go/bin", 0o777); err != nil {
		return err
	}
	if err := r.dir("go/src", 0o777); err != nil {
		return err
	}
	modCache, err := goEnv(ctx, "GOMODCACHE")
	if err != nil {
		return err
	}
	mods, err := projectModules(ctx, root)
	if err != nil {
		return err
	}
	for _, m := range mods {
		for _, p := range []string{m.Info, m.GoMod, m.Zip, strings.TrimSuffix(m.Zip, ".zip") + ".ziphash"} {
			if p == "" {
				continue
			}
			rel, err := filepath.Rel(modCache, p)
			if err != nil || strings.HasPrefix(rel, "..") {
				return fmt.Errorf("module file %s is outside the module cache %s", p, modCache)
			}
			if err := r.hostFile(p, filepath.Join("go/pkg/mod", rel)); err != nil {
				return err
			}
		}
		if m.Dir == "" {
			continue
		}
		rel, err := filepath.Rel(modCache, m.Dir)
		if err != nil || strings.HasPrefix(rel, "..") {
			return fmt.Errorf("module directory %s is outside the module cache %s", m.Dir, modCache)
		}
		if err := r.tree(m.Dir, filepath.Join("go/pkg/mod", rel), nil); err != nil {
			return err
		}
	}
	// The go command reads the go.mod of every module in the graph, also of
	// versions the build does not use.
	graph, err := moduleGraph(ctx, root)
	if err != nil {
		return err
	}
	for _, mv := range graph {
		path, version, _ := strings.Cut(mv, "@")
		rel := filepath.Join("cache", "download", escapeModulePath(path), "@v", version+".mod")
		if r.seen[filepath.Join("go/pkg/mod", rel)] {
			continue
		}
		if _, err := os.Stat(filepath.Join(modCache, rel)); err != nil {
			continue // pruned from the graph: the go command does not read it here either
		}
		if err := r.hostFile(filepath.Join(modCache, rel), filepath.Join("go/pkg/mod", rel)); err != nil {
			return fmt.Errorf("the go.mod of %s: %w", mv, err)
		}
	}
	return buildCache(ctx, r, root)
}

// moduleGraph lists every module@version of the project's module graph.
func moduleGraph(ctx context.Context, root string) ([]string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "graph")
	cmd.Dir = root
	cmd.Env = goCommandEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go mod graph: %w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	seen := map[string]bool{}
	var list []string
	for _, f := range strings.Fields(string(out)) {
		if strings.HasPrefix(f, "go@") || strings.HasPrefix(f, "toolchain@") {
			continue // the Go version the graph requires, not a module
		}
		if strings.Contains(f, "@") && !seen[f] {
			seen[f] = true
			list = append(list, f)
		}
	}
	return list, nil
}

// escapeModulePath is the module cache's spelling of a module path: each
// upper-case letter as '!' and its lower case.
func escapeModulePath(p string) string {
	var b strings.Builder
	for _, c := range p {
		if c >= 'A' && c <= 'Z' {
			b.WriteByte('!')
			b.WriteRune(c + ('a' - 'A'))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// goCommandEnv is the environment for go commands run on the project:
// modules resolved as the Dockerfile's build resolves them, no workspace.
func goCommandEnv() []string {
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOFLAGS=") && !strings.HasPrefix(kv, "GOWORK=") {
			env = append(env, kv)
		}
	}
	return append(env, "GOFLAGS=-mod=mod", "GOWORK=off")
}

type module struct {
	Path, Version         string
	Info, GoMod, Zip, Dir string
	Error                 string
}

// projectModules lists the project's modules in this machine's module
// cache, downloading any that are missing through the module proxy.
func projectModules(ctx context.Context, root string) ([]module, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json")
	cmd.Dir = root
	cmd.Env = goCommandEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go mod download -json: %w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	var mods []module
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var m module
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("go mod download -json: %w", err)
		}
		if m.Error != "" {
			return nil, fmt.Errorf("go mod download %s@%s: %s", m.Path, m.Version, m.Error)
		}
		mods = append(mods, m)
	}
	return mods, nil
}
