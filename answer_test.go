package blocklag

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

// answerCases are the rules of a 200 answer's body, one body each; they also
// seed FuzzParseQuantity. The probe always sends id 1, so a provider that
// answers every request with id 1, whatever the request carried, is judged
// on its height; any other id fails it. How much of a body is read is
// pinned in probe_test.go.
var answerCases = []struct {
	name   string
	body   string
	height uint64 // the height read, when the answer is accepted
	want   string // "" means accepted, else part of the error
}{
	{name: "accepts a canonical answer", body: valid, height: 100},
	{name: "accepts height zero", body: `{"jsonrpc":"2.0","id":1,"result":"0x0"}`, height: 0},
	{name: "accepts the largest height",
		body: `{"jsonrpc":"2.0","id":1,"result":"0xffffffffffffffff"}`, height: 1<<64 - 1},
	{name: "accepts white space around and inside the object",
		body: "\r\n\t {\"jsonrpc\" : \"2.0\" , \"id\" : 1 , \"result\" : \"0x64\" } \n", height: 100},
	{name: "accepts a null error member",
		body: `{"jsonrpc":"2.0","id":1,"result":"0x64","error":null}`, height: 100},
	{name: "accepts id before jsonrpc", body: `{"id":1,"jsonrpc":"2.0","result":"0x64"}`, height: 100},
	{name: "accepts extra members",
		body: `{"jsonrpc":"2.0","id":1,"result":"0x64","extra":{"a":[1,2]},"note":"x"}`, height: 100},
	{name: "accepts escapes inside strings",
		body: `{"jsonrpc":"2\u002e0","id":1,"result":"0\u00781"}`, height: 1},

	{name: "refuses an empty body", body: "", want: "not a JSON object"},
	{name: "refuses the body null", body: "null", want: "not a JSON object"},
	{name: "refuses a string", body: `"0x64"`, want: "not a JSON object"},
	{name: "refuses a number", body: "100", want: "not a JSON object"},
	{name: "refuses an array", body: `["0x64"]`, want: "not a JSON object"},
	{name: "refuses a batch holding a valid answer", body: "[" + valid + "]", want: "not a JSON object"},
	{name: "refuses an HTML page",
		body: "<!DOCTYPE html><html><body>Bad gateway</body></html>", want: "not a JSON object"},
	{name: "refuses invalid JSON", body: `{"jsonrpc":2.0"}`, want: "not valid JSON"},
	{name: "refuses truncated JSON", body: `{"jsonrpc":"2.0","id":1,"result":"0x6`, want: "not valid JSON"},
	{name: "refuses trailing bytes", body: valid + "garbage", want: "after the JSON object"},
	{name: "refuses two objects", body: valid + valid, want: "after the JSON object"},
	{name: "refuses a member named twice",
		body: `{"jsonrpc":"2.0","id":1,"result":"0x64","result":"0x1"}`,
		want: `answer names member "result" twice`},
	{name: "refuses a byte order mark before the object", body: "\ufeff" + valid, want: "not a JSON object"},

	{name: "refuses a missing jsonrpc member", body: `{"id":1,"result":"0x64"}`,
		want: "jsonrpc member is missing"},
	{name: "refuses jsonrpc 1.0", body: `{"jsonrpc":"1.0","id":1,"result":"0x64"}`,
		want: `jsonrpc member is the string "1.0"`},
	{name: "refuses jsonrpc as a number", body: `{"jsonrpc":2.0,"id":1,"result":"0x64"}`,
		want: `jsonrpc member is "2.0"`},
	{name: "refuses member names in another case", body: `{"JSONRPC":"2.0","ID":1,"Result":"0x64"}`,
		want: "jsonrpc member is missing"},

	{name: "refuses id the string \"1\"", body: `{"jsonrpc":"2.0","id":"1","result":"0x64"}`,
		want: `answer id is the string "1"`},
	{name: "refuses id the number 2", body: `{"jsonrpc":"2.0","id":2,"result":"0x64"}`,
		want: `answer id is "2"`},
	{name: "refuses id the number 1.0", body: `{"jsonrpc":"2.0","id":1.0,"result":"0x64"}`,
		want: `answer id is "1.0"`},
	{name: "refuses id the number 1e0", body: `{"jsonrpc":"2.0","id":1e0,"result":"0x64"}`,
		want: `answer id is "1e0"`},
	{name: "refuses id null", body: `{"jsonrpc":"2.0","id":null,"result":"0x64"}`,
		want: `answer id is "null"`},
	{name: "refuses a missing id", body: `{"jsonrpc":"2.0","result":"0x64"}`, want: "answer id is missing"},
	{name: "refuses an id that holds a line break",
		body: "{\"jsonrpc\":\"2.0\",\"id\":[1,\n\"2026/01/01 00:00:00 check: bad=eligible\"]," +
			"\"result\":\"0x64\"}",
		want: "answer id is "},

	{name: "refuses an RPC error",
		body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"limit exceeded"}}`,
		want: `RPC error -32005: "limit exceeded"`},
	{name: "refuses an RPC error together with a result",
		body: `{"jsonrpc":"2.0","id":1,"result":"0x64","error":{"code":-32000,"message":"header not found"}}`,
		want: `RPC error -32000: "header not found"`},
	{name: "refuses an RPC error without a message as an RPC error",
		body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32005}}`, want: `RPC error -32005: ""`},
	{name: "refuses an RPC error with a null message as one without",
		body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":null}}`,
		want: `RPC error -32601: ""`},
	{name: "refuses a malformed error member", body: `{"jsonrpc":"2.0","id":1,"error":"nope"}`,
		want: `RPC error the string "nope"`},
	{name: "refuses an error member whose code is not a number",
		body: `{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}`, want: "RPC error an object"},
	{name: "refuses an RPC error whose message holds control characters",
		body: `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"a\u001b[2Jb\r\nforged"}}`,
		want: "RPC error -1: "},

	{name: "refuses a missing result", body: `{"jsonrpc":"2.0","id":1}`, want: "no result"},
	{name: "refuses a null result", body: `{"jsonrpc":"2.0","id":1,"result":null}`,
		want: `result "null" is not a string`},
	{name: "refuses a result that is a JSON number", body: `{"jsonrpc":"2.0","id":1,"result":100}`,
		want: `result "100" is not a string`},
	{name: "refuses the result 0x", body: `{"jsonrpc":"2.0","id":1,"result":"0x"}`, want: "canonical"},
	{name: "refuses the result 0x00", body: `{"jsonrpc":"2.0","id":1,"result":"0x00"}`, want: "canonical"},
	{name: "refuses a result with a leading zero", body: `{"jsonrpc":"2.0","id":1,"result":"0x01"}`,
		want: "canonical"},
	{name: "refuses a result with an uppercase X", body: `{"jsonrpc":"2.0","id":1,"result":"0X64"}`,
		want: "canonical"},
	{name: "refuses a result with an uppercase digit", body: `{"jsonrpc":"2.0","id":1,"result":"0x6E"}`,
		want: "canonical"},
	{name: "refuses a result in decimal", body: `{"jsonrpc":"2.0","id":1,"result":"100"}`, want: "canonical"},
	{name: "refuses the result -0x1", body: `{"jsonrpc":"2.0","id":1,"result":"-0x1"}`, want: "canonical"},
	{name: "refuses a result with a leading space", body: `{"jsonrpc":"2.0","id":1,"result":" 0x64"}`,
		want: "canonical"},
	{name: "refuses a result with a trailing space", body: `{"jsonrpc":"2.0","id":1,"result":"0x64 "}`,
		want: "canonical"},
	{name: "refuses a result of 17 hex digits",
		body: `{"jsonrpc":"2.0","id":1,"result":"0x10000000000000000"}`, want: "canonical"},
}

