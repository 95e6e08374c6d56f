package grants

import (
	"context"
	"fmt"

	"hrsync/model"
	"hrsync/store"
)

// InScope refuses a decision about grant key when it is not of job and
// rule (either empty means any). A grant's job and rule never change.
func InScope(ctx context.Context, st *store.Store, key string, job model.Job, rule string) error {
	if job == "" && rule == "" {
		return nil
	}
	g, err := st.Grant(ctx, key)
	if err != nil {
		return err
	}
	if job != "" && g.Job != string(job) || rule != "" && g.Reason != rule {
		return fmt.Errorf("grant %s is of job %s, rule %s: outside --job %s --rule %s; nothing decided for it",
			key, g.Job, g.Reason, orAny(string(job)), orAny(rule))
	}
	return nil
}

// orAny renders an empty filter as "any".
func orAny(s string) string {
	if s == "" {
		return "any"
	}
	return s
}
