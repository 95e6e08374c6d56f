// Package registry is the one registry of source kinds: the drop folders
// (local, sftp, s3), the SQL query, and any kind added later. A kind is one
// package that calls Register from its init function; a program imports the
// kinds it offers (blank imports in main) and hands Kinds to the config
// package, which decodes each tenant's source section through it.
//
// Like database/sql's drivers, the registry is written only by init
// functions and read afterwards: it is the one piece of package-level state
// here, and it never changes once main starts.
//
// A source section is written under one key of a tenant's source: ("csv",
// "sql"). A key may hold several kinds told apart by its type: key (the
// drop folders under csv: local, sftp, s3), one of them the default.
package registry

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Kind registers one kind of source.
type Kind struct {
	// Section is the key of a tenant's source the kind is written under
	// ("csv", "sql").
	Section string
	// Type names the kind within its section, as its type: key says
	// ("local", "sftp", "s3"); "" for the one kind of its section.
	Type string
	// Default makes the kind the one of its section when type: is not set.
	Default bool
	// Noun names what the section configures in errors ("drop folder").
	Noun string
	// Key is the key of the kind's own block in its section ("dir",
	// "sftp", "s3"); "" when it has none. Set under another type, it is
	// reported with Misplaced's reason.
	Key string
	// Misplaced says why Key is wrong when the section's type is typ.
	Misplaced func(typ string) string
	// New returns the kind's empty options, for config to decode the
	// section into.
	New func() Options
}

// kinds holds the registered kinds by section, then type. Written only by
// Register, from init functions (as database/sql's drivers are).
var kinds = struct { //nolint:gochecknoglobals // kinds register themselves from init, as database/sql drivers do; read-only afterwards
	sync.RWMutex
	bySection map[string]map[string]Kind
}{bySection: map[string]map[string]Kind{}}

// Register makes a kind available. A kind's package calls it from its init
// function. Registering a section and type twice, a kind without New, or a
// second default of a section panics.
func Register(k Kind) {
	kinds.Lock()
	defer kinds.Unlock()
	types := kinds.bySection[k.Section]
	if types == nil {
		types = map[string]Kind{}
		kinds.bySection[k.Section] = types
	}
	if _, dup := types[k.Type]; dup || k.New == nil || k.Section == "" {
		panic(fmt.Sprintf("sources/registry: kind %s/%s registered twice, without New or without a section", k.Section, k.Type))
	}
	for _, other := range types {
		if k.Default && other.Default {
			panic("sources/registry: two default kinds in section " + k.Section)
		}
	}
	types[k.Type] = k
}

// section returns the kinds of a section.
func section(name string) (map[string]Kind, bool) {
	kinds.RLock()
	defer kinds.RUnlock()
	types, ok := kinds.bySection[name]
	return types, ok
}

// Sections lists the keys a tenant's source may hold, sorted.
func Sections() []string {
	kinds.RLock()
	defer kinds.RUnlock()
	out := make([]string, 0, len(kinds.bySection))
	for s := range kinds.bySection {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Types lists the types of a section's kinds, sorted.
func Types(sectionName string) []string {
	types, _ := section(sectionName)
	out := make([]string, 0, len(types))
	for t := range types {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Open opens the source opts configures (opts is a tenant's
// config.Source.Options, decoded by a registered kind).
func Open(ctx context.Context, opts any, env Env) (Source, error) {
	o, err := Of(opts)
	if err != nil {
		return nil, err
	}
	return o.Open(ctx, env)
}

// Of returns opts as the options of a registered kind.
func Of(opts any) (Options, error) {
	o, ok := opts.(Options)
	if !ok || o == nil {
		return nil, fmt.Errorf("no source of a registered kind is configured (have %s)", strings.Join(Sections(), ", "))
	}
	return o, nil
}

// joinOr lists names as "a, b or c".
func joinOr(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
