package sbi

import gojson "github.com/goccy/go-json"

// UnmarshalJSON decodes an SBI body (a request's or an answer's) into v.
// It is github.com/goccy/go-json's decoder, a drop-in for encoding/json's
// that decodes the openapi models 1.8-6x faster with 40-70 % of the
// allocations (BenchmarkBodies in sbi/wiregolden): on a saturated
// machine JSON decoding was ~7 % of the sampled CPU of a registration. What it
// accepts and gives is encoding/json's (sbi/wiregolden pins it: keys in
// another case, duplicate keys, unknown keys, null, invalid UTF-8, types
// with their own UnmarshalJSON such as time.Time); its errors are its own types, with the same
// "json: cannot unmarshal … into Go struct field …" text that a 400's
// ProblemDetails detail carries. Encoding stays encoding/json's: goccy's
// was slower on some bodies, and it fixes the bytes peers see.
func UnmarshalJSON(data []byte, v any) error { return gojson.Unmarshal(data, v) }
