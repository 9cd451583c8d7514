package bench

import (
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestChartsAreSVGWithALinePairPerSBIMode(t *testing.T) {
	var results []Result
	for _, mode := range []string{"xio", "tcp"} {
		for i, n := range []int{1, 64, 1000} {
			p50 := float64(i+1) * map[string]float64{"xio": 1, "tcp": 3}[mode]
			results = append(results,
				Result{Procedure: ProcedurePDUSession, SBI: mode, UEs: n, Succeeded: n, LatencyMS: Latency{P50: p50, P99: 2 * p50}},
				Result{Procedure: ProcedurePDUSessionRelease, SBI: mode, UEs: n, Succeeded: n, LatencyMS: Latency{P50: p50 / 2, P99: p50}})
		}
	}
	// A count where nothing succeeded has no latency to draw.
	results = append(results, Result{Procedure: ProcedurePDUSession, SBI: "tcp", UEs: 10000, Failed: 10000})
	dir := t.TempDir()
	paths, err := WriteCharts(filepath.Join(dir, "out.json"), results)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "out-pdu_session.svg"), filepath.Join(dir, "out-pdu_session_release.svg")}
	if strings.Join(paths, ",") != strings.Join(want, ",") {
		t.Fatalf("charts %v, want %v", paths, want)
	}
	for _, p := range paths {
		texts := svgTexts(t, p)
		for _, label := range []string{"xio p50", "xio p99", "tcp p50", "tcp p99", "UEs", "latency (ms)"} {
			if !strings.Contains(texts, label) {
				t.Errorf("%s: no %q in its text (%s)", p, label, texts)
			}
		}
		if strings.Contains(texts, "xio-socket") {
			t.Errorf("%s: a mode that was not measured", p)
		}
	}
}

// svgTexts checks that the file is well-formed XML with an <svg> root and
// returns its text content.
func svgTexts(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := xml.NewDecoder(f)
	var texts []string
	root := ""
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", path, err)
		}
		switch v := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = v.Name.Local
			}
		case xml.CharData:
			if s := strings.TrimSpace(string(v)); s != "" {
				texts = append(texts, s)
			}
		}
	}
	if root != "svg" {
		t.Fatalf("%s: root element %q, want svg", path, root)
	}
	return strings.Join(texts, "|")
}