// A JSON-RPC error object is the provider's own answer, an *RPCError; any
// other refusal is an answer that breaks the rules, which code sees as
// ErrBadAnswer.
func TestParseQuantityAcceptsOnlyAnswersThatKeepEveryRule(t *testing.T) {
	for _, tt := range answerCases {
		t.Run(tt.name, func(t *testing.T) {
			height, err := parseQuantity([]byte(tt.body), nil)
			if tt.want == "" {
				if err != nil || height != tt.height {
					t.Fatalf("parseQuantity = %d, %v; want %d accepted", height, err, tt.height)
				}
				return
			}
			if err == nil {
				t.Fatalf("parseQuantity accepted %d; want an error saying %q", height, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("parseQuantity's error is %v; want it to say %q", err, tt.want)
			}
			var rpc *RPCError
			isRPC := errors.As(err, &rpc)
			isBad := errors.Is(err, ErrBadAnswer)
			wantRPC := strings.HasPrefix(tt.want, "RPC error -")
			if isRPC != wantRPC || isBad == wantRPC {
				t.Errorf("parseQuantity's error %v is an RPCError: %v, matches ErrBadAnswer: %v; "+
					"want it to be exactly one, an RPCError: %v", err, isRPC, isBad, wantRPC)
			}
		})
	}
}

// answerStart is how the answer real nodes send begins, written out here
// rather than taken from the code under test.
const answerStart = `{"jsonrpc":"2.0","id":1,"result":"0x`

// compactCases say which bodies the shortcut for the common answer
// recognises: only its exact compact form; each body it recognises the full
// parser accepts with the same height.
var compactCases = []struct {
	name       string
	body       string
	recognised bool
	height     uint64 // when recognised
}{
	{"a compact answer is recognised", answerStart + `1521a3f"}`, true, 0x1521a3f},
	{"a compact answer with a final newline is recognised", answerStart + "1521a3f\"}\n", true, 0x1521a3f},
	{"height zero is recognised", answerStart + `0"}`, true, 0},
	{"sixteen digits are recognised", answerStart + `ffffffffffffffff"}`, true, 1<<64 - 1},
	{"one digit is recognised", answerStart + `a"}` + "\n", true, 10},
	{"a leading zero is left to the full parser", answerStart + `01"}`, false, 0},
	{"0x00 is left to the full parser", answerStart + `00"}`, false, 0},
	{"no digits are left to the full parser", answerStart + `"}`, false, 0},
	{"an uppercase digit is left to the full parser", answerStart + `1A"}`, false, 0},
	{"a digit that is not hex is left to the full parser", answerStart + `1g"}`, false, 0},
	{"an escaped digit is left to the full parser", answerStart + `\u0031"}`, false, 0},
	{"an uppercase X is left to the full parser", `{"jsonrpc":"2.0","id":1,"result":"0X1"}`, false, 0},
	{"seventeen digits are left to the full parser", answerStart + `10000000000000000"}`, false, 0},
	{"spaces between members are left to the full parser",
		`{"jsonrpc":"2.0", "id":1, "result":"0x1"}`, false, 0},
	{"a space before the newline is left to the full parser", answerStart + "1\"} \n", false, 0},
	{"a carriage return and newline are left to the full parser", answerStart + "1\"}\r\n", false, 0},
	{"two newlines are left to the full parser", answerStart + "1\"}\n\n", false, 0},
	{"garbage after the newline is left to the full parser", answerStart + "1\"}\nx", false, 0},
	{"a second object is left to the full parser", answerStart + `1"}` + answerStart + `2"}`, false, 0},
	{"id 01 is left to the full parser", `{"jsonrpc":"2.0","id":01,"result":"0x1"}`, false, 0},
	{"id 2 is left to the full parser", `{"jsonrpc":"2.0","id":2,"result":"0x1"}`, false, 0},
	{"another member order is left to the full parser", `{"id":1,"jsonrpc":"2.0","result":"0x1"}`, false, 0},
	{"an error member after the result is left to the full parser",
		answerStart + `1","error":{"code":1,"message":"m"}}`, false, 0},
	{"a quote inside the digits is left to the full parser", answerStart + `1"}"}`, false, 0},
	{"a truncated answer is left to the full parser", answerStart + `1"`, false, 0},
	{"an empty body is left to the full parser", "", false, 0},
}

func TestCompactShortcutRecognisesOnlyTheCompactForm(t *testing.T) {
	for _, tt := range compactCases {
		t.Run(tt.name, func(t *testing.T) {
			height, recognised := compactHeight([]byte(tt.body))
			if recognised != tt.recognised || height != tt.height {
				t.Fatalf("compactHeight = %d, %v; want %d, %v", height, recognised, tt.height, tt.recognised)
			}
			if !tt.recognised {
				return
			}
			if strict, err := parseStrictly([]byte(tt.body), nil); err != nil || strict != tt.height {
				t.Errorf("the full parser says %d, %v of a body the shortcut reads as %d",
					strict, err, tt.height)
			}
		})
	}
}

// Judging the common answer allocates nothing.
func TestCompactAnswerIsJudgedWithoutAllocating(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"result":"0x1521a3f"}` + "\n")
	allocs := testing.AllocsPerRun(100, func() {
		if height, err := parseQuantity(body, nil); err != nil || height != 0x1521a3f {
			t.Fatalf("parseQuantity = %d, %v", height, err)
		}
	})
	if allocs != 0 {
		t.Errorf("judging the common answer allocates %v times", allocs)
	}
}

// TestProviderJSONShowsNoKey pins how a provider's JSON is shown: a string
// from its own bytes, an invalid UTF-8 byte as one '?', and an object or an
// array by its kind alone, so that no echoed key escapes redaction.
func TestProviderJSONShowsNoKey(t *testing.T) {
	for _, tt := range []struct {
		name   string
		url    string // the provider's URL, with its key
		piece  string // 8 bytes of the key that must not show
		body   string // what the provider answers
		status int
		want   string // part of the message
	}{
		{name: "a key holding %FF echoed as its raw byte in a message",
			url:   "http://node.example/v3/k%FFey0123456789",
			piece: "ey012345",
			body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,` +
				"\"message\":\"bad key k\xffey0123456789\"}}",
			want: `RPC error -32000: "bad key [redacted]"`},
		{name: "a key holding %FF echoed as its raw byte in a result",
			url:   "http://node.example/v3/k%FFey0123456789",
			piece: "ey012345",
			body:  "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"k\xffey0123456789\"}",
			want:  `result "[redacted]" is not a canonical hex quantity`},
		{name: "a key holding a quote echoed inside an object",
			url:   "http://node.example/v3/ab%22cd0123456789",
			piece: "cd012345",
			body:  `{"jsonrpc":"2.0","id":{"key":"ab\"cd0123456789"},"result":"0x1"}`,
			want:  "answer id is an object"},
		{name: "a key echoed inside an array",
			url:   "http://node.example/?apikey=arraykey0123456789",
			piece: "key01234",
			body:  `{"jsonrpc":"2.0","id":["arraykey0123456789"],"result":"0x1"}`,
			want:  "answer id is an array"},
		{name: "a key echoed with JSON escapes in a message",
			url:   "http://node.example/v3/escaped0123456789",
			piece: "ed012345",
			body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,` +
				`"message":"bad key e\u0073caped0123456789"}}`,
			want: `RPC error -32000: "bad key [redacted]"`},
		{name: "a key holding %FF echoed in the message of a 401",
			url:    "http://node.example/v3/k%FFey0123456789",
			piece:  "ey012345",
			status: http.StatusUnauthorized,
			body: `{"jsonrpc":"2.0","id":null,"error":{"code":-32002,` +
				"\"message\":\"k\xffey0123456789\"}}",
			want: `HTTP status 401: RPC error -32002: "[redacted]"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				status := tt.status
				if status == 0 {
					status = http.StatusOK
				}
				return response(r, status, tt.body, -1), nil
			})
			err := check(mustNew(t, Config{Endpoints: named("a", tt.url), Base: base}))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Check = %v, want it to say %q", err, tt.want)
			}
			assertShowsNone(t, err, tt.piece)
		})
	}
}
