package version

import (
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	for _, c := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"nil", nil, "gns-guard (devel) (" + runtime.Version() + ")"},
		{"release", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc1234def567890"}, {Key: "vcs.modified", Value: "false"},
		}}, "gns-guard v1.2.3 (commit abc1234, go1.26.8)"},
		{"modified", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc1234def567890"}, {Key: "vcs.modified", Value: "true"}, {Key: "vcs.time", Value: "2026-05-16T13:20:00Z"},
		}}, "gns-guard (devel) (commit abc1234, modified, go1.26.8)"},
		{"no version", &debug.BuildInfo{GoVersion: "go1.26.8"}, "gns-guard (devel) (go1.26.8)"},
		{"short commit", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.1.0"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc"},
		}}, "gns-guard v0.1.0 (commit abc, go1.26.8)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := FromBuildInfo(c.bi).String(); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestBuildJSON(t *testing.T) {
	b := FromBuildInfo(&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc1234def567890"}, {Key: "vcs.modified", Value: "true"}, {Key: "vcs.time", Value: "2026-05-16T13:20:00Z"},
	}})
	data, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"version":"v1.2.3","commit":"abc1234def567890","commit_time":"2026-05-16T13:20:00Z","modified":true,"go":"go1.26.8"}`
	if string(data) != want {
		t.Errorf("got %s\nwant %s", data, want)
	}
}

// The test binary has build information: the running build is read, in one
// line.
func TestInfo(t *testing.T) {
	s := String()
	if !strings.HasPrefix(s, "gns-guard ") || !strings.Contains(s, runtime.Version()) || strings.Contains(s, "\n") {
		t.Errorf("String() = %q", s)
	}
	if Info().Go == "" || Info().Version == "" {
		t.Errorf("Info() = %+v", Info())
	}
}
