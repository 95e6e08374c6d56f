package config

import (
	"errors"
	"strings"

	goccy "github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// checkSyntax parses data with goccy/go-yaml, whose errors carry the
// position of the token at fault, and returns the first syntax error as a
// Problem with its line and column. yaml.v3, which decodes the file, reports
// some syntax errors at the line of the enclosing block instead, so the
// file is parsed here first. ok is false when the file parses.
func checkSyntax(data []byte) (p Problem, ok bool) {
	_, err := parser.ParseBytes(data, 0)
	if err == nil {
		return Problem{}, false
	}
	var ye goccy.Error
	if !errors.As(err, &ye) || ye.GetToken() == nil {
		return Problem{Reason: "invalid YAML: " + err.Error()}, true
	}
	tk := ye.GetToken()
	p = Problem{Line: tk.Position.Line, Column: tk.Position.Column, Reason: "invalid YAML: " + syntaxReason(ye.GetMessage())}
	if line, col, moved := overIndented(tk, ye.GetMessage()); moved {
		p.Line, p.Column = line, col
		p.Reason = "invalid YAML: unexpected ':': is this line indented more than the key above it?"
	}
	return p, true
}

// syntaxReason rewords the parser's messages an operator may not read at
// once; others are kept as they are.
func syntaxReason(msg string) string {
	switch {
	case strings.Contains(msg, "'\t'"):
		return "a tab character: YAML indents with spaces only"
	case strings.HasPrefix(msg, "could not find end character of double-quoted text"):
		return `a double-quoted string is not closed (missing ")`
	case strings.HasPrefix(msg, "could not find end character of single-quoted text"):
		return "a single-quoted string is not closed (missing ')"
	case msg == "',' or ']' must be specified":
		return "a list in brackets ([...]) is not closed: ',' or ']' expected here"
	case msg == "',' or '}' must be specified":
		return "a mapping in braces ({...}) is not closed: ',' or '}' expected here"
	}
	return msg
}

// overIndented finds the ':' that made a plain scalar spanning several lines
// fail: "url: x" followed by a line indented deeper ("   schema: y") is read
// as the one scalar "x schema", and the parser blames the scalar's first
// line. The ':' is at the end of the scalar's last line.
func overIndented(tk *token.Token, msg string) (line, col int, ok bool) {
	if !strings.HasPrefix(msg, "mapping value is not allowed") || !strings.Contains(tk.Origin, "\n") {
		return 0, 0, false
	}
	origin := strings.TrimRight(tk.Origin, " \t")
	n := strings.Count(origin, "\n")
	last := origin[strings.LastIndexByte(origin, '\n')+1:]
	return tk.Position.Line + n, len([]rune(last)) + 1, true
}
