package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"hrsync/model"
)

// GrantDay is what the grants job recorded of one rule of a tenant: the
// first day a run considered it and the last day a run processed, both
// calendar dates (UTC midnight) of the rules' time zone.
type GrantDay struct {
	Rule      string    `json:"rule"`
	FirstDay  time.Time `json:"firstDay"`
	LastDay   time.Time `json:"lastDay"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// GrantDays returns the tenant's recorded grant days by rule name.
func (s *Store) GrantDays(ctx context.Context, tenant string) (map[string]GrantDay, error) {
	var rows []struct {
		Rule      string `db:"rule"`
		FirstDay  dbTime `db:"first_day"`
		LastDay   dbTime `db:"last_day"`
		UpdatedAt dbTime `db:"updated_at"`
	}
	if err := s.r.SelectContext(ctx, &rows, s.r.Rebind(`SELECT rule, first_day, last_day, updated_at
		FROM grant_days WHERE tenant = ?`), tenant); err != nil {
		return nil, fmt.Errorf("grant days: %w", err)
	}
	out := make(map[string]GrantDay, len(rows))
	for _, r := range rows {
		out[r.Rule] = GrantDay{Rule: r.Rule, FirstDay: r.FirstDay.date(), LastDay: r.LastDay.date(), UpdatedAt: r.UpdatedAt.Time}
	}
	return out, nil
}

// MarkGrantDays records that a run processed day for each of rules: a rule
// seen for the first time gets day as its first and last day; otherwise the
// first day moves back and the last day forward to day when it lies
// beyond them. One transaction.
func (s *Store) MarkGrantDays(ctx context.Context, tenant string, rules []string, day time.Time) error {
	d := day.Format(model.DateLayout)
	return s.inTx(ctx, "mark grant days", func(tx *sqlx.Tx) error {
		now := s.stamp()
		for _, rule := range rules {
			if _, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO grant_days (tenant, rule, first_day, last_day, updated_at)
				VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (tenant, rule) DO UPDATE SET
				first_day = CASE WHEN excluded.first_day < grant_days.first_day THEN excluded.first_day ELSE grant_days.first_day END,
				last_day = CASE WHEN excluded.last_day > grant_days.last_day THEN excluded.last_day ELSE grant_days.last_day END,
				updated_at = excluded.updated_at`), tenant, rule, d, d, now); err != nil {
				return fmt.Errorf("rule %s: %w", rule, err)
			}
		}
		return nil
	})
}

// RuleGrantsTotal sums the amounts of the tenant's grants of the given
// reasons that fall in [from, to) and that were not given up (pending,
// applied or held: not not_applied, not voided): what a budget counts as
// spent. A grant falls on its grant day (the calendar date from's and to's
// dates are compared with), else, recorded without one, when its intent
// was first committed.
func (s *Store) RuleGrantsTotal(ctx context.Context, tenant string, reasons []string, from, to time.Time) (float64, error) {
	if len(reasons) == 0 {
		return 0, nil
	}
	var c conditions
	c.equal("tenant", tenant)
	oneOf(&c, "reason", reasons)
	oneOf(&c, "state", []model.GrantState{model.GrantPending, model.GrantApplied, model.GrantUnknown})
	c.where = append(c.where, "(grant_day >= ? AND grant_day < ? OR grant_day IS NULL AND created_at >= ? AND created_at < ?)")
	c.args = append(c.args, from.Format(model.DateLayout), to.Format(model.DateLayout), ts(from), ts(to))
	var total float64
	if err := s.r.QueryRowxContext(ctx, s.r.Rebind("SELECT COALESCE(SUM(amount), 0) FROM grants"+c.clause()), c.args...).Scan(&total); err != nil {
		return 0, fmt.Errorf("rule grants total: %w", err)
	}
	return total, nil
}

// MonthDay is a month and day of birth, never the year (DESIGN.md,
// invariant 5): all a birthday rule needs.
type MonthDay struct {
	Month time.Month
	Day   int
}

// Birthdays returns the month and day of birth the grants job keeps for
// the tenant's people, by externalId.
func (s *Store) Birthdays(ctx context.Context, tenant string) (map[string]MonthDay, error) {
	var rows []struct {
		ID    string `db:"external_id"`
		Month int    `db:"month"`
		Day   int    `db:"day"`
	}
	if err := s.r.SelectContext(ctx, &rows, s.r.Rebind(`SELECT external_id, month, day FROM grant_birthdays
		WHERE tenant = ?`), tenant); err != nil {
		return nil, fmt.Errorf("birthdays: %w", err)
	}
	out := make(map[string]MonthDay, len(rows))
	for _, r := range rows {
		out[r.ID] = MonthDay{Month: time.Month(r.Month), Day: r.Day}
	}
	return out, nil
}

