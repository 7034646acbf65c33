package containertest_test

import (
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit/containertest"
)

func TestMain(m *testing.M) { containertest.Main(m) }
