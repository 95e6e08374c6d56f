package scim

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"

	"go.uber.org/zap"

	"hrsync/sources/scim/directory"
)

// decodeBody reads a JSON body, bounded by the handler's MaxBytesReader, into v.
func decodeBody(r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != mediaType && mt != "application/json") {
			return newError(http.StatusUnsupportedMediaType, "", "the body must be application/scim+json")
		}
	}
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return err
		}
		return badRequest(typeInvalidSyntax, "the body is not a JSON object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return err
		}
		return badRequest(typeInvalidSyntax, "the body holds more than one JSON value")
	}
	return nil
}

// decodeObject reads a JSON object body.
func decodeObject(r *http.Request) (map[string]any, error) {
	var m map[string]any
	if err := decodeBody(r, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, badRequest(typeInvalidSyntax, "the body is not a JSON object")
	}
	return m, nil
}

func (h *Handler) write(r *http.Request) directory.Write {
	t := tenantOf(r.Context())
	return directory.Write{Tenant: t, Actor: "scim-token:" + t, IfVersion: ifMatch(r.Header.Get("If-Match"))}
}

func (h *Handler) writeUser(w http.ResponseWriter, r *http.Request, status int, u directory.User) {
	res := render(u, h.base(r))
	w.Header().Set("ETag", etag(u.Version))
	if status == http.StatusCreated {
		w.Header().Set("Location", res["meta"].(attrs)["location"].(string))
	}
	writeJSON(w, status, res)
}

func (h *Handler) fail(w http.ResponseWriter, err error) {
	e := asError(err)
	if e.Status >= http.StatusInternalServerError {
		h.log.Error("scim directory failed", zap.Error(err))
	}
	writeError(w, e)
}

func (h *Handler) createUser(w http.ResponseWriter, r *http.Request) {
	m, err := decodeObject(r)
	if err != nil {
		h.fail(w, err)
		return
	}
	u, err := parseUser(m)
	if err != nil {
		h.fail(w, err)
		return
	}
	wr := h.write(r)
	wr.IfVersion = 0
	created, err := h.dir.Create(r.Context(), wr, u)
	if err != nil {
		h.fail(w, err)
		return
	}
	h.writeUser(w, r, http.StatusCreated, created)
}

func (h *Handler) getUser(w http.ResponseWriter, r *http.Request) {
	u, err := h.dir.Get(r.Context(), tenantOf(r.Context()), r.PathValue("id"))
	if err != nil {
		h.fail(w, err)
		return
	}
	h.writeUser(w, r, http.StatusOK, u)
}

func (h *Handler) replaceUser(w http.ResponseWriter, r *http.Request) {
	m, err := decodeObject(r)
	if err != nil {
		h.fail(w, err)
		return
	}
	u, err := parseUser(m)
	if err != nil {
		h.fail(w, err)
		return
	}
	got, err := h.dir.Replace(r.Context(), h.write(r), r.PathValue("id"), u)
	if err != nil {
		h.fail(w, err)
		return
	}
	h.writeUser(w, r, http.StatusOK, got)
}

func (h *Handler) patchUser(w http.ResponseWriter, r *http.Request) {
	var req patchRequest
	if err := decodeBody(r, &req); err != nil {
		h.fail(w, err)
		return
	}
	if err := req.check(); err != nil {
		h.fail(w, err)
		return
	}
	got, err := h.dir.Update(r.Context(), h.write(r), r.PathValue("id"), func(cur directory.User) (directory.User, error) {
		a := userToAttrs(cur)
		if err := applyPatch(a, req.Operations); err != nil {
			return directory.User{}, err
		}
		return userFromAttrs(a)
	})
	if err != nil {
		h.fail(w, err)
		return
	}
	h.writeUser(w, r, http.StatusOK, got)
}

func (h *Handler) deleteUser(w http.ResponseWriter, r *http.Request) {
	if err := h.dir.Delete(r.Context(), h.write(r), r.PathValue("id")); err != nil {
		h.fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// listResponse is the ListResponse message (RFC 7644 section 3.4.2).
type listResponse struct {
	Schemas      []string `json:"schemas"`
	TotalResults int      `json:"totalResults"`
	StartIndex   int      `json:"startIndex"`
	ItemsPerPage int      `json:"itemsPerPage"`
	Resources    []any    `json:"Resources"`
}

func intParam(r *http.Request, name string, def int) (int, error) {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		return 0, badRequest(typeInvalidValue, "%s must be an integer", name)
	}
	return n, nil
}

func (h *Handler) listUsers(w http.ResponseWriter, r *http.Request) {
	terms, err := listFilter(r.URL.Query().Get("filter"))
	if err != nil {
		h.fail(w, err)
		return
	}
	start, err := intParam(r, "startIndex", 1)
	if err != nil {
		h.fail(w, err)
		return
	}
	count, err := intParam(r, "count", MaxResults)
	if err != nil {
		h.fail(w, err)
		return
	}
	start, count = max(start, 1), min(max(count, 0), MaxResults)
	page, err := h.dir.List(r.Context(), tenantOf(r.Context()), directory.Query{Filter: terms, StartIndex: start, Count: count})
	if err != nil {
		h.fail(w, err)
		return
	}
	res := listResponse{Schemas: []string{schemaListResponse}, TotalResults: page.Total, StartIndex: start,
		ItemsPerPage: len(page.Users), Resources: make([]any, 0, len(page.Users))}
	base := h.base(r)
	for _, u := range page.Users {
		res.Resources = append(res.Resources, render(u, base))
	}
	writeJSON(w, http.StatusOK, res)
}
