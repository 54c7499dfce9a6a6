package blocklag

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Every request is a POST to the URL as configured, with JSON headers and
// one of two exact bodies; the chain ID request goes out only with ChainID
// set, and only until the provider has confirmed.
func TestProbeRequest(t *testing.T) {
	const (
		height = `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`
		chain  = `{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}`
	)
	tests := []struct {
		name    string
		chainID uint64
		want    map[string]int // how many times each body is sent over three Checks of two endpoints
	}{
		{"without ChainID only height probes are sent", 0, map[string]int{height: 6}},
		{"with ChainID each endpoint is asked its chain once, in the first Check", 1, map[string]int{height: 6, chain: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			sent := map[string]int{}
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.Method != http.MethodPost:
					t.Errorf("method %s, want POST", r.Method)
				case r.URL.RequestURI() != "/v3/key?apikey=k&x=1":
					t.Errorf("request URI %s, want the configured one", r.URL.RequestURI())
				case r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Accept") != "application/json":
					t.Errorf("headers %v lack the JSON content type or accept", r.Header)
				}
				body, _ := io.ReadAll(r.Body)
				mu.Lock()
				sent[string(body)]++
				mu.Unlock()
				io.WriteString(w, answer(json.RawMessage("1"), 1)) // height 1, and chain ID 1
			})
			url := srv.URL + "/v3/key?apikey=k&x=1"
			m := mustNew(t, Config{Endpoints: named("a", url, "b", url), ChainID: tt.chainID})
			for range 3 {
				if err := check(m); err != nil {
					t.Fatal(err)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if !reflect.DeepEqual(sent, tt.want) {
				t.Errorf("sent %v, want exactly %v", sent, tt.want)
			}
		})
	}
}

func TestFailedProbeIsNotRetried(t *testing.T) {
	var hits atomic.Int32
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	m := mustNew(t, Config{Endpoints: named("a", srv.URL)})
	if check(m) == nil {
		t.Fatal("a 503 answer was accepted")
	}
	if hits.Load() != 1 {
		t.Errorf("provider got %d requests, want 1", hits.Load())
	}
}

// valid is the answer of a provider at height 100.
const valid = `{"jsonrpc":"2.0","id":1,"result":"0x64"}`

