package config

// StoreDialects is how the configuration checks, resolves and describes the
// store URL without knowing any dialect: the store's driver registry
// implements it (store.Dialects) and cmd passes it to Load.
type StoreDialects interface {
	// CheckURL returns "" when a registered dialect serves url and finds it
	// well formed, else the problem in plain words, never quoting a
	// password.
	CheckURL(url string) string
	// ResolveURL returns url with a relative file path in it taken from
	// dir; a URL that names no file comes back unchanged.
	ResolveURL(url, dir string) string
	// Location says where the state of url and schema lives, without any
	// password ("" when no dialect serves url).
	Location(url, schema string) string
	// StateFile returns the local file that holds the state of url, and
	// whether it does not exist yet; ok is false when the state does not
	// live in a local file.
	StateFile(url string) (path string, missing, ok bool)
}

// noDialects is the StoreDialects of a Load given none: it serves no URL.
type noDialects struct{}

func (noDialects) CheckURL(url string) string {
	if url == "" {
		return "must not be empty"
	}
	return "is served by no store dialect: the program registers none"
}
func (noDialects) ResolveURL(url, _ string) string                  { return url }
func (noDialects) Location(string, string) string                   { return "" }
func (noDialects) StateFile(string) (path string, missing, ok bool) { return "", false, false }

// dialectsOr returns d, or noDialects when d is nil.
func dialectsOr(d StoreDialects) StoreDialects {
	if d == nil {
		return noDialects{}
	}
	return d
}

// Location says where the state lives, without any password: the SQLite
// file, or the PostgreSQL database and schema, as the store's dialect
// describes it.
func (s Store) Location() string {
	return dialectsOr(s.dialects).Location(s.URL.Value(), s.Schema)
}

// StateFile returns the local file that holds the state, and whether it does
// not exist yet (the first run or hrsync migrate creates it); ok is false
// when the state does not live in a local file.
func (s Store) StateFile() (path string, missing, ok bool) {
	return dialectsOr(s.dialects).StateFile(s.URL.Value())
}
