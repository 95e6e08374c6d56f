package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// The payload formats of a webhook.
const (
	FormatGeneric = "generic"
	FormatSlack   = "slack"
	FormatTeams   = "teams"
)

// Webhook posts a JSON payload to a URL: the event itself (generic), a
// Slack-compatible {"text": ...}, or a Microsoft Teams message holding an
// Adaptive Card.
type Webhook struct {
	URL    string
	Format string
	Client *http.Client
}

// Name implements Channel: the format, "webhook" for the generic one.
func (w *Webhook) Name() string {
	if w.Format == "" || w.Format == FormatGeneric {
		return "webhook"
	}
	return w.Format
}

// Send implements Channel. A 2xx answer is a delivery; 408, 429 and 5xx
// are tried again; any other answer is permanent.
func (w *Webhook) Send(ctx context.Context, e Event) error {
	body, err := Payload(w.Format, e)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("webhook request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "hrsync")
	client := w.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		// The URL may carry a credential (Slack, Teams): only the error's
		// kind is kept, never the URL.
		return fmt.Errorf("post the webhook: %w", urlFree(err))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil
	case resp.StatusCode == http.StatusRequestTimeout, resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode >= 500:
		return fmt.Errorf("webhook answered %s", resp.Status)
	}
	return fmt.Errorf("webhook answered %s: %w", resp.Status, ErrPermanent)
}

// urlFree is err without the URL a *url.Error names.
func urlFree(err error) error {
	type unwrapper interface{ Unwrap() error }
	if u, ok := err.(unwrapper); ok && u.Unwrap() != nil {
		return u.Unwrap()
	}
	return err
}

// Payload is the JSON body of a webhook in the given format.
func Payload(format string, e Event) ([]byte, error) {
	var v any
	switch format {
	case "", FormatGeneric:
		v = struct {
			Event
			Title string `json:"title"`
			Text  string `json:"text"`
		}{e, Title(e), Text(e)}
	case FormatSlack:
		v = map[string]string{"text": Text(e)}
	case FormatTeams:
		v = teamsMessage(e)
	default:
		return nil, fmt.Errorf("unknown webhook format %q: %w", format, ErrPermanent)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode the webhook payload: %w", err)
	}
	return b, nil
}

// teamsMessage is a Teams message with one Adaptive Card (version 1.4): the
// title, what happened, the next step and the rest of the text.
func teamsMessage(e Event) map[string]any {
	block := func(text string, extra map[string]any) map[string]any {
		m := map[string]any{"type": "TextBlock", "text": text, "wrap": true}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	body := []any{
		block(Title(e), map[string]any{"size": "Medium", "weight": "Bolder"}),
		block("What happened: "+e.Cause, nil),
	}
	if e.Next != "" {
		body = append(body, block("Next step: "+e.Next, map[string]any{"weight": "Bolder"}))
	}
	body = append(body, block(Text(e), map[string]any{"fontType": "Monospace", "isSubtle": true}))
	return map[string]any{
		"type": "message",
		"attachments": []any{map[string]any{
			"contentType": "application/vnd.microsoft.card.adaptive",
			"content": map[string]any{
				"$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
				"type":    "AdaptiveCard",
				"version": "1.4",
				"body":    body,
			},
		}},
	}
}
