package blocklag

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/yermakovsa/failnext-blocklag/internal/redact"
)

// infuraKey is a made-up key of Infura's shape.
const infuraKey = "9aa3d95b3bc440fa88ea12eaa4456161"

// TestMaskReadsTextAsWrittenAndDecoded pins the two readings of a text: a
// key shows as the marker whether the text writes it as configured, escaped,
// or after a '%' that the decoded reading would take for an escape. The
// expected texts are written out by hand.
func TestMaskReadsTextAsWrittenAndDecoded(t *testing.T) {
	m := mustNew(t, Config{Endpoints: named("infura", "https://mainnet.infura.io/v3/"+infuraKey)})
	for _, tt := range []struct {
		name string
		text string
		want string
	}{
		{name: "a key after a stray percent sign is masked as written",
			text: "invalid project id %" + infuraKey,
			want: "invalid project id %[redacted]"},
		{name: "a key after 100% is masked as written",
			text: "quota used: 100%" + infuraKey,
			want: "quota used: 100%[redacted]"},
		{name: "a key with escaped bytes is masked as decoded",
			text: "key " + infuraKey[:30] + "%36%31 rejected",
			want: "key [redacted] rejected"},
		{name: "the whole path is masked, escaped in either case or not",
			text: "POST /v3/" + infuraKey + " and %2Fv3%2F" + infuraKey + " and %2fv3%2f" + infuraKey,
			want: "POST [redacted] and [redacted] and [redacted]"},
		{name: "a text without a key is left as it is",
			text: "100% of 9aa3 is fine",
			want: "100% of 9aa3 is fine"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := m.Redact(errors.New(tt.text)).Error()
			if got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

// TestProviderJSONShowsNoKey pins how a provider's JSON is shown: a string
// from its own bytes, an invalid UTF-8 byte as one '?', and an object or an
// array by its kind alone, so that no echoed key escapes the mask.
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

// TestNoErrorValueHoldsASecret walks every value reachable from Check's
// error and from Status, following pointers into unexported fields as a
// debugger or an error reporter would, after one Check in which each kind of
// failure echoes keys. No string in them may hold 8 bytes of a key, and none
// may lead to the matcher that knows the keys.
func TestNoErrorValueHoldsASecret(t *testing.T) {
	providers := []struct{ id, key string }{ // each key written out by hand
		{"echo401", "k401aaaa0123456789"},
		{"rpcecho", "krpcbbbb0123456789"},
		{"badanswer", "kbadcccc0123456789"},
		{"transport", "ktrpdddd0123456789"},
		{"chain", "kchneeee0123456789"},
		{"slow", "kslwffff0123456789"},
		{"good", "kgoodggg0123456789"},
	}
	var keys []string
	var pairs []string
	for _, p := range providers {
		keys = append(keys, p.key)
		pairs = append(pairs, p.id, "http://"+p.id+".example/v3/"+p.key)
	}
	everyKey := strings.Join(keys, " ")
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		id := strings.TrimSuffix(r.URL.Host, ".example")
		if readRequest(t, r) == "eth_chainId" && id != "slow" {
			if id == "chain" {
				return response(r, 200, answer(5), -1), nil
			}
			return response(r, 200, answer(1), -1), nil
		}
		switch id {
		case "echo401":
			body := `{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"` + everyKey + `"}}`
			return response(r, 401, body, -1), nil
		case "rpcecho":
			body := `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"` + everyKey + `"}}`
			return response(r, 200, body, -1), nil
		case "badanswer":
			return response(r, 200, `{"jsonrpc":"2.0","id":1,"result":"`+everyKey+`"}`, -1), nil
		case "transport":
			return nil, fmt.Errorf("Post %q: dial failed for %s", r.URL.String(), everyKey)
		case "slow":
			<-r.Context().Done()
			return nil, fmt.Errorf("Post %q: %w", r.URL.String(), r.Context().Err())
		}
		return response(r, 200, answer(100), -1), nil
	})
	m := mustNew(t, Config{Endpoints: named(pairs...), Base: base, ChainID: 1,
		ProbeTimeout: time.Second})
	err := check(m)
	if n := len(probeErrors(t, err)); n != 6 {
		t.Fatalf("Check = %v; want six failures", err)
	}
	walker := secretWalker{t: t, seen: map[uintptr]bool{}}
	for _, key := range keys {
		for i := 0; i+8 <= len(key); i++ {
			walker.pieces = append(walker.pieces, key[i:i+8])
		}
	}
	walker.walk("Check's error", reflect.ValueOf(&err).Elem())
	st := m.Status()
	walker.walk("Status", reflect.ValueOf(&st).Elem())
	if walker.strings == 0 {
		t.Error("the walk read no string: it looked at nothing")
	}
}

// secretWalker follows every pointer, interface, slice, map and field of a
// value, exported or not, and fails t on any string that holds a piece of a
// key, or any *redact.Redactor, which could find one.
type secretWalker struct {
	t       *testing.T
	pieces  []string
	seen    map[uintptr]bool
	strings int // how many strings it read
}

func (w *secretWalker) walk(path string, v reflect.Value) {
	w.t.Helper()
	if v.Type() == reflect.TypeOf(&redact.Redactor{}) && !v.IsNil() {
		w.t.Errorf("%s leads to the Redactor", path)
	}
	switch v.Kind() {
	case reflect.String:
		w.strings++
		for _, piece := range w.pieces {
			if strings.Contains(v.String(), piece) {
				w.t.Errorf("%s holds %q: %q", path, piece, v.String())
			}
		}
	case reflect.Pointer:
		if v.IsNil() || w.seen[v.Pointer()] {
			return
		}
		w.seen[v.Pointer()] = true
		w.walk(path, v.Elem())
	case reflect.Interface:
		if !v.IsNil() {
			w.walk(path+"("+v.Elem().Type().String()+")", v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			w.walk(path+"."+v.Type().Field(i).Name, v.Field(i))
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			w.walk(fmt.Sprintf("%s[%d]", path, i), v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			w.walk(path+"[key]", k)
			w.walk(path+"[value]", v.MapIndex(k))
		}
	}
}

// TestQuotesAroundShownTextCannotCompleteASecret pins that the quotes
// blocklag writes around a transport error's text are masked with it: a
// password that ends or a user name that begins with a quote is not shown
// by the error the ProbeError unwraps to either.
func TestQuotesAroundShownTextCannotCompleteASecret(t *testing.T) {
	for _, tt := range []struct {
		name      string
		url       string
		text      string // the Base's error
		forbidden string // what no error of the chain may show
	}{
		{name: "a password that ends with a quote",
			url: "http://admin:hunter2%22@rpc.example/", text: "login as hunter2", forbidden: `hunter2"`},
		{name: "a user name that begins with a quote",
			url: "http://%22rpcadmin:pw@rpc.example/", text: "rpcadmin refused", forbidden: `"rpcadmin`},
		{name: "a password that ends with an apostrophe",
			url: "http://admin:hunter2%27@rpc.example/", text: "login as hunter2", forbidden: `hunter2"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := roundTripFunc(func(*http.Request) (*http.Response, error) {
				return nil, errors.New(tt.text)
			})
			err := check(mustNew(t, Config{Endpoints: named("a", tt.url), Base: base}))
			if err == nil {
				t.Fatal("Check succeeded; want the Base's error")
			}
			assertShowsNone(t, err, tt.forbidden)
		})
	}
}
