// Package sources reads HR exports into normalized, validated person records.
//
// Two kinds of export produce the same result: CSV files dropped in a folder
// (sub-packages csvsrc and dropfolder) and a SQL query against the HR
// database (sub-package sqlsrc). Each row becomes either a model.Person or
// one or more model.Rejection values naming the source, the row's line, the
// column and the reason; good rows go on when others are rejected.
//
// This package holds what both kinds share: the option types that the
// config package embeds, the Field names of model.Person, the Validator,
// and Run, the one-pass reader both kinds of source drive.
//
// # Drop folders
//
// A drop folder is a sources.DropFolder, whatever holds it: a local folder
// (dropfolder), a folder on an SFTP server (sftpdrop) or a prefix of an
// S3-compatible bucket (s3drop); the two remote ones keep the protocol
// through remotedrop, over a small Store each implements. Each backend,
// like the SQL query (sqlsrc), is a kind of source that registers itself in
// the registry (sub-package registry) with the options it owns (dropkind
// holds what the drop-folder kinds share); a program imports the kinds it
// offers and opens a tenant's source with registry.Open. droptest is the
// protocol suite every backend passes.
//
// # One pass, duplicates found late
//
// A duplicate externalId or e-mail rejects every occurrence, the first one
// included, since nobody can tell which row is right. Run reads an export
// once: a row that repeats a key is rejected when it is met, and the first
// row of the key, accepted by then, is taken back after the last row
// (Handler.Retract) and rejected. A caller that counts or sorts rows as they
// come must therefore be able to undo one; the people plan counts an
// unchanged row on the spot and remembers its line, and keeps every other
// row until the read is over.
//
// # Speed
//
// Run uses every processor: one goroutine reads the rows in order (a query's
// rows, a CSV file's records; with more than two processors, of a CSV file
// only its text, cut into chunks of whole records),
// workers fill and check them in batches (CSV parsing and gocsv mapping,
// e-mail, dates, the hashes of Hashes), and the calling goroutine finds the
// duplicates and hands the rows on in order.
// Keys are compared as 64-bit hashes; a caller that indexes known keys
// anyway (the people plan, with hrsync's state) can pass its own Keys so
// that the read keeps no map of its own for them.
package sources
