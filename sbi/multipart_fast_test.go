package sbi

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"strings"
	"testing"
)

// writeWithMultipart is what EncodeRelated wrote before it wrote bodies
// directly: mime/multipart's Writer, with a fixed boundary.
func writeWithMultipart(t testing.TB, boundary string, root []byte, parts []Part) ([]byte, string) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	if err := w.SetBoundary(boundary); err != nil {
		t.Fatal(err)
	}
	write := func(ct, id string, data []byte) {
		h := textproto.MIMEHeader{"Content-Type": {ct}}
		if id != "" {
			h.Set("Content-Id", id)
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = pw.Write(data)
	}
	write("application/json", "", root)
	for _, p := range parts {
		write(p.ContentType, p.ContentID, p.Data)
	}
	_ = w.Close()
	return buf.Bytes(), mime.FormatMediaType("multipart/related", map[string]string{"boundary": boundary, "type": "application/json"})
}

// The direct writer gives multipart.Writer's bytes and Content-Type, so no
// peer sees a different body than before.
func TestFastRelatedEncoderMatchesMultipartWriter(t *testing.T) {
	root := []byte(`{"n1SmMsg":{"contentId":"n1msg"},"n2SmInfo":{"contentId":"n2msg"}}`)
	cases := [][]Part{
		{{ContentID: "n1msg", ContentType: ContentTypeNAS, Data: []byte{0x2e, 1, 1, 0xc1}}},
		{{ContentID: "n1msg", ContentType: ContentTypeNAS, Data: []byte("\r\n--x\r\n")},
			{ContentID: "n2msg", ContentType: ContentTypeNGAP, Data: []byte{0, 3, 0xff, '\r', '\n'}}},
		{{ContentType: ContentTypeNGAP, Data: nil}, {ContentID: "<a>", ContentType: "", Data: []byte{}}},
	}
	for i, parts := range cases {
		boundary := newBoundary()
		want, wantCT := writeWithMultipart(t, boundary, root, parts)
		got := appendRelated(nil, boundary, root, parts)
		if !bytes.Equal(got, want) {
			t.Errorf("case %d: body\n%q\nwant (multipart.Writer)\n%q", i, got, want)
		}
		if ct := relatedContentType(boundary); ct != wantCT {
			t.Errorf("case %d: content type %q, want %q", i, ct, wantCT)
		}
		if n := relatedSize(boundary, root, parts); n < len(got) {
			t.Errorf("case %d: size estimate %d below the body's %d bytes", i, n, len(got))
		}
	}
}

// stdlibParts is how mime/multipart reads body, for comparison.
func stdlibParts(body []byte, boundary string) ([]rawPart, error) {
	r := multipart.NewReader(bytes.NewReader(body), boundary)
	var out []rawPart
	for {
		p, err := r.NextRawPart()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return nil, err
		}
		out = append(out, rawPart{contentType: p.Header.Get("Content-Type"), contentID: p.Header.Get("Content-Id"), data: data})
	}
}

func checkFastAgrees(t *testing.T, body []byte, boundary string) bool {
	fast, ok := splitRelatedFast(body, boundary)
	if !ok {
		return false
	}
	slow, err := stdlibParts(body, boundary)
	if err != nil {
		t.Fatalf("fast reader took %q (boundary %q), mime/multipart refuses it: %v", body, boundary, err)
	}
	if len(fast) != len(slow) {
		t.Fatalf("%q: fast reader %d parts, mime/multipart %d", body, len(fast), len(slow))
	}
	for i := range fast {
		f, s := fast[i], slow[i]
		if f.contentType != s.contentType || f.contentID != s.contentID || !bytes.Equal(f.data, s.data) {
			t.Fatalf("%q part %d: fast %+v, mime/multipart %+v", body, i, f, s)
		}
	}
	return true
}

// Bodies our NFs write take the fast path and read as mime/multipart
// reads them; an appended part cannot write into the next one.
func TestFastRelatedReaderTakesOurBodies(t *testing.T) {
	root := []byte(`{"a":1}`)
	parts := []Part{{ContentID: "n1msg", ContentType: ContentTypeNAS, Data: []byte{1, 2, 3}},
		{ContentID: "n2msg", ContentType: ContentTypeNGAP, Data: []byte{4, 5}}}
	boundary := newBoundary()
	body := appendRelated(nil, boundary, root, parts)
	if !checkFastAgrees(t, body, boundary) {
		t.Fatalf("the fast reader left our own body to mime/multipart: %q", body)
	}
	fast, _ := splitRelatedFast(body, boundary)
	_ = append(fast[1].data, 0xee)
	if !bytes.Equal(fast[2].data, []byte{4, 5}) {
		t.Fatal("appending to one part wrote into the next")
	}
}

// Odd but valid bodies (LF line ends, a preamble, header continuation,
// padding after a delimiter) are left to mime/multipart and decode as
// before; so are malformed ones, with mime/multipart's error.
func TestOddRelatedBodiesDecodeAsBefore(t *testing.T) {
	const b = "xyz"
	ct := `multipart/related; boundary=xyz; type="application/json"`
	odd := []string{
		"--xyz\nContent-Type: application/json\n\n{\"a\":1}\n--xyz\nContent-Id: n1\nContent-Type: x\n\nAB\n--xyz--\n",
		"preamble\r\n--xyz\r\nContent-Type: application/json\r\n\r\n{\"a\":1}\r\n--xyz\r\nContent-Id: n1\r\nContent-Type: x\r\n\r\nAB\r\n--xyz--\r\n",
		"--xyz \r\nContent-Type: application/json\r\n\r\n{\"a\":1}\r\n--xyz\r\nContent-Id:\r\n n1\r\nContent-Type: x\r\n\r\nAB\r\n--xyz--\r\nepilogue",
	}
	for _, body := range odd {
		if _, ok := splitRelatedFast([]byte(body), b); ok {
			t.Errorf("fast reader took a non-canonical body %q", body)
		}
		var v map[string]any
		parts, err := DecodeRelated(ct, []byte(body), &v)
		if err != nil || v["a"] != float64(1) || len(parts) != 1 {
			t.Errorf("%q: %v %v %v", body, parts, v, err)
		}
	}
	var v map[string]any
	_, err := DecodeRelated(ct, []byte("--xyz\r\nBad Header\r\n\r\n{}\r\n--xyz--\r\n"), &v)
	if err == nil || !strings.Contains(err.Error(), "multipart part 0") {
		t.Fatalf("malformed header: %v, want mime/multipart's error", err)
	}
}

func FuzzFastRelatedReaderAgreesWithMultipart(f *testing.F) {
	f.Add(appendRelated(nil, "b0", []byte(`{}`), []Part{{ContentID: "n1", ContentType: ContentTypeNAS, Data: []byte{1}}}), "b0")
	f.Add([]byte("--b\r\n\r\n\r\n--b--"), "b")
	f.Add([]byte("--b\r\ncontent-id: <x>\r\nCONTENT-TYPE: \t a/b \t\r\nX-Y: z\r\n\r\nd\r\n--b\r\n\r\n--b\r\n\r\n\r\n--b--\r\n"), "b")
	f.Add([]byte("--b\r\nContent-Type: a\r\n\r\n\r\n--bb\r\n--b--\r\n"), "b")
	f.Fuzz(func(t *testing.T, body []byte, boundary string) {
		checkFastAgrees(t, body, boundary)
	})
}
