// Package sources reads HR exports into normalized, validated person records.
//
// Two kinds of export produce the same result: CSV files dropped in a folder
// (sub-packages csvsrc and dropfolder) and a SQL query against the HR
// database (sub-package sqlsrc). Each row becomes either a model.Person or
// one or more model.Rejection values naming the source, the row's line, the
// column and the reason; good rows go on when others are rejected.
//
// This package holds what both kinds share: the option types that the
// config package embeds, the Field names of model.Person, and the Validator
// with its two-pass driver Run.
//
// # Why two passes
//
// A duplicate externalId or e-mail rejects every occurrence, the first one
// included, since nobody can tell which row is right. A single streaming
// pass would already have emitted the first occurrence when it meets the
// second. So Run reads an export twice: the first pass only records a
// 64-bit hash of each externalId and e-mail with the line it was first seen
// on; the second pass validates each row and emits it or rejects it, final.
// Callers therefore never see a record that is taken back later. A CSV file
// is simply read twice (it is on disk); a SQL query runs twice inside one
// read-only REPEATABLE READ transaction, so both passes see the same
// snapshot. Run checks that both passes saw the same rows and fails the
// export if they did not.
package sources
