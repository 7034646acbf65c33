package faulttest

import (
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

func TestMain(m *testing.M) { giteatest.Main(m) }