// The answer rules. The probe always sends id 1, so a provider that answers
// every request with id 1, whatever the request carried, is judged on its
// height; any other id fails it.
func TestJudge(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		height uint64 // the height read, when the answer is accepted
		want   string // "" means accepted, else part of the error
	}{
		{name: "a canonical answer", status: 200, body: valid, height: 100},
		{name: "height zero", status: 200, body: `{"jsonrpc":"2.0","id":1,"result":"0x0"}`, height: 0},
		{name: "the largest height", status: 200, body: `{"jsonrpc":"2.0","id":1,"result":"0xffffffffffffffff"}`, height: 1<<64 - 1},
		{name: "white space around and inside the object", status: 200, body: "\r\n\t {\"jsonrpc\" : \"2.0\" , \"id\" : 1 , \"result\" : \"0x64\" } \n", height: 100},
		{name: "a null error member", status: 200, body: `{"jsonrpc":"2.0","id":1,"result":"0x64","error":null}`, height: 100},
		{name: "id before jsonrpc", status: 200, body: `{"id":1,"jsonrpc":"2.0","result":"0x64"}`, height: 100},
		{name: "extra members", status: 200, body: `{"jsonrpc":"2.0","id":1,"result":"0x64","extra":{"a":[1,2]},"note":"x"}`, height: 100},
		{name: "a body of exactly 4096 bytes", status: 200, body: valid + strings.Repeat(" ", maxBody-len(valid)), height: 100},

		{name: "status 201", status: 201, body: valid, want: "HTTP status 201"},
		{name: "status 204", status: 204, want: "HTTP status 204"},
		{name: "status 404", status: 404, body: "not found", want: "HTTP status 404"},
		{name: "status 429", status: 429, body: valid, want: "HTTP status 429"},
		{name: "status 500", status: 500, body: valid, want: "HTTP status 500"},
		{name: "status 503", status: 503, want: "HTTP status 503"},

		{name: "an empty body", status: 200, body: "", want: "not a JSON object"},
		{name: "null", status: 200, body: "null", want: "not a JSON object"},
		{name: "a string", status: 200, body: `"0x64"`, want: "not a JSON object"},
		{name: "a number", status: 200, body: "100", want: "not a JSON object"},
		{name: "an array", status: 200, body: `["0x64"]`, want: "not a JSON object"},
		{name: "a batch holding a valid answer", status: 200, body: "[" + valid + "]", want: "not a JSON object"},
		{name: "an HTML page", status: 200, body: "<!DOCTYPE html><html><body>Bad gateway</body></html>", want: "not a JSON object"},
		{name: "invalid JSON", status: 200, body: `{"jsonrpc":2.0"}`, want: "not valid JSON"},
		{name: "truncated JSON", status: 200, body: `{"jsonrpc":"2.0","id":1,"result":"0x6`, want: "not valid JSON"},
		{name: "trailing bytes", status: 200, body: valid + "garbage", want: "after the JSON object"},
		{name: "two objects", status: 200, body: valid + valid, want: "after the JSON object"},
		{name: "a member named twice", status: 200, body: `{"jsonrpc":"2.0","id":1,"result":"0x64","result":"0x1"}`, want: `answer names member "result" twice`},
		{name: "a body of exactly 4097 bytes", status: 200, body: valid + strings.Repeat(" ", maxBody+1-len(valid)), want: "larger than 4096"},

		{name: "jsonrpc missing", status: 200, body: `{"id":1,"result":"0x64"}`, want: "jsonrpc member is missing"},
		{name: "jsonrpc 1.0", status: 200, body: `{"jsonrpc":"1.0","id":1,"result":"0x64"}`, want: `jsonrpc member is "\"1.0\""`},
		{name: "jsonrpc as a number", status: 200, body: `{"jsonrpc":2.0,"id":1,"result":"0x64"}`, want: `jsonrpc member is "2.0"`},

		{name: "id the string \"1\"", status: 200, body: `{"jsonrpc":"2.0","id":"1","result":"0x64"}`, want: `answer id is "\"1\""`},
		{name: "id the number 2", status: 200, body: `{"jsonrpc":"2.0","id":2,"result":"0x64"}`, want: `answer id is "2"`},
		{name: "id the number 1.0", status: 200, body: `{"jsonrpc":"2.0","id":1.0,"result":"0x64"}`, want: `answer id is "1.0"`},
		{name: "id the number 1e0", status: 200, body: `{"jsonrpc":"2.0","id":1e0,"result":"0x64"}`, want: `answer id is "1e0"`},
		{name: "id null", status: 200, body: `{"jsonrpc":"2.0","id":null,"result":"0x64"}`, want: `answer id is "null"`},
		{name: "id missing", status: 200, body: `{"jsonrpc":"2.0","result":"0x64"}`, want: "answer id is missing"},

		{name: "an RPC error", status: 200, body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"limit exceeded"}}`, want: `RPC error -32005: "limit exceeded"`},
		{name: "an RPC error together with a result", status: 200, body: `{"jsonrpc":"2.0","id":1,"result":"0x64","error":{"code":-32000,"message":"header not found"}}`, want: `RPC error -32000: "header not found"`},
		{name: "a malformed error member", status: 200, body: `{"jsonrpc":"2.0","id":1,"error":"nope"}`, want: `RPC error "\"nope\""`},

		{name: "result missing", status: 200, body: `{"jsonrpc":"2.0","id":1}`, want: "no result"},
		{name: "result null", status: 200, body: `{"jsonrpc":"2.0","id":1,"result":null}`, want: `result "null" is not a string`},
		{name: "result a JSON number", status: 200, body: `{"jsonrpc":"2.0","id":1,"result":100}`, want: `result "100" is not a string`},
		{name: "result 0x", status: 200, body: `{"jsonrpc":"2.0","id":1,"result":"0x"}`, want: "canonical"},
		{name: "result 0x00", status: 200, body: `{"jsonrpc":"2.0","id":1,"result":"0x00"}`, want: "canonical"},
		{name: "result with a leading zero", status: 200, body: `{"jsonrpc":"2.0","id":1,"result":"0x01"}`, want: "canonical"},
		{name: "result with an uppercase X", status: 200, body: `{"jsonrpc":"2.0","id":1,"result":"0X64"}`, want: "canonical"},
		{name: "result with an uppercase digit", status: 200, body: `{"jsonrpc":"2.0","id":1,"result":"0x6E"}`, want: "canonical"},
		{name: "result in decimal", status: 200, body: `{"jsonrpc":"2.0","id":1,"result":"100"}`, want: "canonical"},
		{name: "result -0x1", status: 200, body: `{"jsonrpc":"2.0","id":1,"result":"-0x1"}`, want: "canonical"},
		{name: "result with a leading space", status: 200, body: `{"jsonrpc":"2.0","id":1,"result":" 0x64"}`, want: "canonical"},
		{name: "result with a trailing space", status: 200, body: `{"jsonrpc":"2.0","id":1,"result":"0x64 "}`, want: "canonical"},
		{name: "result of 17 hex digits", status: 200, body: `{"jsonrpc":"2.0","id":1,"result":"0x10000000000000000"}`, want: "canonical"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			height, err := judge(tt.status, []byte(tt.body))
			if tt.want == "" {
				if err != nil || height != tt.height {
					t.Fatalf("judge = %d, %v; want %d accepted", height, err, tt.height)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("judge = %d, %v; want an error saying %q", height, err, tt.want)
			}
		})
	}
}

// The common answer is recognised byte for byte, and only in its exact
// compact form; every other body is left to the full parser, which judges
// it as before. A recognised body is one the full parser accepts with the
// same height.
func TestCompactAnswerShortcut(t *testing.T) {
	const prefix = `{"jsonrpc":"2.0","id":1,"result":"0x`
	tests := []struct {
		name       string
		body       string
		recognised bool
		height     uint64 // when recognised
	}{
		{"a compact answer is recognised", prefix + `1521a3f"}`, true, 0x1521a3f},
		{"a compact answer with a final newline is recognised", prefix + "1521a3f\"}\n", true, 0x1521a3f},
		{"height zero is recognised", prefix + `0"}`, true, 0},
		{"sixteen digits are recognised", prefix + `ffffffffffffffff"}`, true, 1<<64 - 1},
		{"one digit is recognised", prefix + `a"}` + "\n", true, 10},
		{"a leading zero is left to the full parser", prefix + `01"}`, false, 0},
		{"0x00 is left to the full parser", prefix + `00"}`, false, 0},
		{"no digits are left to the full parser", prefix + `"}`, false, 0},
		{"an uppercase digit is left to the full parser", prefix + `1A"}`, false, 0},
		{"an uppercase X is left to the full parser", `{"jsonrpc":"2.0","id":1,"result":"0X1"}`, false, 0},
		{"seventeen digits are left to the full parser", prefix + `10000000000000000"}`, false, 0},
		{"spaces between members are left to the full parser", `{"jsonrpc":"2.0", "id":1, "result":"0x1"}`, false, 0},
		{"a space before the newline is left to the full parser", prefix + "1\"} \n", false, 0},
		{"a carriage return and newline are left to the full parser", prefix + "1\"}\r\n", false, 0},
		{"two newlines are left to the full parser", prefix + "1\"}\n\n", false, 0},
		{"garbage after the newline is left to the full parser", prefix + "1\"}\nx", false, 0},
		{"a second object is left to the full parser", prefix + `1"}` + prefix + `2"}`, false, 0},
		{"id 01 is left to the full parser", `{"jsonrpc":"2.0","id":01,"result":"0x1"}`, false, 0},
		{"id 2 is left to the full parser", `{"jsonrpc":"2.0","id":2,"result":"0x1"}`, false, 0},
		{"another member order is left to the full parser", `{"id":1,"jsonrpc":"2.0","result":"0x1"}`, false, 0},
		{"an error member after the result is left to the full parser", prefix + `1","error":{"code":1,"message":"m"}}`, false, 0},
		{"a quote inside the digits is left to the full parser", prefix + `1"}"}`, false, 0},
		{"a truncated answer is left to the full parser", prefix + `1"`, false, 0},
		{"an empty body is left to the full parser", "", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			height, recognised := compactHeight([]byte(tt.body))
			if recognised != tt.recognised || height != tt.height {
				t.Fatalf("compactHeight = %d, %v; want %d, %v", height, recognised, tt.height, tt.recognised)
			}
			strict, strictErr := judgeStrictly(http.StatusOK, []byte(tt.body))
			if recognised && (strictErr != nil || strict != height) {
				t.Fatalf("the full parser says %d, %v for a recognised answer of height %d", strict, strictErr, height)
			}
			got, err := judge(http.StatusOK, []byte(tt.body))
			if got != strict || errorText(err) != errorText(strictErr) {
				t.Fatalf("judge = %d, %v; the full parser says %d, %v", got, err, strict, strictErr)
			}
		})
	}
}