// SaveBirthdays writes the month and day of birth of the given people of
// the tenant (each must be in people), replacing what was kept. One
// transaction.
func (s *Store) SaveBirthdays(ctx context.Context, tenant string, days map[string]MonthDay) error {
	if len(days) == 0 {
		return nil
	}
	return s.inTx(ctx, "save birthdays", func(tx *sqlx.Tx) error {
		st, err := tx.PreparexContext(ctx, tx.Rebind(`INSERT INTO grant_birthdays (tenant, external_id, month, day)
			VALUES (?, ?, ?, ?) ON CONFLICT (tenant, external_id) DO UPDATE SET month = excluded.month, day = excluded.day`))
		if err != nil {
			return fmt.Errorf("save birthdays: %w", err)
		}
		defer func() { _ = st.Close() }()
		for id, md := range days {
			if _, err := st.ExecContext(ctx, tenant, id, int(md.Month), md.Day); err != nil {
				return fmt.Errorf("save birthday of %s: %w", id, err)
			}
		}
		return nil
	})
}

// ForgetBirthdays removes the month and day of birth kept for the given
// people of the tenant: an export that lists them without a birth date
// takes their birthday away. People with nothing kept are ignored.
func (s *Store) ForgetBirthdays(ctx context.Context, tenant string, externalIDs []string) error {
	return s.KeepBirthdays(ctx, tenant, nil, externalIDs)
}

// KeepBirthdays is what the people sync records of an export it processed,
// for a tenant with a birthday rule: the month and day of birth of days,
// and no birthday for forget (people it listed without a birth date). A
// person not in people yet (their creation was not committed) is skipped,
// not an error. One transaction.
func (s *Store) KeepBirthdays(ctx context.Context, tenant string, days map[string]MonthDay, forget []string) error {
	if len(days) == 0 && len(forget) == 0 {
		return nil
	}
	return s.inTx(ctx, "keep birthdays", func(tx *sqlx.Tx) error {
		if len(days) > 0 {
			st, err := tx.PreparexContext(ctx, tx.Rebind(`INSERT INTO grant_birthdays (tenant, external_id, month, day)
				SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM people WHERE tenant = ? AND external_id = ?)
				ON CONFLICT (tenant, external_id) DO UPDATE SET month = excluded.month, day = excluded.day`))
			if err != nil {
				return fmt.Errorf("prepare: %w", err)
			}
			defer func() { _ = st.Close() }()
			for id, md := range days {
				if _, err := st.ExecContext(ctx, tenant, id, int(md.Month), md.Day, tenant, id); err != nil {
					return fmt.Errorf("birthday of %s: %w", id, err)
				}
			}
		}
		err := s.db.ForKeys(forget, func(cond string, args []any) error {
			_, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM grant_birthdays WHERE tenant = ? AND external_id `+cond),
				append([]any{tenant}, args...)...)
			return err
		})
		if err != nil {
			return fmt.Errorf("forget: %w", err)
		}
		return nil
	})
}

// VoidOccurrences records grants that must never be sent, without a call:
// each becomes a voided grant of job with note, unless its key is in the
// ledger already (then it is left as it is). The grants job records so an
// occurrence whose person had left on its day, so that a later run, after
// the person came back, never grants it. It returns how many it recorded.
// One transaction.
func (s *Store) VoidOccurrences(ctx context.Context, job model.Job, grants []model.Grant, note string) (n int, err error) {
	if len(grants) == 0 {
		return 0, nil
	}
	err = s.inTx(ctx, "void occurrences", func(tx *sqlx.Tx) error {
		st, err := tx.PreparexContext(ctx, tx.Rebind(`INSERT INTO grants (grant_key, tenant, external_id, reason, occurrence,
			amount, state, attempts, last_error, note, created_at, updated_at, job)
			VALUES (?, ?, ?, ?, ?, ?, ?, 0, '', ?, ?, ?, ?) ON CONFLICT (grant_key) DO NOTHING`))
		if err != nil {
			return fmt.Errorf("void occurrences: %w", err)
		}
		defer func() { _ = st.Close() }()
		now := s.stamp()
		for _, g := range grants {
			key := model.GrantKey(g.Tenant, g.ExternalID, g.Reason, g.Occurrence)
			res, err := st.ExecContext(ctx, key, g.Tenant, g.ExternalID, g.Reason, g.Occurrence, g.Amount,
				model.GrantVoided, note, now, now, string(job))
			if err != nil {
				return fmt.Errorf("void %s: %w", key, err)
			}
			if k, err := res.RowsAffected(); err == nil {
				n += int(k)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// GrantStates returns the state of each of keys that the ledger holds;
// keys it does not hold are absent from the map.
func (s *Store) GrantStates(ctx context.Context, keys []string) (map[string]model.GrantState, error) {
	out := make(map[string]model.GrantState, len(keys))
	err := s.db.ForKeys(keys, func(cond string, args []any) error {
		rows, err := s.r.QueryContext(ctx, s.r.Rebind("SELECT grant_key, state FROM grants WHERE grant_key "+cond), args...)
		if err != nil {
			return err
		}
		defer func() { _ = rows.Close() }()
		for rows.Next() {
			var (
				key string
				st  model.GrantState
			)
			if err := rows.Scan(&key, &st); err != nil {
				return err
			}
			out[key] = st
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("grant states: %w", err)
	}
	return out, nil
}
