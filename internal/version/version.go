package version

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Devel is `go build` or `go run` in the source tree.
const Devel = "(devel)"

// Build is what a binary knows of its own build.
type Build struct {
	// Version is v1.2.3, a pseudo-version, or Devel.
	Version string `json:"version"`
	// Commit is "" when the build recorded none.
	Commit string `json:"commit,omitempty"`
	// CommitTime is the revision's time (RFC 3339), or "".
	CommitTime string `json:"commit_time,omitempty"`
	// Modified: the work tree had uncommitted changes.
	Modified bool `json:"modified"`
	// Go is e.g. go1.26.8.
	Go string `json:"go"`
}

// Info returns the running binary's build.
func Info() Build {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Build{Version: Devel, Go: runtime.Version()}
	}
	return FromBuildInfo(bi)
}

// String is Info().String().
func String() string { return Info().String() }

// FromBuildInfo(nil) gives a Devel build.
func FromBuildInfo(bi *debug.BuildInfo) Build {
	b := Build{Version: Devel, Go: runtime.Version()}
	if bi == nil {
		return b
	}
	if v := bi.Main.Version; v != "" {
		b.Version = v
	}
	if bi.GoVersion != "" {
		b.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.CommitTime = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String reads "gns-guard v1.2.3 (commit abc1234, go1.26.8)", "modified"
// when dirty.
func (b Build) String() string {
	var s strings.Builder
	s.WriteString("gns-guard ")
	if b.Version == "" {
		s.WriteString(Devel)
	} else {
		s.WriteString(b.Version)
	}
	s.WriteString(" (")
	if b.Commit != "" {
		s.WriteString("commit ")
		s.WriteString(short(b.Commit))
		if b.Modified {
			s.WriteString(", modified")
		}
		s.WriteString(", ")
	}
	s.WriteString(b.Go)
	s.WriteString(")")
	return s.String()
}

// short abbreviates as git does: 7 characters.
func short(commit string) string {
	if len(commit) > 7 {
		return commit[:7]
	}
	return commit
}
