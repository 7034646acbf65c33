// Command trygitea serves examples/try/run.sh: it starts a throwaway Gitea
// 1.26 and a Gitea runner in host mode (internal/testkit/giteatest, built
// from the Go module proxy as the tests build them), and does the few
// chores of a person in Gitea's web interface that the script's story
// needs (an organisation, a repository, an account, a secret, a merge, an
// issue opened from a template), so that the script itself reads as a
// new user's first day with gns-guard.
//
//	trygitea serve DIR            start Gitea and the runner; write DIR/env; stop both on SIGINT or SIGTERM
//	trygitea org NAME             create an organisation
//	trygitea repo ORG NAME        create ORG/NAME with a README on main
//	trygitea user LOGIN TOKEN     create an account; print a token of it with the scopes of a token of the table (internal/scopes: agent, guard, admin, init)
//	trygitea user LOGIN SCOPE...  the same with the scopes given
//	trygitea secret REPO NAME     set an Actions secret of REPO to standard input
//	trygitea merge REPO N         merge pull request N
//	trygitea append REPO PATH LINE  add LINE to PATH on main
//	trygitea open REPO TITLE TASK open an issue from the "GNS task" template with TASK written in; print its number
//	trygitea wait REPO            wait until every workflow run of REPO is done; print them
//	trygitea status REPO N        print the guard's status comment on issue N
//
// Every command but serve talks to $TRY_SERVER with the administrator's
// $TRY_TOKEN, which serve writes to DIR/env.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: trygitea serve DIR | org | repo | user | secret | merge | append | open | wait | status")
		os.Exit(2)
	}
	cmd, args := os.Args[1], os.Args[2:]
	var err error
	if cmd == "serve" {
		err = serve(args)
	} else {
		err = chore(cmd, args)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "trygitea %s: %v\n", cmd, err)
		os.Exit(1)
	}
}

// buildBudget bounds building Gitea and the runner (minutes on a cold
// cache) and starting them.
const buildBudget = 25 * time.Minute

// serve starts Gitea and a host-mode runner, writes DIR/env for the other
// commands and the script, and stops both when a signal comes. The runner
// and the jobs it runs inherit this process's PATH: gns-guard found there
// is the binary the host workflow runs.
func serve(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("want DIR")
	}
	dir := args[0]
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	build, cancel := context.WithTimeout(ctx, buildBudget)
	defer cancel()
	s, err := giteatest.Start(build)
	if err != nil {
		return err
	}
	defer s.Stop()
	r, err := s.StartRunner(build)
	if err != nil {
		return err
	}
	defer r.Stop()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	env := fmt.Sprintf("TRY_SERVER=%s\nTRY_ADMIN=%s\nTRY_TOKEN=%s\nTRY_GITEA_WORK=%s\n", s.URL, s.AdminLogin, s.AdminToken, filepath.Dir(r.WorkDir))
	if err := os.WriteFile(filepath.Join(dir, "env.part"), []byte(env), 0o600); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(dir, "env.part"), filepath.Join(dir, "env")); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "trygitea: Gitea %s at %s, runner %s (host mode)\n", "1.26.0", s.URL, r.Name)
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "trygitea: stopping the runner and Gitea")
	return nil
}

// chore runs one of the commands that talk to the server.
func chore(cmd string, args []string) error {
	c := client{server: strings.TrimRight(os.Getenv("TRY_SERVER"), "/"), token: os.Getenv("TRY_TOKEN")}
	if c.server == "" || c.token == "" {
		return fmt.Errorf("TRY_SERVER and TRY_TOKEN are not set (trygitea serve writes them to DIR/env)")
	}
	want := map[string]int{"org": 1, "repo": 2, "user": -2, "secret": 2, "merge": 2, "append": 3, "open": 3, "wait": 1, "status": 2}
	n, ok := want[cmd]
	switch {
	case !ok:
		return fmt.Errorf("no such command")
	case n > 0 && len(args) != n, n < 0 && len(args) < -n:
		return fmt.Errorf("wrong number of arguments: %q", args)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return c.run(ctx, cmd, args)
}
