package guard

// checkPermissionViolation keeps failing an issue while
// permission::violation is on: only an approver removes it, and that
// removal is the approval to go on.
func checkPermissionViolation(e *decision) []Violation {
	pv := e.cfg.Labels.PermissionViolation
	if !e.hasLabel(pv) {
		return nil
	}
	v := at(e.blockPos(), "", "the %s label is set: the workflow waits for an approver (%s) to remove it", pv, e.cfg.Approvers())
	v.Label = pv
	return []Violation{v}
}
