// Package api is the contract with the platform: api/openapi.yaml, the types,
// client plumbing and server interface generated from it (api.gen.go), and
// the document itself for validating requests and responses in tests.
package api

//go:generate go tool oapi-codegen -config oapi-codegen.yaml openapi.yaml

import _ "embed"

// SpecYAML is api/openapi.yaml as shipped in the binary.
//
//go:embed openapi.yaml
var SpecYAML []byte
