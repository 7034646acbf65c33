// Package version says which build of gns-guard is running: the module
// version, the commit it was built from (and whether the work tree had
// changes), and the Go release, all read from the build information the Go
// toolchain embeds in the binary.
package version
