package meterstore

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/metering"
)

var gateIssue = Issue{Repo: "acme/gate", Number: 5}

// opening is an invocation the gate opens on gateIssue.
func opening(inv, parent string, depth, estimate int64) Opened {
	return Opened{Invocation: inv, Parent: parent, Agent: "dev", Login: "dev-bot", Depth: depth, Estimate: estimate,
		Opened: time.Date(2026, 12, 7, 21, 0, 0, 123456789, time.FixedZone("CET", 3600))}
}

// admitAny opens whatever it is asked.
func admitAny(metering.Pending, []Opened) *metering.Refusal { return nil }

// The gate's invocations: decide sees the issue's pending spend and the
// tree so far; a refusal writes nothing; an id opened again comes back as
// stored; the tree carries what the meter charged each.
func testOpenInvocations(t *testing.T, s *Store) {
	ctx := context.Background()
	root, ref, err := s.OpenInvocation(ctx, gateIssue, opening("gate-000000000001", "", 0, 4000), admitAny)
	if err != nil || ref != nil {
		t.Fatalf("the root: %v %v", ref, err)
	}
	if want := time.Date(2026, 12, 7, 20, 0, 0, 123000000, time.UTC); !root.Opened.Equal(want) || root.Opened.Location() != time.UTC {
		t.Errorf("opened %v, want the time as stored, %v", root.Opened, want)
	}
	c := call("gate-000000000001", 500)
	c.Issue = gateIssue
	id, _ := admit(t, s, c, 1<<40)
	var seen metering.Pending
	var tree []Opened
	refuse := func(p metering.Pending, tr []Opened) *metering.Refusal {
		seen, tree = p, tr
		return &metering.Refusal{Rule: "gate-over-budget"}
	}
	if _, ref, err := s.OpenInvocation(ctx, gateIssue, opening("gate-000000000002", root.Invocation, 1, 900), refuse); err != nil || ref == nil || ref.Rule != "gate-over-budget" {
		t.Fatalf("a refused opening: %v %v", ref, err)
	}
	if seen.Tokens != 500 || len(tree) != 1 || tree[0] != root {
		t.Errorf("decide saw pending %+v and tree %+v; want the call in flight at 500 and the root", seen, tree)
	}
	if _, ok, err := s.OpenedInvocation(ctx, gateIssue, "gate-000000000002"); ok || err != nil {
		t.Errorf("a refused opening was stored: %v %v", ok, err)
	}
	child, ref, err := s.OpenInvocation(ctx, gateIssue, opening("gate-000000000002", root.Invocation, 1, 900), admitAny)
	if err != nil || ref != nil || child.Parent != root.Invocation {
		t.Fatalf("the child: %+v %v %v", child, ref, err)
	}
	again, ref, err := s.OpenInvocation(ctx, gateIssue, opening("gate-000000000001", "other", 3, 1), refuse)
	if err != nil || ref != nil || again != root {
		t.Errorf("the root opened again: %+v %v %v; want it as stored, %+v", again, ref, err, root)
	}
	if got, ok, err := s.OpenedInvocation(ctx, gateIssue, child.Invocation); !ok || err != nil || got != child {
		t.Errorf("the child as stored: %+v %v %v", got, ok, err)
	}
	if _, ok, _ := s.OpenedInvocation(ctx, Issue{Repo: gateIssue.Repo, Number: 6}, child.Invocation); ok {
		t.Error("an invocation of issue 5 is opened on issue 6")
	}
	settle(t, s, id, 120)
	c.Invocation = child.Invocation
	admit(t, s, c, 1<<40)
	branches, err := s.Tree(ctx, gateIssue)
	if err != nil || len(branches) != 2 {
		t.Fatalf("the tree: %+v %v", branches, err)
	}
	want := []Branch{{Opened: root, Tokens: 120, Calls: 1, Cost: 360}, {Opened: child, Tokens: 500, Calls: 1, InFlight: 1, Cost: 5000}}
	for i := range want {
		if branches[i] != want[i] {
			t.Errorf("branch %d: %+v, want %+v", i, branches[i], want[i])
		}
	}
}

// Openings at once, from two meters on one store, whose decide refuses
// past a bound on the tree's estimates: never more than the bound
// passes, and an id opened by several callers at once is opened once.
func testConcurrentOpenings(t *testing.T, a, b *Store) {
	const bound, estimate = 1000, 100
	iss := Issue{Repo: "acme/gate", Number: 9}
	var wg sync.WaitGroup
	var opened atomic.Int64
	within := func(_ metering.Pending, tree []Opened) *metering.Refusal {
		sum := int64(estimate)
		for _, o := range tree {
			sum += o.Estimate
		}
		if sum > bound {
			return &metering.Refusal{Rule: "gate-over-budget"}
		}
		return nil
	}
	for i := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := []*Store{a, b}[i%2]
			_, ref, err := s.OpenInvocation(context.Background(), iss, opening(fmt.Sprintf("gate-%012d", i), "", 0, estimate), within)
			if err != nil {
				t.Error(err)
			} else if ref == nil {
				opened.Add(1)
			}
		}()
	}
	wg.Wait()
	if got := opened.Load(); got != bound/estimate {
		t.Errorf("%d of 24 openings passed a bound of %d", got, bound/estimate)
	}
	same := Issue{Repo: "acme/gate", Number: 10}
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := opening("gate-0000000000aa", "", 0, int64(i+1))
			if _, _, err := []*Store{a, b}[i%2].OpenInvocation(context.Background(), same, o, admitAny); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if tree, err := a.Tree(context.Background(), same); err != nil || len(tree) != 1 {
		t.Errorf("one id opened by 8 callers at once: %+v %v", tree, err)
	}
}
