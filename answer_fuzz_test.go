package blocklag

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// canonicalQuantity is the Ethereum execution API's pattern for a uint
// QUANTITY, narrowed to values that fit in 64 bits.
var canonicalQuantity = regexp.MustCompile(`^0x(0|[1-9a-f][0-9a-f]{0,15})$`)

// acceptedIndependently is a second, differently built reading: it decodes
// the body with json.Unmarshal into a map (where parseQuantity walks tokens),
// and checks the result with a regular expression and strconv.ParseUint
// (where parseQuantity checks characters). It cannot see members named twice.
func acceptedIndependently(body []byte) (uint64, bool) {
	if len(body) > maxBody {
		return 0, false
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil || members == nil {
		return 0, false
	}
	var version, result string
	rawVersion := members["jsonrpc"]
	if !strings.HasPrefix(string(rawVersion), `"`) || json.Unmarshal(rawVersion, &version) != nil {
		return 0, false
	}
	if version != "2.0" {
		return 0, false
	}
	if id, ok := decodeNumber(members["id"]); !ok || id != "1" {
		return 0, false
	}
	if e, ok := members["error"]; ok && string(e) != "null" {
		return 0, false
	}
	rawResult := members["result"]
	if !strings.HasPrefix(string(rawResult), `"`) || json.Unmarshal(rawResult, &result) != nil {
		return 0, false
	}
	if !canonicalQuantity.MatchString(result) {
		return 0, false
	}
	height, err := strconv.ParseUint(result[2:], 16, 64)
	return height, err == nil
}

// decodeNumber decodes raw keeping numbers as written, and reports whether it
// is a JSON number at all (a string "1" is not).
func decodeNumber(raw json.RawMessage) (json.Number, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return "", false
	}
	n, ok := v.(json.Number)
	return n, ok
}

// FuzzParseQuantity feeds parseQuantity arbitrary bodies, seeded from
// answerCases and bodies at the size limit. It must never panic; a rejection's message, as Check
// reports it, holds no control character; whenever it accepts, the
// independent reading agrees on the verdict and the height, which it reads
// only from a result in canonical form. Run longer with:
// go test -run '^$' -fuzz FuzzParseQuantity -fuzztime 5m -parallel 1
func FuzzParseQuantity(f *testing.F) {
	for _, c := range answerCases {
		f.Add([]byte(c.body))
	}
	f.Add([]byte(valid + strings.Repeat(" ", maxBody-len(valid))))
	f.Add([]byte(valid + strings.Repeat(" ", maxBody+1-len(valid))))
	f.Fuzz(func(t *testing.T, body []byte) {
		height, err := parseQuantity(body, nil)
		want, ok := acceptedIndependently(body)
		if err != nil {
			msg := (&ProbeError{Endpoint: "p", Err: err}).Error()
			if hasControl(msg) {
				t.Fatalf("message %q holds a control character", msg)
			}
			if ok && !strings.Contains(err.Error(), "twice") {
				t.Fatalf("parseQuantity rejected what the independent check accepts (%d): %v", want, err)
			}
			return
		}
		if !ok || height != want {
			t.Fatalf("parseQuantity accepted %d; independent check says %d, %v", height, want, ok)
		}
	})
}
