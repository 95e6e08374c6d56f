// Package devsetup holds the tests of the repository's set-up scripts
// that a newcomer runs first (tools/test-db.sh, behind `make test-db`).
package devsetup
