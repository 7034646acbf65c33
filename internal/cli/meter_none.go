//go:build nometer

package cli

import (
	"context"

	"github.com/gns-guard/gns-guard/internal/receipt"
)

// meterBuilt says the meter is in this build: not in the guard's step
// image, which leaves it out to stay small.
const meterBuilt = false

// serveMeter is never reached in a build without the meter.
func serveMeter(context.Context, *meterOptions, Env, string, receipt.Key, string) error {
	return usageError("%s", noMeter)
}
