package metrics

import "github.com/prometheus/client_golang/prometheus"

// notificationCounters count the notifications delivered and given up.
type notificationCounters struct {
	sent, failed *prometheus.CounterVec
}

func newNotificationCounters(reg *prometheus.Registry) notificationCounters {
	labels := []string{"tenant", "channel"}
	c := notificationCounters{
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "notifications_sent_total",
			Help: "Notifications delivered, by tenant and channel (webhook, slack, teams, email)."}, labels),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "notifications_failed_total",
			Help: "Notifications given up after their tries, by tenant and channel; the run's outcome stands."}, labels),
	}
	reg.MustRegister(c.sent, c.failed)
	return c
}

// Notified counts one notification of a tenant on a channel, delivered or
// given up (notify.Counter).
func (m *Metrics) Notified(tenant, channel string, sent bool) {
	if sent {
		m.notifications.sent.WithLabelValues(tenant, channel).Inc()
		return
	}
	m.notifications.failed.WithLabelValues(tenant, channel).Inc()
}

// NotificationChannel creates the sent and failed series of a tenant's
// channel at zero, so that they exist from the first scrape.
func (m *Metrics) NotificationChannel(tenant, channel string) {
	m.notifications.sent.WithLabelValues(tenant, channel)
	m.notifications.failed.WithLabelValues(tenant, channel)
}
