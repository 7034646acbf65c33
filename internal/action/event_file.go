package action

import (
	"io"
	"os"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/jsoncap"
)

// maxEventBytes bounds an event payload read streamed.
const maxEventBytes = 1 << 30

// eventPayload reads the event payload at path, or streams it with every
// text over issues.MaxCommentBytes left out when it is too long. A huge
// comment makes such a payload; the payload only triggers the run, and the
// issue is read live, bounded, and judged (content-too-large).
func (r *runner) eventPayload(path string) ([]byte, error) {
	data, err := r.o.ReadFile(path)
	if err == nil {
		return data, nil
	}
	f, oerr := os.Open(path)
	if oerr != nil {
		return nil, err
	}
	defer f.Close()
	res, cerr := jsoncap.Copy(io.LimitReader(f, maxEventBytes), issues.MaxCommentBytes, nil)
	if cerr != nil {
		return nil, err
	}
	return res.JSON, nil
}
