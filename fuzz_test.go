package blocklag

import (
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
func acceptedIndependently(status int, body []byte, id uint64) (uint64, bool) {
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
	if string(members["id"]) != strconv.FormatUint(id, 10) {
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

// FuzzJudge feeds the response judge arbitrary statuses, bodies and ids. It
// must never panic; whenever it accepts, the result member re-encodes
// canonically from the height, and the independent judge agrees on the
// verdict and the height. Seeds live in testdata/fuzz/FuzzJudge. Run longer
// with: go test -run '^$' -fuzz FuzzJudge -fuzztime 5m
// S-P2
func FuzzJudge(f *testing.F) {
	f.Add(200, []byte(`{"jsonrpc":"2.0","id":7,"result":"0x64"}`), uint64(7))
	f.Fuzz(func(t *testing.T, status int, body []byte, id uint64) {
		height, err := judge(status, body, id)
		want, ok := acceptedIndependently(status, body, id)
		if err != nil {
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
