package guard

// checkPermissionViolation fails while permission::violation is on; an
// approver's removal approves.
func checkPermissionViolation(e *decision) []Violation {
	pv := e.cfg.Labels.PermissionViolation
	if !e.hasLabel(pv) {
		return nil
	}
	v := at(e.blockPos(), "", "the %s label is set: the workflow waits for an approver (%s) to remove it", pv, e.cfg.Approvers())
	v.Label = pv
	return []Violation{v}
}
