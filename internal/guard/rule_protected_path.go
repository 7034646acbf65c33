package guard

import (
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
)

// checkProtectedPaths fails a pull request that changes a protected path
// (.kilo/ by default) without the permission::evolve-system label.
func checkProtectedPaths(e *eval) []Violation {
	if len(e.cfg.ProtectedPaths) == 0 || e.hasLabel(e.cfg.Labels.EvolveSystem) {
		return nil
	}
	var hits []string
	for _, f := range e.in.PullFiles {
		for _, p := range e.cfg.ProtectedPaths {
			if underPath(f, p) {
				hits = append(hits, f)
				break
			}
		}
	}
	if len(hits) == 0 {
		return nil
	}
	shown := hits
	if len(shown) > 10 {
		shown = append(shown[:10:10], fmt.Sprintf("and %d more", len(hits)-10))
	}
	for i := range shown {
		shown[i] = quoteShort(shown[i])
	}
	v := at(checkpoint.Pos{Line: 1, Col: 1}, "", "the pull request changes %d protected path(s) under %s without the %s label: %s",
		len(hits), strings.Join(e.cfg.ProtectedPaths, ", "), e.cfg.Labels.EvolveSystem, strings.Join(shown, ", "))
	v.Label = e.cfg.Labels.PermissionViolation
	return []Violation{v}
}

// underPath reports whether file is the protected path or lies below it.
func underPath(file, protected string) bool {
	file = strings.TrimPrefix(file, "./")
	protected = strings.TrimPrefix(protected, "./")
	dir := strings.TrimSuffix(protected, "/")
	return file == dir || strings.HasPrefix(file, dir+"/")
}
