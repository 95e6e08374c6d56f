package emulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"hrsync/api"
)

// adminMux routes the test endpoints under /_emulator/ (JSON in and out,
// no token needed; docs/emulator.md shows each with curl).
func (e *Emulator) adminMux() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("/_emulator/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no test endpoint %s %s", r.Method, r.URL.Path))
	})
	m.HandleFunc("GET /_emulator/dataset", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, e.Dataset())
	})
	m.HandleFunc("GET /_emulator/state", func(w http.ResponseWriter, r *http.Request) {
		st := e.State()
		if id := r.URL.Query().Get("companyId"); id != "" {
			kept := []CompanyState{}
			for _, c := range st.Companies {
				if c.ID == id {
					kept = append(kept, c)
				}
			}
			st.Companies = kept
		}
		writeJSON(w, http.StatusOK, st)
	})
	m.HandleFunc("GET /_emulator/companies/{companyId}/people/{person}", func(w http.ResponseWriter, r *http.Request) {
		p, ok := e.Person(r.PathValue("companyId"), r.PathValue("person"))
		if !ok {
			writeAPIError(w, errNotFound("person %q not found in company", r.PathValue("person")))
			return
		}
		writeJSON(w, http.StatusOK, p)
	})
	m.HandleFunc("POST /_emulator/orders", func(w http.ResponseWriter, r *http.Request) {
		var po PlaceOrder
		if !decodeAdmin(w, r, &po) {
			return
		}
		o, err := e.PlaceOrder(po)
		answer(w, http.StatusCreated, o, err)
	})
	m.HandleFunc("PATCH /_emulator/orders/{orderId}", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Status api.OrderStatusValue `json:"status"`
		}
		if !decodeAdmin(w, r, &body) {
			return
		}
		o, err := e.SetOrderStatus(r.PathValue("orderId"), body.Status)
		answer(w, http.StatusOK, o, err)
	})
	m.HandleFunc("PATCH /_emulator/orders/{orderId}/lines/{lineId}", func(w http.ResponseWriter, r *http.Request) {
		var u LineItemUpdate
		if !decodeAdmin(w, r, &u) {
			return
		}
		o, err := e.UpdateLineItem(r.PathValue("orderId"), r.PathValue("lineId"), u)
		answer(w, http.StatusOK, o, err)
	})
	m.HandleFunc("POST /_emulator/orders/{orderId}/lines/{lineId}/shipments", func(w http.ResponseWriter, r *http.Request) {
		var s Shipment
		if !decodeAdmin(w, r, &s) {
			return
		}
		o, err := e.UpdateLineItem(r.PathValue("orderId"), r.PathValue("lineId"), LineItemUpdate{Shipment: &s})
		answer(w, http.StatusCreated, o, err)
	})
	m.HandleFunc("GET /_emulator/faults", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, e.Faults())
	})
	m.HandleFunc("POST /_emulator/faults", func(w http.ResponseWriter, r *http.Request) {
		var f Fault
		if !decodeAdmin(w, r, &f) {
			return
		}
		added, err := e.AddFault(f)
		if err != nil {
			writeAPIError(w, errInvalid("%v", err))
			return
		}
		writeJSON(w, http.StatusCreated, added)
	})
	m.HandleFunc("DELETE /_emulator/faults", func(w http.ResponseWriter, _ *http.Request) {
		e.ClearFaults()
		w.WriteHeader(http.StatusNoContent)
	})
	m.HandleFunc("DELETE /_emulator/faults/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.Atoi(r.PathValue("id"))
		if err != nil || !e.RemoveFault(id) {
			writeAPIError(w, errNotFound("fault %q not found", r.PathValue("id")))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	m.HandleFunc("GET /_emulator/requests", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, e.Requests())
	})
	m.HandleFunc("DELETE /_emulator/requests", func(w http.ResponseWriter, _ *http.Request) {
		e.ClearRequests()
		w.WriteHeader(http.StatusNoContent)
	})
	m.HandleFunc("GET /_emulator/limits", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, e.Limits())
	})
	m.HandleFunc("PUT /_emulator/limits", func(w http.ResponseWriter, r *http.Request) {
		var l Limits
		if !decodeAdmin(w, r, &l) {
			return
		}
		now, err := e.SetLimits(l)
		if err != nil {
			writeAPIError(w, errInvalid("%v", err))
			return
		}
		writeJSON(w, http.StatusOK, now)
	})
	m.HandleFunc("POST /_emulator/reset", func(w http.ResponseWriter, _ *http.Request) {
		e.Reset()
		w.WriteHeader(http.StatusNoContent)
	})
	return m
}

// decodeAdmin reads a test endpoint's JSON body strictly (unknown fields
// are refused, so a typo in a test does not pass unnoticed).
func decodeAdmin(w http.ResponseWriter, r *http.Request, dst any) bool {
	b, aerr := readBody(r)
	if aerr != nil {
		writeAPIError(w, aerr)
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		writeAPIError(w, jsonError(err, ""))
		return false
	}
	return true
}

func answer(w http.ResponseWriter, status int, v any, err error) {
	var aerr *apiError
	switch {
	case err == nil:
		writeJSON(w, status, v)
	case errors.As(err, &aerr):
		writeAPIError(w, aerr)
	default:
		writeAPIError(w, errInvalid("%v", err))
	}
}
