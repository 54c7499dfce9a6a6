package blocklag

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxBody is the largest answer a probe accepts, in bytes. A real
// eth_blockNumber answer is under 100 bytes; the limit keeps a broken or
// hostile provider from making a Check read or hold more than this.
const maxBody = 4096

// judge turns the body of a 200 answer into a quantity, accepting only a
// single JSON-RPC 2.0 success object with id 1 that carries a canonical
// QUANTITY. Everything else is an error that says why, showing what the
// provider sent only through a refusal. The answer real nodes send is
// recognised without allocating; judgeStrictly decides every other answer,
// and is the definition of what is accepted.
func judge(body []byte) (uint64, *refusal) {
	if height, ok := compactHeight(body); ok {
		return height, nil
	}
	return judgeStrictly(body)
}

// compactPrefix is how the answer real nodes send begins, up to the digits
// of its result.
const compactPrefix = `{"jsonrpc":"2.0","id":1,"result":"0x`

// compactHeight recognises the answer real nodes send, byte for byte:
// compactPrefix, a canonical quantity's digits, `"}`, then optionally one
// newline. Every body it recognises, judgeStrictly accepts with the same
// height; for any other body it reports false, even for one that
// judgeStrictly accepts.
func compactHeight(body []byte) (uint64, bool) {
	if len(body) < len(compactPrefix) || string(body[:len(compactPrefix)]) != compactPrefix {
		return 0, false
	}
	rest := body[len(compactPrefix):]
	if n := len(rest); n > 0 && rest[n-1] == '\n' {
		rest = rest[:n-1]
	}
	n := len(rest) - len(`"}`)
	if n < 1 || n > 16 || string(rest[n:]) != `"}` || (n > 1 && rest[0] == '0') {
		return 0, false
	}
	var height uint64
	for _, c := range rest[:n] {
		switch {
		case '0' <= c && c <= '9':
			height = height<<4 | uint64(c-'0')
		case 'a' <= c && c <= 'f':
			height = height<<4 | uint64(c-'a'+10)
		default:
			return 0, false
		}
	}
	return height, true
}

// judgeStrictly is judge without the shortcut for the common answer: it
// decodes any body as JSON and checks every rule, so its verdict, and its
// error when it refuses, are judge's.
func judgeStrictly(body []byte) (uint64, *refusal) {
	if len(body) > maxBody {
		return 0, refuse(fmt.Sprintf("answer larger than %d bytes", maxBody))
	}
	members, err := decodeObject(body)
	if err != nil {
		return 0, err
	}
	if raw := members["jsonrpc"]; !isVersion2(raw) {
		return 0, refuseMember("jsonrpc member is %s, want the string \"2.0\"", raw)
	}
	if raw := members["id"]; string(raw) != "1" {
		return 0, refuseMember("answer id is %s, want the number 1", raw)
	}
	if raw, ok := members["error"]; ok && string(raw) != "null" {
		return 0, rpcError(raw)
	}
	raw, ok := members["result"]
	if !ok {
		return 0, refuse("answer has no result")
	}
	var result string
	if !isString(raw) || json.Unmarshal(raw, &result) != nil {
		return 0, refuseMember("result %s is not a string", raw)
	}
	return parseQuantity(result)
}

// decodeObject requires body to be exactly one JSON object, optionally
// surrounded by white space, with no member named twice, and returns its
// members undecoded.
func decodeObject(body []byte) (map[string]json.RawMessage, *refusal) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, refuse("answer is not a JSON object")
	}
	members := make(map[string]json.RawMessage, 4)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, refuse("answer is not valid JSON")
		}
		name, _ := tok.(string) // inside an object the decoder only yields string names
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, refuse("answer is not valid JSON")
		}
		if _, dup := members[name]; dup {
			return nil, refuse("answer names member %s twice", name)
		}
		members[name] = value
	}
	if _, err := dec.Token(); err != nil {
		return nil, refuse("answer is not valid JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, refuse("answer has data after the JSON object")
	}
	return members, nil
}

// rpcError describes the error member of a 200 answer, keeping its code
// and message. One without both is malformed.
func rpcError(raw json.RawMessage) *refusal {
	e, ok := errorMember(raw)
	if !ok || e.Message == nil {
		return refuseMember("RPC error %s", raw)
	}
	return e.refusal()
}

// jsonRPCError is a JSON-RPC error member as errorMember decodes it.
type jsonRPCError struct {
	Code    *int    `json:"code"`
	Message *string `json:"message"`
}

// errorMember decodes a JSON-RPC error member: an object whose code is an
// int and whose message, when it has one, is a string (Message is nil when
// it has none). It reports false for anything else, null included.
func errorMember(raw json.RawMessage) (jsonRPCError, bool) {
	var e jsonRPCError
	ok := json.Unmarshal(raw, &e) == nil && e.Code != nil
	return e, ok
}

// refusal is e as the refusal that resolveRPC turns into an RPCError; a
// missing message is an empty one.
func (e jsonRPCError) refusal() *refusal {
	var message string
	if e.Message != nil {
		message = *e.Message
	}
	return &refusal{format: "%s", values: []string{message}, rpc: true, code: *e.Code}
}

