package live

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/settings"
)

// ConfigFile comes from the default branch: only code writers change it.
const ConfigFile = settings.FileName

// ConfigOptions say where a run's configuration comes from.
type ConfigOptions struct {
	// Commit is GITHUB_SHA, "" when unknown; the ledger's stamp at that
	// commit stands in for the file.
	Commit string
	// Local replaces the repository's file (--config FILE).
	Local *settings.Layer
	// Top are inputs or a verb's flags, over the file.
	Top []settings.Layer
}

// Config resolves a run's configuration: the defaults, the repository's
// file, and the layers on top. The file is not read when the trusted ledger
// in s (may be nil) recorded it at the same commit. The stamp is for the
// ledger this run leaves. A bad value is a configuration error (exit 2)
// naming file, key and line.
func (r *Reader) Config(ctx context.Context, s *Snapshot, o ConfigOptions) (settings.Resolved, *ledger.ConfigStamp, error) {
	file, stamp, err := r.configFile(ctx, s, o)
	if err != nil {
		return settings.Resolved{}, nil, err
	}
	res, err := settings.Resolve(append([]settings.Layer{file}, o.Top...)...)
	if err != nil {
		return res, nil, &exitcode.UsageError{Err: err}
	}
	return res, stamp, nil
}

// configFile is the file's layer and its stamp.
func (r *Reader) configFile(ctx context.Context, s *Snapshot, o ConfigOptions) (settings.Layer, *ledger.ConfigStamp, error) {
	if o.Local != nil {
		return *o.Local, nil, nil
	}
	if st := r.stamped(s, o.Commit); st != nil {
		return stampLayer(st), st, nil
	}
	stamp := &ledger.ConfigStamp{Commit: o.Commit}
	data, err := r.Forge.File(ctx, ConfigFile, settings.MaxFileBytes)
	switch {
	case errors.Is(err, issues.ErrNotFound):
		return settings.Layer{Source: ConfigFile}, stamp, nil
	case errors.Is(err, issues.ErrTooLarge):
		return settings.Layer{}, nil, &exitcode.UsageError{Err: fmt.Errorf("%s: the file is over %d KiB: a configuration file is a few "+
			"lines", ConfigFile, settings.MaxFileBytes>>10)}
	case err != nil:
		return settings.Layer{}, nil, r.Where.Error("read "+ConfigFile+" of the default branch", err)
	}
	layer, err := settings.FileLayer(ConfigFile, data)
	if err != nil {
		return layer, nil, &exitcode.UsageError{Err: err}
	}
	stamp.Found = true
	stamp.Values = map[string]string{}
	for name, v := range layer.Values {
		text := v.Text
		if v.IsList {
			text = strings.Join(v.List, "\n")
		}
		stamp.Values[name] = text
	}
	return layer, stamp, nil
}

// stamped is the trusted stamp read at commit, else nil.
func (r *Reader) stamped(s *Snapshot, commit string) *ledger.ConfigStamp {
	l := r.record(s, commit)
	if l == nil || l.Config == nil || l.Config.Commit != commit {
		return nil
	}
	st := *l.Config
	st.Values = maps.Clone(st.Values)
	return &st
}

// PostureStamped is the trusted posture judged at commit, else nil; then no
// posture read (docs/ledger.md#the-posture).
func (r *Reader) PostureStamped(s *Snapshot, commit string) *ledger.PostureStamp {
	l := r.record(s, commit)
	if l == nil || l.Posture == nil || l.Posture.Commit != commit {
		return nil
	}
	st := *l.Posture
	st.Broken = slices.Clone(st.Broken)
	return &st
}

// record is the trusted ledger, when a known-commit run may take a stamp;
// else nil.
func (r *Reader) record(s *Snapshot, commit string) *ledger.Record {
	if s == nil || s.Status == nil || commit == "" {
		return nil
	}
	l, _ := s.RecordOf(s.Status, r.Keys)
	return l
}

// stampLayer is the file's layer as a ledger recorded it.
func stampLayer(st *ledger.ConfigStamp) settings.Layer {
	l := settings.Layer{Source: ConfigFile, Values: map[string]settings.Value{}}
	for name, text := range st.Values {
		l.Values[name] = settings.Value{Text: text}
	}
	return l
}
