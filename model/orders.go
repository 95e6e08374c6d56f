package model

import "strings"

// OrderStatusShipped is the order status after which, once every line item
// is settled, an order no longer changes.
const OrderStatusShipped = "Shipped"

// LineItemCanceled is the line item status the platform shows for a
// canceled line.
const LineItemCanceled = "canceled"

// LineItemSettled tells whether a line item status is final: shipped,
// delivered or canceled (compared without case). Any other value, the empty
// one included, is an open line.
func LineItemSettled(status string) bool {
	switch strings.ToLower(strings.TrimSpace(status)) {
	case "shipped", "delivered", LineItemCanceled:
		return true
	}
	return false
}

// OrderFinal tells whether an order with this status and these line item
// statuses is final: Shipped, with no line item still open.
func OrderFinal(status string, lineStatuses []string) bool {
	if status != OrderStatusShipped {
		return false
	}
	for _, s := range lineStatuses {
		if !LineItemSettled(s) {
			return false
		}
	}
	return true
}