// errorText is err's message, or "" for nil.
func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Judging the common answer allocates nothing.
func TestCompactAnswerIsJudgedWithoutAllocating(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"result":"0x1521a3f"}` + "\n")
	allocs := testing.AllocsPerRun(100, func() {
		if height, err := judge(http.StatusOK, body); err != nil || height != 0x1521a3f {
			t.Fatalf("judge = %d, %v", height, err)
		}
	})
	if allocs != 0 {
		t.Errorf("judging the common answer allocates %v times", allocs)
	}
}

// A probe's request, built from the URL that New parsed once, is the
// request built from the configured URL string: the same fields and the
// same bytes on the wire.
func TestProbeRequestIsWhatNewRequestBuilds(t *testing.T) {
	tests := []struct{ name, url string }{
		{"a plain URL", "http://127.0.0.1:8545"},
		{"a URL with a path and a query", "https://rpc.example/v3/key?apikey=k&x=1"},
		{"a URL with userinfo", "https://user:p%40ss@rpc.example/path"},
		{"a URL with an empty port", "http://rpc.example:/"},
		{"an IPv6 URL", "http://[::1]:8545/"},
		{"a URL with escapes in its path", "http://rpc.example/a%2Fb/c d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eps, err := (&Config{Endpoints: named("p", tt.url)}).validate()
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			got := newRequest(ctx, eps[0].target, blockNumberRequest)
			want, err := http.NewRequestWithContext(ctx, http.MethodPost, tt.url, strings.NewReader(blockNumberRequest))
			if err != nil {
				t.Fatal(err)
			}
			want.Header.Set("Content-Type", "application/json")
			want.Header.Set("Accept", "application/json")
			gotFields, wantFields := *got, *want
			gotFields.Body, gotFields.GetBody, wantFields.Body, wantFields.GetBody = nil, nil, nil, nil
			if !reflect.DeepEqual(gotFields.WithContext(ctx), wantFields.WithContext(ctx)) {
				t.Errorf("request\n%+v\nwant\n%+v", gotFields, wantFields)
			}
			if g, w := wire(t, got), wire(t, want); g != w {
				t.Errorf("on the wire:\n%q\nwant\n%q", g, w)
			}
		})
	}
}

// wire is the request as Request.Write sends it.
func wire(t *testing.T, req *http.Request) string {
	t.Helper()
	var out bytes.Buffer
	if err := req.Write(&out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// Each probe's request owns its URL and headers, so that a Base changing
// one request changes no later one.
func TestProbeRequestsShareNoURLOrHeaders(t *testing.T) {
	eps, err := (&Config{Endpoints: named("p", "http://rpc.example/key")}).validate()
	if err != nil {
		t.Fatal(err)
	}
	first := newRequest(context.Background(), eps[0].target, blockNumberRequest)
	first.URL.Path = "/changed"
	first.Header["Accept"][0] = "text/plain"
	first.Header.Set("Content-Type", "text/plain")
	second := newRequest(context.Background(), eps[0].target, blockNumberRequest)
	if second.URL.Path != "/key" || second.Header.Get("Accept") != "application/json" || second.Header.Get("Content-Type") != "application/json" {
		t.Errorf("a later request has URL %s and headers %v", second.URL, second.Header)
	}
}

// readAnswer reads a body whole when it fits the buffer, stops once the
// buffer is full without reading further, treats the end of the body as
// success and any other read error as a failure.
func TestReadAnswer(t *testing.T) {
	failure := errors.New("connection reset")
	tests := []struct {
		name    string
		body    io.Reader
		size    int // of the buffer
		want    string
		wantErr error
	}{
		{"an empty body is read as empty", strings.NewReader(""), 8, "", nil},
		{"a short body is read whole", strings.NewReader("abc"), 8, "abc", nil},
		{"a body that fills the buffer is read whole", strings.NewReader("abcdefgh"), 8, "abcdefgh", nil},
		{"a longer body fills the buffer", strings.NewReader("abcdefghij"), 8, "abcdefgh", nil},
		{"a body read one byte at a time is read whole", &trickle{text: "abcde"}, 8, "abcde", nil},
		{"a body that ends with its last bytes is read whole", &trickle{text: "abc", eofWithData: true}, 8, "abc", nil},
		{"a read error fails", &trickle{text: "abc", err: failure}, 8, "abc", failure},
		{"an unexpected EOF from the body fails", &trickle{text: "abc", err: io.ErrUnexpectedEOF}, 8, "abc", io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf := make([]byte, tt.size)
			n, err := readAnswer(tt.body, buf)
			if string(buf[:n]) != tt.want || !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("readAnswer = %q, %v; want %q, %v", buf[:n], err, tt.want, tt.wantErr)
			}
		})
	}
	t.Run("a body larger than the buffer is read no further", func(t *testing.T) {
		body := &trickle{text: strings.Repeat("x", 100)}
		if n, err := readAnswer(body, make([]byte, 10)); n != 10 || err != nil || body.read != 10 {
			t.Fatalf("readAnswer = %d, %v after %d bytes were read from the body; want 10 bytes read", n, err, body.read)
		}
	})
}

// trickle gives its text one byte per Read, then err (io.EOF when nil),
// either with the last byte (eofWithData) or on the Read after it.
type trickle struct {
	text        string
	err         error
	eofWithData bool
	read        int
}

func (r *trickle) Read(p []byte) (int, error) {
	end := r.err
	if end == nil {
		end = io.EOF
	}
	if r.read == len(r.text) {
		return 0, end
	}
	n := copy(p[:min(len(p), 1)], r.text[r.read:])
	r.read += n
	if r.read == len(r.text) && r.eofWithData {
		return n, end
	}
	return n, nil
}
