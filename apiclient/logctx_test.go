package apiclient_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"hrsync/apiclient"
)

func TestLogFieldsFromContext(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":"no such order"}}`))
	}))
	defer srv.Close()
	core, logs := observer.New(zapcore.DebugLevel)
	c, err := apiclient.New(apiclient.Config{BaseURL: srv.URL, Token: "secret-token", Logger: zap.New(core), Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := apiclient.WithLogFields(t.Context(), zap.String("run", "run-1"))
	_, _ = c.GetOrderStatus(ctx, "7f0c5d52-3a35-4c5b-9d8e-0d6f0c1a2b3c", "2b6e4f0a-1c2d-4e5f-8a9b-0c1d2e3f4a5b", "acme")
	lines := logs.FilterMessage("api call").All()
	if len(lines) == 0 {
		t.Fatal("no api call line logged")
	}
	for _, l := range lines {
		if l.ContextMap()["run"] != "run-1" {
			t.Errorf("line %q has fields %v, want run=run-1", l.Message, l.ContextMap())
		}
	}
}
