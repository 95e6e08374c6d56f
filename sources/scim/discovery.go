package scim

import (
	"net/http"
	"net/url"
	"strings"
)

func (h *Handler) serviceProviderConfig(w http.ResponseWriter, r *http.Request) {
	unsupported := attrs{"supported": false}
	writeJSON(w, http.StatusOK, attrs{
		"schemas":        []string{schemaSPConfig},
		"patch":          attrs{"supported": true},
		"bulk":           attrs{"supported": false, "maxOperations": 0, "maxPayloadSize": 0},
		"filter":         attrs{"supported": true, "maxResults": MaxResults},
		"changePassword": unsupported,
		"sort":           unsupported,
		"etag":           attrs{"supported": true},
		"authenticationSchemes": []attrs{{
			"type": "oauthbearertoken", "name": "Bearer token", "primary": true,
			"description": "A token per tenant, sent as Authorization: Bearer <token>.",
		}},
		"meta": attrs{"resourceType": "ServiceProviderConfig", "location": h.base(r) + "/ServiceProviderConfig"},
	})
}

func (h *Handler) userResourceType(r *http.Request) attrs {
	return attrs{
		"schemas": []string{schemaResourceType}, "id": "User", "name": "User", "endpoint": "/Users",
		"description": "People the identity provider assigns to hrsync", "schema": SchemaUser,
		"schemaExtensions": []attrs{{"schema": SchemaEnterprise, "required": false}, {"schema": SchemaHrsync, "required": false}},
		"meta":             attrs{"resourceType": "ResourceType", "location": h.base(r) + "/ResourceTypes/User"},
	}
}

func list(items []any) listResponse {
	return listResponse{Schemas: []string{schemaListResponse}, TotalResults: len(items), StartIndex: 1, ItemsPerPage: len(items), Resources: items}
}

func (h *Handler) resourceTypes(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, list([]any{h.userResourceType(r)}))
}

func (h *Handler) resourceType(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("name") != "User" {
		writeError(w, newError(http.StatusNotFound, "", "only the User resource type is supported"))
		return
	}
	writeJSON(w, http.StatusOK, h.userResourceType(r))
}

func attrJSON(d attrDef) attrs {
	mut, uniq := "readWrite", "none"
	if d.Uniqueness != "" {
		uniq = d.Uniqueness
	}
	out := attrs{
		"name": d.Name, "type": d.Type, "multiValued": d.Multi, "description": d.Description,
		"required": d.Required, "caseExact": d.CaseExact, "mutability": mut, "returned": "default", "uniqueness": uniq,
	}
	if len(d.Sub) > 0 {
		subs := make([]attrs, 0, len(d.Sub))
		for _, s := range d.Sub {
			subs = append(subs, attrJSON(s))
		}
		out["subAttributes"] = subs
	}
	return out
}

func (h *Handler) schemaJSON(r *http.Request, s schemaDef) attrs {
	list := make([]attrs, 0, len(s.Attrs))
	for _, a := range s.Attrs {
		list = append(list, attrJSON(a))
	}
	return attrs{
		"schemas": []string{schemaSchema}, "id": s.ID, "name": s.Name, "description": s.Description, "attributes": list,
		"meta": attrs{"resourceType": "Schema", "location": h.base(r) + "/Schemas/" + s.ID},
	}
}

func (h *Handler) schemas(w http.ResponseWriter, r *http.Request) {
	var items []any
	for _, s := range allSchemas() {
		items = append(items, h.schemaJSON(r, s))
	}
	writeJSON(w, http.StatusOK, list(items))
}

func (h *Handler) schema(w http.ResponseWriter, r *http.Request) {
	urn, err := url.PathUnescape(r.PathValue("urn"))
	if err != nil {
		urn = r.PathValue("urn")
	}
	for _, s := range allSchemas() {
		if strings.EqualFold(s.ID, urn) {
			writeJSON(w, http.StatusOK, h.schemaJSON(r, s))
			return
		}
	}
	writeError(w, newError(http.StatusNotFound, "", "no such schema"))
}
