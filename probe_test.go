package blocklag

import (
	"encoding/json"
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
