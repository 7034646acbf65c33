package guard

import (
	"strings"
)

// checkCascadeLabels requires one cascade::depth-N label, or
// default-max-depth.
func checkCascadeLabels(e *decision) []Violation {
	if e.in.LabelsUnknown {
		return nil
	}
	limits := e.cascadeLimits()
	switch {
	case len(limits) > 1:
		names := make([]string, len(limits))
		for i, l := range limits {
			names[i] = l.name
		}
		return []Violation{at(e.blockPos(), "", "%d cascade labels are set (%s); keep exactly one", len(limits), strings.Join(names, ", "))}
	case len(limits) == 0 && e.cfg.DefaultMaxDepth == nil:
		v := at(e.blockPos(), "", "no %sN label is set and the default-max-depth input is empty: add a label such as %s0 (leaf agents "+
			"only) or %sn (unlimited)",
			e.cfg.Labels.CascadePrefix, e.cfg.Labels.CascadePrefix, e.cfg.Labels.CascadePrefix)
		v.Rule = RuleCascadeMissing
		return []Violation{v}
	}
	return nil
}
