// Package cli is the gns-guard command line: every verb, and the
// dispatch to action mode inside Gitea Actions.
//
// A verb parses its flags, calls the package that does the work, and
// prints. Main alone turns an outcome into an exit code. The world comes
// in through Env; the binary wires action mode and the meter.
package cli
