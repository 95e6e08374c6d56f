package people

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"

	"hrsync/config"
	"hrsync/model"
	"hrsync/sources"
)

// ValidateRejectionLimit is how many rejected rows of an export validate
// prints as text without --all (each row with all its problems).
const ValidateRejectionLimit = 50

// Validation is what `hrsync validate -o json` prints: each export read with its tenant's mapping.
type Validation struct {
	Exports []ValidatedExport `json:"exports"`
	// Rejected counts the rows rejected in all exports.
	Rejected int `json:"rejected"`
}

// ValidatedExport is one export validate read.
type ValidatedExport struct {
	Tenant string        `json:"tenant"`
	Source string        `json:"source"`
	Stats  sources.Stats `json:"stats"`
	// Rejections lists every rejection, in line order.
	Rejections []model.Rejection `json:"rejections"`
}

// Validate reads, with each tenant's mapping, the exports its feed lists,
// and collects their rejections; with firstOnly, only the first tenant's.
// On an error it returns the exports read until then with it.
func Validate(ctx context.Context, tenants []config.Tenant, feed func(t config.Tenant) (Feed, error), firstOnly bool) (*Validation, error) {
	res := &Validation{Exports: []ValidatedExport{}}
	for _, t := range tenants {
		list, err := feed(t)
		if err != nil {
			return res, err
		}
		exports, err := list(ctx)
		if err != nil {
			return res, err
		}
		for _, e := range exports {
			ve, err := ValidateExport(ctx, t.Name, e)
			if err != nil {
				return res, err
			}
			res.Exports = append(res.Exports, ve)
			res.Rejected += ve.Stats.Rejected
		}
		if firstOnly {
			break
		}
	}
	return res, nil
}

// ValidateExport reads one export and collects its rejections.
func ValidateExport(ctx context.Context, tenant string, e Export) (ValidatedExport, error) {
	rej := []model.Rejection{}
	st, err := e.Read(ctx, sources.Handler{
		Accept: func(model.Person) error { return nil },
		Reject: func(r model.Rejection) error { rej = append(rej, r); return nil },
	})
	if err != nil {
		return ValidatedExport{}, fmt.Errorf("%s: %w", e.Name(), err)
	}
	// The first row of a duplicated key is rejected after the last row:
	// the report goes in line order.
	slices.SortStableFunc(rej, func(a, b model.Rejection) int { return cmp.Compare(a.Line, b.Line) })
	return ValidatedExport{Tenant: tenant, Source: e.Name(), Stats: st, Rejections: rej}, nil
}

// PrintValidation prints each export's counts and its rejected rows, one
// line each with its problems: the first ValidateRejectionLimit of each
// export, or every one when all is set.
func PrintValidation(w io.Writer, res *Validation, all bool) {
	if len(res.Exports) == 0 {
		fmt.Fprintln(w, "no export is ready")
		return
	}
	for _, e := range res.Exports {
		fmt.Fprintf(w, "%s (tenant %s): %d rows, %d accepted, %d rejected\n", e.Source, e.Tenant, e.Stats.Rows, e.Stats.Accepted, e.Stats.Rejected)
		rows := model.RejectedRows(e.Rejections)
		shown := len(rows)
		if !all {
			shown = min(shown, ValidateRejectionLimit)
		}
		for _, row := range rows[:shown] {
			fmt.Fprintf(w, "  %s\n", model.RowProblems(row))
		}
		if more := len(rows) - shown; more > 0 {
			fmt.Fprintf(w, "  and %d more rejected rows (--all lists every one)\n", more)
		}
	}
}
