package blocklag

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxBody is the largest answer a probe accepts, in bytes; a real one is under 100.
const maxBody = 4096

// parseQuantity turns a 200 answer's body into a quantity by Check's rules, or
// fails it: an *RPCError for a JSON-RPC error object, else ErrBadAnswer.
// compactHeight takes the common answer without allocating.
func parseQuantity(body []byte, s *matcher) (uint64, error) {
	if height, ok := compactHeight(body); ok {
		return height, nil
	}
	return parseStrictly(body, s)
}

// compactPrefix begins the answer real nodes send, up to its digits.
const compactPrefix = `{"jsonrpc":"2.0","id":1,"result":"0x`

// compactHeight recognises the answer real nodes send, byte for byte, and
// parseStrictly, the definition of what is accepted, agrees with it.
func compactHeight(body []byte) (uint64, bool) {
	if len(body) < len(compactPrefix) || string(body[:len(compactPrefix)]) != compactPrefix {
		return 0, false
	}
	rest := body[len(compactPrefix):]
	rest = bytes.TrimSuffix(rest, []byte("\n"))
	n := len(rest) - len(`"}`)
	if n < 1 || n > 16 || string(rest[n:]) != `"}` || (n > 1 && rest[0] == '0') {
		return 0, false
	}
	var height uint64
	for _, c := range rest[:n] {
		digit := strings.IndexByte("0123456789abcdef", c)
		if digit < 0 {
			return 0, false
		}
		height = height<<4 | uint64(digit)
	}
	return height, true
}

// parseStrictly is parseQuantity without the shortcut for the common answer.
func parseStrictly(body []byte, s *matcher) (uint64, error) {
	if len(body) > maxBody {
		return 0, badAnswer(s, "answer larger than %d bytes", maxBody)
	}
	members, err := decodeObject(body, s)
	if err != nil {
		return 0, err
	}
	if raw := members["jsonrpc"]; !isVersion2(raw) {
		return 0, badAnswer(s, "jsonrpc member is %s, want the string \"2.0\"", shownMember(raw, s))
	}
	if raw := members["id"]; string(raw) != "1" {
		return 0, badAnswer(s, "answer id is %s, want the number 1", shownMember(raw, s))
	}
	if raw, ok := members["error"]; ok && string(raw) != "null" {
		if e, hasMessage := rpcError(raw, s); hasMessage {
			return 0, e
		}
		return 0, badAnswer(s, "RPC error %s", shownMember(raw, s))
	}
	raw, ok := members["result"]
	if !ok {
		return 0, badAnswer(s, "answer has no result")
	}
	var result string
	if !isString(raw) || json.Unmarshal(raw, &result) != nil {
		return 0, badAnswer(s, "result %s is not a string", shownMember(raw, s))
	}
	digits, ok := strings.CutPrefix(result, "0x")
	if !ok || digits == "" || len(digits) > 16 || (len(digits) > 1 && digits[0] == '0') ||
		strings.Trim(digits, "0123456789abcdef") != "" {
		return 0, badAnswer(s, "result %s is not a canonical hex quantity", `"`+s.show(result, maxQuoted)+`"`)
	}
	height, _ := strconv.ParseUint(digits, 16, 64) // cannot fail after the checks above
	return height, nil
}

// decodeObject requires body to be exactly one JSON object, white space around
// it aside, naming no member twice, and returns its members.
func decodeObject(body []byte, s *matcher) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, badAnswer(s, "answer is not a JSON object")
	}
	members := make(map[string]json.RawMessage, 4)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, badAnswer(s, "answer is not valid JSON")
		}
		name, _ := tok.(string) // inside an object the decoder only yields string names
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, badAnswer(s, "answer is not valid JSON")
		}
		if _, dup := members[name]; dup {
			return nil, badAnswer(s, "answer names member %s twice", `"`+s.show(name, maxQuoted)+`"`)
		}
		members[name] = value
	}
	if _, err := dec.Token(); err != nil {
		return nil, badAnswer(s, "answer is not valid JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, badAnswer(s, "answer has data after the JSON object")
	}
	return members, nil
}

// rpcError decodes a JSON-RPC error member (an integer code, maybe a string
// message) and reports whether it had a message; nil for anything else.
func rpcError(raw json.RawMessage, s *matcher) (*RPCError, bool) {
	var e struct {
		Code    *int    `json:"code"`
		Message *string `json:"message"`
	}
	if json.Unmarshal(raw, &e) != nil || e.Code == nil {
		return nil, false
	}
	var message string
	if e.Message != nil {
		message = *e.Message
	}
	return &RPCError{Code: *e.Code, Message: s.show(message, maxQuoted), secrets: s}, e.Message != nil
}

// errorObject reads a non-200 body as StatusError.RPC says; nil otherwise.
func errorObject(body []byte, s *matcher) *RPCError {
	// Most bodies that are not JSON (an HTML page, plain text) fail here,
	// before a decoder is made.
	if len(body) > maxBody || !bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("{")) {
		return nil
	}
	members, err := decodeObject(body, nil)
	if err != nil || !isVersion2(members["jsonrpc"]) {
		return nil
	}
	if id := string(members["id"]); id != "1" && id != "null" {
		return nil
	}
	e, _ := rpcError(members["error"], s) // nil also for a missing error member
	return e
}

// isVersion2 reports whether raw, a member's JSON text, is the string "2.0";
// the plain form that providers send is compared without decoding.
func isVersion2(raw json.RawMessage) bool {
	var version string
	return string(raw) == `"2.0"` || isString(raw) && json.Unmarshal(raw, &version) == nil && version == "2.0"
}

func isString(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '"' }

// shownMember shows a member as outside text, never in the provider's own JSON
// syntax, whose optional escapes could spell a secret past the mask: a string
// decoded (and said to be one), anything else as encoding/json writes it again,
// numbers with their digits; or it says "missing".
func shownMember(raw json.RawMessage, s *matcher) string {
	if raw == nil {
		return "missing"
	}
	var value any
	var b strings.Builder
	enc, dec := json.NewEncoder(&b), json.NewDecoder(bytes.NewReader(raw))
	enc.SetEscapeHTML(false)
	dec.UseNumber()
	if dec.Decode(&value) != nil || enc.Encode(value) != nil { // cannot happen: raw is one JSON value
		return "unreadable"
	} else if str, ok := value.(string); ok {
		return `the string "` + s.show(str, maxQuoted) + `"`
	}
	return `"` + s.show(strings.TrimSuffix(b.String(), "\n"), maxQuoted) + `"`
}

// maxQuoted is how many bytes a message gives one value that a provider sent.
const maxQuoted = 100

// badAnswer is the failure of an answer that breaks a rule, in words that
// format and args give, the message masked.
func badAnswer(s *matcher, format string, args ...any) error {
	return &badAnswerError{msg: s.mask(fmt.Sprintf(format, args...))}
}

type badAnswerError struct{ msg string }

func (e *badAnswerError) Error() string { return e.msg }

// Is makes every badAnswerError match ErrBadAnswer.
func (e *badAnswerError) Is(target error) bool { return target == ErrBadAnswer }
