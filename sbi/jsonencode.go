package sbi

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
)

// jsonEncoder is an encoding/json Encoder with the buffer it encodes into,
// kept between answers. A fresh json.NewEncoder(w) per answer starts from an
// empty buffer: built with GOEXPERIMENT=jsonv2 that buffer grows through
// ~10 allocations per body and encoding took about twice as long as reusing
// one (BenchmarkWriteJSON in sbi/wiregolden). The classic encoder pools its
// buffer itself: there this is the same cost.
type jsonEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

// maxPooledEncoderBuf: an encoder whose buffer grew past this (a large NRF
// search result, say) is dropped rather than kept for the small bodies that
// make up most answers.
const maxPooledEncoderBuf = 64 << 10

var jsonEncoders = sync.Pool{New: func() any {
	e := &jsonEncoder{}
	e.enc = json.NewEncoder(&e.buf)
	return e
}}

// EncodeJSON writes v to w as json.NewEncoder(w).Encode(v) would, byte for
// byte (one JSON value and a newline), in a single Write. On an encoding
// error nothing is written.
func EncodeJSON(w io.Writer, v any) error {
	e := jsonEncoders.Get().(*jsonEncoder)
	defer putJSONEncoder(e)
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(e.buf.Bytes())
	return err
}

func putJSONEncoder(e *jsonEncoder) {
	if e.buf.Cap() > maxPooledEncoderBuf {
		return
	}
	jsonEncoders.Put(e)
}
