// Package logging builds hrsync's logger from the configuration's log
// section: JSON lines for machines, readable lines at a terminal.
package logging

import (
	"fmt"
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"hrsync/config"
)

// New builds hrsync's zap logger: JSON by default, readable console lines when
// stderr is a terminal and the format is auto. It says whether the lines are
// JSON. No line carries a stack trace: errors here are data and operations
// errors, said in words; a panic's stack is logged by the runner.
func New(c config.Log) (log *zap.Logger, jsonLines bool, err error) {
	level, err := zapcore.ParseLevel(c.Level)
	if err != nil {
		return nil, false, fmt.Errorf("log.level: %w", err)
	}
	format := c.Format
	if format == "" || format == "auto" {
		format = "json"
		if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			format = "console"
		}
	}
	var zc zap.Config
	if format == "console" {
		zc = zap.NewDevelopmentConfig()
	} else {
		zc = zap.NewProductionConfig()
		zc.Sampling = nil
	}
	zc.DisableStacktrace = true
	zc.Level = zap.NewAtomicLevelAt(level)
	zc.EncoderConfig.TimeKey = "time"
	zc.EncoderConfig.EncodeTime = zapcore.ISO8601TimeEncoder
	log, err = zc.Build()
	return log, format != "console", err
}
