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

// acceptedIndependently is a second, differently built judge: it decodes the
// body with json.Unmarshal into a map (where judge walks tokens), and checks
// the result with a regular expression and strconv.ParseUint (where judge
// checks characters). It cannot see members named twice.
func acceptedIndependently(status int, body []byte) (uint64, bool) {
	if status != 200 || len(body) > maxBody {
		return 0, false
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil || members == nil {
		return 0, false
	}
	var version, result string
	if json.Unmarshal(members["jsonrpc"], &version) != nil || version != "2.0" || !strings.HasPrefix(string(members["jsonrpc"]), `"`) {
		return 0, false
	}
	if id, ok := decodeNumber(members["id"]); !ok || id != "1" {
		return 0, false
	}
	if e, ok := members["error"]; ok && string(e) != "null" {
		return 0, false
	}
	if raw := members["result"]; !strings.HasPrefix(string(raw), `"`) || json.Unmarshal(raw, &result) != nil || !canonicalQuantity.MatchString(result) {
		return 0, false
	}
	height, err := strconv.ParseUint(result[2:], 16, 64)
	return height, err == nil
}

// decodeNumber decodes raw keeping numbers as written, and reports whether
// it is a JSON number at all (a string "1" is not).
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

// FuzzJudge feeds the response judge arbitrary statuses and bodies. It must
// never panic; a rejection's message, as Check reports it, holds no control
// character; whenever it accepts, the result member re-encodes canonically
// from the height, and the independent judge agrees on the verdict and the
// height. Seeds live in testdata/fuzz/FuzzJudge. Run longer with:
// go test -run '^$' -fuzz FuzzJudge -fuzztime 5m
func FuzzJudge(f *testing.F) {
	f.Add(200, []byte(`{"jsonrpc":"2.0","id":1,"result":"0x64"}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		height, err := judge(status, body)
		want, ok := acceptedIndependently(status, body)
		if err != nil {
			msg := (&ProbeError{Endpoint: "p", Err: err}).Error()
			if hasControl(msg) {
				t.Fatalf("message %q holds a control character", msg)
			}
			if ok && !strings.Contains(err.Error(), "twice") {
				t.Fatalf("judge rejected what the independent check accepts (%d): %v", want, err)
			}
			return
		}
		if !ok || height != want {
			t.Fatalf("judge accepted %d; independent check says %d, %v", height, want, ok)
		}
		var members map[string]json.RawMessage
		var result string
		json.Unmarshal(body, &members)
		json.Unmarshal(members["result"], &result)
		if encoded := "0x" + strconv.FormatUint(height, 16); encoded != result {
			t.Fatalf("height %d re-encodes as %s, the answer said %s", height, encoded, result)
		}
	})
}

// compactSeeds are answers in the compact form real nodes send and near
// misses of it, each of which the shortcut must either read exactly as the
// full parser does or leave to it.
var compactSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"result":"0x1521a3f"}`,
	`{"jsonrpc":"2.0","id":1,"result":"0x1521a3f"}` + "\n",
	`{"jsonrpc":"2.0","id":1,"result":"0x0"}` + "\n",
	`{"jsonrpc":"2.0","id":1,"result":"0xffffffffffffffff"}`,
	`{"jsonrpc":"2.0","id":1,"result":"0x1000000000000000"}` + "\n",
	`{"jsonrpc":"2.0","id":1,"result":"0x01"}`,
	`{"jsonrpc":"2.0","id":1,"result":"0x00"}`,
	`{"jsonrpc":"2.0","id":1,"result":"0x"}`,
	`{"jsonrpc":"2.0","id":1,"result":"0xA"}`,
	`{"jsonrpc":"2.0","id":1,"result":"0X1"}`,
	`{"jsonrpc":"2.0","id":1,"result":"0x10000000000000000"}`,
	`{"jsonrpc":"2.0","id":1,"result":"0x1g"}`,
	`{"jsonrpc":"2.0","id":1,"result":"0x\u0031"}`,
	`{"jsonrpc":"2.0","id":1,"result":"\u0030x1"}`,
	`{"jsonrpc": "2.0", "id": 1, "result": "0x1"}`,
	`{"jsonrpc":"2.0","id":1,"result":"0x1"} ` + "\n",
	`{"jsonrpc":"2.0","id":1,"result":"0x1"}` + "\r\n",
	`{"jsonrpc":"2.0","id":1,"result":"0x1"}` + "\n\n",
	`{"jsonrpc":"2.0","id":1,"result":"0x1"}` + "\nx",
	`{"jsonrpc":"2.0","id":1,"result":"0x1"}x`,
	`{"jsonrpc":"2.0","id":1,"result":"0x1"}{"jsonrpc":"2.0","id":1,"result":"0x2"}`,
	" " + `{"jsonrpc":"2.0","id":1,"result":"0x1"}`,
	"\ufeff" + `{"jsonrpc":"2.0","id":1,"result":"0x1"}`,
	`{"jsonrpc":"2.0","id":1,"result":"0x1"}` + "\x00",
	`{"jsonrpc":"2.0","id":01,"result":"0x1"}`,
	`{"jsonrpc":"2.0","id":1.0,"result":"0x1"}`,
	`{"jsonrpc":"2.0","id":"1","result":"0x1"}`,
	`{"jsonrpc":"2.0","id":10,"result":"0x1"}`,
	`{"jsonrpc":"2.00","id":1,"result":"0x1"}`,
	`{"id":1,"jsonrpc":"2.0","result":"0x1"}`,
	`{"jsonrpc":"2.0","result":"0x1","id":1}`,
	`{"jsonrpc":"2.0","id":1,"result":"0x1","error":null}`,
	`{"jsonrpc":"2.0","id":1,"result":"0x1","error":{"code":-32000,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"result":"0x1","result":"0x2"}`,
	`{"jsonrpc":"2.0","id":1,"result":"0x1"}"}`,
	`{"jsonrpc":"2.0","id":1,"result":"0x1"`,
	`{"jsonrpc":"2.0","id":1,"result":"0x1}`,
	`{"jsonrpc":"2.0","id":1,"result":0x1}`,
	`{"jsonrpc":"2.0","id":1,"result":"1"}`,
	`{"jsonrpc":"2.0","id":1}`,
	"",
}

// FuzzCompactHeight checks the shortcut for the common answer against the
// full parser: whatever compactHeight recognises, judgeStrictly accepts with
// the same height, and judge always answers exactly as judgeStrictly does,
// error messages included. Run longer with:
// go test -run '^$' -fuzz FuzzCompactHeight -fuzztime 3m -parallel 1
func FuzzCompactHeight(f *testing.F) {
	for _, seed := range compactSeeds {
		f.Add(200, []byte(seed))
	}
	f.Add(503, []byte(compactSeeds[0]))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if height, ok := compactHeight(body); ok {
			if strict, err := judgeStrictly(200, body); err != nil || strict != height {
				t.Fatalf("the shortcut reads %d; the full parser says %d, %v", height, strict, err)
			}
		}
		strict, strictErr := judgeStrictly(status, body)
		height, err := judge(status, body)
		if height != strict || (err == nil) != (strictErr == nil) || (err != nil && err.Error() != strictErr.Error()) {
			t.Fatalf("judge says %d, %v; the full parser says %d, %v", height, err, strict, strictErr)
		}
	})
}
