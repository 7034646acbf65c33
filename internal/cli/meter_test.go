package cli_test

import (
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/receipt"
)

// meter's flags and environment: the key it signs with is a secret of the
// environment, and --public-key prints the value to publish.
func TestMeterVerb(t *testing.T) {
	secret := strings.Repeat("k", 64)
	key, err := receipt.NewKey([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := gns(t, map[string]string{"GNS_GUARD_METER_KEY": secret}, "meter", "--public-key")
	if code != 0 || strings.TrimSpace(out) != key.Public() {
		t.Errorf("--public-key: exit %d %q %q", code, out, errOut)
	}
	for _, tt := range []struct {
		env  map[string]string
		args []string
		says string
	}{
		{nil, []string{"meter", "--public-key"}, "GNS_GUARD_METER_KEY"},
		{map[string]string{"GNS_GUARD_METER_KEY": "short"}, []string{"meter"}, "at least 32"},
		{map[string]string{"GNS_GUARD_METER_KEY": secret}, []string{"meter"}, "no server"},
		{map[string]string{"GNS_GUARD_METER_KEY": secret}, []string{"meter", "--drain", "0s"}, "--drain must be above 0"},
		{map[string]string{"GNS_GUARD_METER_KEY": secret}, []string{"meter", "--hangup-read", "-1m"}, "--hangup-read and --drain must be above 0"},
		{map[string]string{"GNS_GUARD_METER_KEY": secret}, []string{"meter", "extra"}, "meter takes no"},
		{map[string]string{"GNS_GUARD_METER_KEY": secret}, []string{"meter", "--server", "http://gitea.invalid", "--scope", "acme", "--metrics-token-env", "GNS_TEST_METRICS_TOKEN"}, "$GNS_TEST_METRICS_TOKEN is empty"},
	} {
		_, errOut, code := gns(t, tt.env, tt.args...)
		if code != 2 || !strings.Contains(errOut, tt.says) {
			t.Errorf("%v: exit %d %q; want 2 saying %q", tt.args, code, errOut, tt.says)
		}
	}
}