// errorObject reads the body of an answer whose status is not 200 as a
// JSON-RPC 2.0 error object: exactly one JSON object, within maxBody,
// whose "jsonrpc" is the string "2.0", whose "id" is the number 1 or null
// (gateways answer errors with a null id), and whose "error" is an object
// with an integer "code" and, if it has one, a string "message". It
// returns that error as a refusal, which only resolveRPC turns
// into an RPCError, and nil for any other body.
func errorObject(body []byte) *refusal {
	// Most bodies that are not JSON (an HTML page, plain text) fail here,
	// before a decoder is made.
	if len(body) > maxBody || !bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("{")) {
		return nil
	}
	members, refused := decodeObject(body)
	if refused != nil {
		return nil
	}
	if !isVersion2(members["jsonrpc"]) {
		return nil
	}
	if id := string(members["id"]); id != "1" && id != "null" {
		return nil
	}
	e, ok := errorMember(members["error"]) // false also for a missing error member, or a null one
	if !ok {
		return nil
	}
	return e.refusal()
}

// parseQuantity accepts only the canonical Ethereum QUANTITY form: "0x"
// then lowercase hex digits without leading zeros, "0x0" for zero, at most
// 16 digits so that the value fits in a uint64.
func parseQuantity(s string) (uint64, *refusal) {
	digits, ok := strings.CutPrefix(s, "0x")
	if !ok || digits == "" || len(digits) > 16 || (len(digits) > 1 && digits[0] == '0') ||
		strings.Trim(digits, "0123456789abcdef") != "" {
		return 0, refuse("result %s is not a canonical hex quantity", s)
	}
	height, _ := strconv.ParseUint(digits, 16, 64) // cannot fail after the checks above
	return height, nil
}

// isVersion2 reports whether raw, a member's undecoded JSON text, is the
// string "2.0", written plainly or with escapes. The plain form, which
// every provider sends, is compared without decoding, so that judging the
// body of an error answer costs no more than judging a 200 answer.
func isVersion2(raw json.RawMessage) bool {
	if string(raw) == `"2.0"` {
		return true
	}
	var version string
	return isString(raw) && json.Unmarshal(raw, &version) == nil && version == "2.0"
}

func isString(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '"' }

// refuseMember is refuse for a member's undecoded JSON text, which it shows
// as "missing" when the member is absent.
func refuseMember(format string, raw json.RawMessage) *refusal {
	if raw == nil {
		return refuse(fmt.Sprintf(format, "missing"))
	}
	return &refusal{format: format, values: []string{string(raw)}, json: true}
}

// refusal is an answer judged unacceptable, as judge returns it: a message
// whose %s verbs show values the provider sent. It keeps the values raw
// until the message is rendered, so that every endpoint's secrets, which a
// provider may echo back, can be masked in them before they are clipped.
// It is no error itself: resolve makes the one a probe reports, so no
// value can reach a message unmasked.
type refusal struct {
	format string   // one %s for each value; without values, the whole message
	values []string // as the provider sent them
	json   bool     // the values are undecoded JSON text
	rpc    bool     // a JSON-RPC error object: values holds its message
	code   int      // the JSON-RPC error's code, when rpc is set
}

func refuse(format string, values ...string) *refusal {
	return &refusal{format: format, values: values}
}

// resolve renders r with the secrets in s masked, as the error a probe
// reports: an *RPCError for a JSON-RPC error object, and otherwise an error
// that matches ErrBadAnswer.
func (r *refusal) resolve(s *secrets) error {
	if r.rpc {
		return r.resolveRPC(s)
	}
	if len(r.values) == 0 {
		return &badAnswer{msg: s.shown(r.format)}
	}
	shown := make([]any, len(r.values))
	for i, v := range r.values {
		if r.json && decodedHolds(v, s) {
			v = marker
		}
		shown[i] = s.quote(v, maxQuoted)
	}
	return &badAnswer{msg: s.shown(fmt.Sprintf(r.format, shown...))}
}

// resolveRPC is resolve for a JSON-RPC error object (r.rpc is set): it
// renders r as an RPCError, with the secrets in s masked. Message is a
// text field in its final form, as a message is, so it is shown as one:
// masked once more as it reads, clipping dots included (they may complete
// a secret that ends in a dot), and as a log handler would quote it.
func (r *refusal) resolveRPC(s *secrets) *RPCError {
	return &RPCError{Code: r.code, Message: s.shown(s.quoted(r.values[0], maxQuoted)), secrets: s}
}

// badAnswer is an answer that breaks the rules a probe checks, said in
// words that are already safe to show.
type badAnswer struct{ msg string }

func (e *badAnswer) Error() string { return e.msg }

// Is makes every badAnswer match ErrBadAnswer.
func (e *badAnswer) Is(target error) bool { return target == ErrBadAnswer }

// decodedHolds reports whether any string, member name or number in the
// JSON text value, once decoded, holds one of forms.
func decodedHolds(value string, s *secrets) bool {
	if s == nil {
		return false // nothing to look for: the common case of Error
	}
	dec := json.NewDecoder(strings.NewReader(value))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return false // the end of value; judge only refuses valid JSON values
		}
		var text string
		switch t := tok.(type) {
		case string:
			text = t
		case json.Number:
			text = t.String()
		default:
			continue
		}
		if s.holds(text) {
			return true
		}
	}
}
