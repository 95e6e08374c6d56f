package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"hrsync/emulator"
)

// emulatorTokenEnv names the environment variable read when no --token is
// given (same syntax as the flag).
const emulatorTokenEnv = "HRSYNC_EMULATOR_TOKEN" //nolint:gosec // the name of a variable, not a credential

func newEmulatorCmd() *cobra.Command {
	var (
		listen      string
		tokens      []string
		delay       string
		maxRows     int
		seed        int64
		maxBody     int64
		maxField    int
		maxBalance  float64
		logRequests bool
	)
	cmd := &cobra.Command{
		Use:   "emulator",
		Short: "Serve an in-memory emulator of the platform's partner API",
		Long: `Serve the platform's partner API in memory, with a built-in dataset (a company,
a personalizable and a plain collection, products, people and orders) and test
endpoints under /_emulator/ (state, orders, faults, request log, reset).
See docs/emulator.md.

A token is required: --token TOKEN (sees the dataset's company) or
--token TOKEN=companyA,companyB, repeatable; without --token, the token is read
from ` + emulatorTokenEnv + ` (same syntax). The first line printed is
"emulator listening on http://HOST:PORT company=... personalizable-collection=...
plain-collection=..."; requests are logged to stderr (never the token).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(tokens) == 0 {
				if env := strings.TrimSpace(os.Getenv(emulatorTokenEnv)); env != "" {
					tokens = []string{env}
				}
			}
			if len(tokens) == 0 {
				return withCode(exitUsage, errors.New("emulator: a token is required: --token TOKEN[=companyA,companyB] or "+emulatorTokenEnv))
			}
			opts := emulator.Options{Tokens: map[string][]string{}, OrdersMaxRows: maxRows, Seed: seed,
				MaxBodyBytes: maxBody, MaxFieldChars: maxField, MaxBalance: maxBalance}
			for _, t := range tokens {
				tok, companies, err := emulator.ParseToken(t)
				if err != nil {
					return withCode(exitUsage, fmt.Errorf("emulator: --token: %w", err))
				}
				opts.Tokens[tok] = append(opts.Tokens[tok], companies...)
			}
			d, err := emulator.ParseDelayRange(delay)
			if err != nil {
				return withCode(exitUsage, fmt.Errorf("emulator: --personalize-delay: %w", err))
			}
			opts.PersonalizeDelay = &d
			if err := checkEmulatorLimits(maxRows, maxBody, maxField, maxBalance); err != nil {
				return withCode(exitUsage, err)
			}
			log := zap.NewNop()
			if logRequests {
				core := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()),
					zapcore.Lock(zapcore.AddSync(cmd.ErrOrStderr())), zapcore.InfoLevel)
				log = zap.New(core).With(zap.String("component", "emulator"))
			}
			defer log.Sync() //nolint:errcheck // nothing to do about a failed flush of stderr
			opts.Logger = log
			return emulator.Serve(cmd.Context(), emulator.ServeConfig{Listen: listen, Options: opts, Out: cmd.OutOrStdout()})
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:8080", "address to listen on (port 0 picks a free port)")
	f.StringArrayVar(&tokens, "token", nil, "bearer token to accept: TOKEN or TOKEN=companyA,companyB (repeatable)")
	f.StringVar(&delay, "personalize-delay", emulator.DefaultPersonalizeDelay().String(), "processing time of a first personalize call: a duration (1s) or a range (15s-20s)")
	f.IntVar(&maxRows, "orders-max-rows", emulator.DefaultOrdersMaxRows, "most orders one orders list answer holds (count still tells the total)")
	f.Int64Var(&seed, "seed", 1, "seed of the random personalize delays and fault rates")
	f.Int64Var(&maxBody, "max-body-bytes", emulator.DefaultMaxBodyBytes, "largest request body accepted (413 beyond)")
	f.IntVar(&maxField, "max-field-chars", emulator.DefaultMaxFieldChars, "longest string field of a person in createPeople, in characters (400 beyond)")
	f.Float64Var(&maxBalance, "max-balance", emulator.DefaultMaxBalance, "largest addBalance or amount in createPeople (400 beyond)")
	f.BoolVar(&logRequests, "log-requests", true, "log each API request to stderr")
	return cmd
}

// checkEmulatorLimits refuses a limit of the emulator that is not positive.
func checkEmulatorLimits(maxRows int, maxBody int64, maxField int, maxBalance float64) error {
	switch {
	case maxRows <= 0:
		return fmt.Errorf("emulator: --orders-max-rows %d: want > 0", maxRows)
	case maxBody <= 0:
		return fmt.Errorf("emulator: --max-body-bytes %d: want > 0", maxBody)
	case maxField <= 0:
		return fmt.Errorf("emulator: --max-field-chars %d: want > 0", maxField)
	case !(maxBalance > 0):
		return fmt.Errorf("emulator: --max-balance %g: want > 0", maxBalance)
	}
	return nil
}
