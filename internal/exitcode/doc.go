// Package exitcode owns gns-guard's exit codes: the one table that turns the
// outcome of a run, in any mode, into the process's exit status. Commands
// and action mode return errors of the types below; only the command line's
// Main maps them to a code.
package exitcode
