package store

import "strings"

// conditions builds the WHERE clause of a list query from optional filters.
type conditions struct {
	where []string
	args  []any
}

// equal adds "col = v" when v is set.
func (c *conditions) equal(col, v string) {
	if v != "" {
		c.where, c.args = append(c.where, col+" = ?"), append(c.args, v)
	}
}

// oneOf adds "col IN (vs...)" when vs is not empty.
func oneOf[T ~string](c *conditions, col string, vs []T) {
	if len(vs) == 0 {
		return
	}
	c.where = append(c.where, col+" IN ("+placeholders(len(vs))+")")
	for _, v := range vs {
		c.args = append(c.args, string(v))
	}
}

// clause is " WHERE ..." or "" when no filter is set.
func (c *conditions) clause() string {
	if len(c.where) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(c.where, " AND ")
}
