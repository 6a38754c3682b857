// Package schematest checks a JSON document against a JSON Schema, for the
// tests that hold reaper's output to the schemas it ships
// (audit/report.schema.json, ledger/schema.json). It implements the part
// of JSON Schema 2020-12 those schemas use — type, properties, required,
// additionalProperties, items, enum, const, minimum, minLength, pattern
// (Go's RE2) and local
// $ref — and fails on any other keyword, so a schema cannot say more than
// is checked.
package schematest
