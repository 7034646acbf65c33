package setup

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"sync"
)

// A host-mode runner runs the gns-guard binary installed on its host, and
// any job on that runner may be able to write where it lies: a job that
// replaced it would have the next guard run execute its code with the
// guard's secrets. The host workflow therefore pins the binary's SHA-256
// (GNS_GUARD_SHA256) and its step runs a checked copy only
// (docs/operations.md#the-runner). `init --runner host` pins the binary
// that runs it: the one the person is about to install.

// unpinned is the digest the host workflow ships with: no binary has it,
// so a workflow copied by hand runs nothing until its binary is pinned.
const unpinned = `GNS_GUARD_SHA256: "0000000000000000000000000000000000000000000000000000000000000000"`

// pinned is the host workflow with digest pinned ("" leaves it as shipped).
func pinned(workflow []byte, digest string) []byte {
	if digest == "" {
		return workflow
	}
	return bytes.Replace(workflow, []byte(unpinned), []byte(`GNS_GUARD_SHA256: "`+digest+`"`), 1)
}

// selfDigest is the SHA-256 of the running binary in hexadecimal, "" when
// it cannot be read.
var selfDigest = sync.OnceValue(func() string {
	path, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
})

// pinNote says which binary the host workflow pins.
func pinNote() string {
	if d := selfDigest(); d != "" {
		return "The workflow runs only the binary whose SHA-256 is " + d + ", this gns-guard's: install this same binary, " +
			"or pin the digest of the one you install (GNS_GUARD_SHA256 in the workflow; sha256sum prints it)."
	}
	return "The workflow runs only the binary whose SHA-256 it pins: " +
		"set GNS_GUARD_SHA256 in it to the digest of the binary you install (sha256sum prints it)."
}
