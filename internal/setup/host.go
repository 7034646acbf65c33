package setup

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"sync"
)

// Any job on a host runner may replace the installed binary, and the next
// guard run would execute it with the guard's secrets. So the host
// workflow pins the binary's SHA-256, and `init --runner host` pins the
// binary that runs it (docs/operations.md#the-runner).

// unpinned is the digest the host workflow ships with: no binary has it,
// so a workflow copied by hand runs nothing until its binary is pinned.
const unpinned = `GNS_GUARD_SHA256: "0000000000000000000000000000000000000000000000000000000000000000"`

// pinned pins digest; "" leaves the workflow as shipped.
func pinned(workflow []byte, digest string) []byte {
	if digest == "" {
		return workflow
	}
	return bytes.Replace(workflow, []byte(unpinned), []byte(`GNS_GUARD_SHA256: "`+digest+`"`), 1)
}

// selfDigest is the binary's hex SHA-256; "" when unreadable.
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
