package guard

import "github.com/gns-guard/gns-guard/internal/config"

// checkDepth allows depths 0..N; over it, label cascade::depth-exceeded and
// lock.
func checkDepth(e *decision) []Violation {
	if e.cp == nil || len(e.cascadeLimits()) > 1 {
		return nil
	}
	limit, ok := e.maxDepth()
	if !ok || limit == config.Unlimited {
		return nil
	}
	d := e.cp.Depth
	if d.Value <= int64(limit) {
		return nil
	}
	v := at(d.Pos, "checkpoint.depth", "depth %d is over the cascade limit of %d (depths 0..%d are allowed): no further sub-agent "+
		"may run; the issue is locked until a person resolves it",
		d.Value, limit, limit)
	v.Label = e.cfg.Labels.DepthExceeded
	v.Lock = true
	return []Violation{v}
}
