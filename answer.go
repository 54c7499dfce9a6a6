package blocklag

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/yermakovsa/failnext-blocklag/internal/redact"
)

// maxBody is the largest answer a probe accepts, in bytes; a real one is under 100.
const maxBody = 4096

// parseQuantity turns the body of a 200 answer into a quantity by the rules
// of the package doc's section on probes, or fails it: an *RPCError for a
// JSON-RPC error object, else ErrBadAnswer. compactHeight takes the common
// answer without allocating.
func parseQuantity(body []byte, r *redact.Redactor) (uint64, error) {
	if height, ok := compactHeight(body); ok {
		return height, nil
	}
	return parseStrictly(body, r)
}

// compactPrefix begins the answer real nodes send, up to its digits.
const compactPrefix = `{"jsonrpc":"2.0","id":1,"result":"0x`

// compactHeight recognises the answer real nodes send, byte for byte, and
// parseStrictly, the definition of what is accepted, agrees with it.
func compactHeight(body []byte) (uint64, bool) {
	rest, ok := bytes.CutPrefix(body, []byte(compactPrefix))
	if !ok {
		return 0, false
	}
	rest = bytes.TrimSuffix(rest, []byte("\n"))
	digits, ok := bytes.CutSuffix(rest, []byte(`"}`))
	if !ok {
		return 0, false
	}
	return quantityDigits(digits)
}

// parseStrictly is parseQuantity without the shortcut for the common answer.
func parseStrictly(body []byte, r *redact.Redactor) (uint64, error) {
	if len(body) > maxBody {
		return 0, badAnswer(r, "answer larger than %d bytes", maxBody)
	}
	members, err := decodeObject(body, r)
	if err != nil {
		return 0, err
	}
	if raw := members["jsonrpc"]; !isVersion2(raw) {
		return 0, badAnswer(r, "jsonrpc member is %s, want the string \"2.0\"", describeValue(raw, r))
	}
	if raw := members["id"]; string(raw) != "1" {
		return 0, badAnswer(r, "answer id is %s, want the number 1", describeValue(raw, r))
	}
	if raw, ok := members["error"]; ok && string(raw) != "null" {
		if e := rpcError(raw, r); e != nil {
			return 0, e
		}
		return 0, badAnswer(r, "RPC error %s", describeValue(raw, r))
	}
	raw, ok := members["result"]
	if !ok {
		return 0, badAnswer(r, "answer has no result")
	}
	result, ok := jsonString(raw)
	if !ok {
		return 0, badAnswer(r, "result %s is not a string", describeValue(raw, r))
	}
	height, ok := hexQuantity(result)
	if !ok {
		shown := r.Outside(result, redact.ValueLimit)
		return 0, badAnswer(r, "result \"%s\" is not a canonical hex quantity", shown)
	}
	return height, nil
}

// hexQuantity reads text as an Ethereum quantity: "0x" and then digits that
// quantityDigits accepts.
func hexQuantity(text string) (uint64, bool) {
	digits, ok := strings.CutPrefix(text, "0x")
	if !ok {
		return 0, false
	}
	return quantityDigits([]byte(digits))
}

// quantityDigits reads the digits of an Ethereum quantity: 1 to 16
// lowercase hex digits with no leading zero, so that the value fits a
// uint64 and each value has one spelling.
func quantityDigits(digits []byte) (uint64, bool) {
	if len(digits) < 1 || len(digits) > 16 {
		return 0, false
	}
	if len(digits) > 1 && digits[0] == '0' {
		return 0, false
	}
	var height uint64
	for _, c := range digits {
		digit := strings.IndexByte("0123456789abcdef", c)
		if digit < 0 {
			return 0, false
		}
		height = height<<4 | uint64(digit)
	}
	return height, true
}

// decodeObject requires body to be exactly one JSON object, white space around
// it aside, naming no member twice, and returns its members.
func decodeObject(body []byte, r *redact.Redactor) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, badAnswer(r, "answer is not a JSON object")
	}
	members := make(map[string]json.RawMessage, 4)
	for dec.More() {
		nameStart := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil, badAnswer(r, "answer is not valid JSON")
		}
		name, _ := tok.(string) // inside an object the decoder only yields string names
		rawName := body[nameStart:dec.InputOffset()]
		rawName = rawName[bytes.IndexByte(rawName, '"'):] // after any ',' and white space
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, badAnswer(r, "answer is not valid JSON")
		}
		if _, dup := members[name]; dup {
			shown, _ := jsonString(rawName)
			return nil, badAnswer(r, "answer names member \"%s\" twice", r.Outside(shown, redact.ValueLimit))
		}
		members[name] = value
	}
	if _, err := dec.Token(); err != nil {
		return nil, badAnswer(r, "answer is not valid JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, badAnswer(r, "answer has data after the JSON object")
	}
	return members, nil
}

// rpcError returns the RPCError that a JSON-RPC error member stands for: an
// object with an integer code and, if any, a string message. It returns nil
// for any other member.
func rpcError(raw json.RawMessage, r *redact.Redactor) *RPCError {
	var object struct {
		Code    *int            `json:"code"`
		Message json.RawMessage `json:"message"`
	}
	if json.Unmarshal(raw, &object) != nil || object.Code == nil {
		return nil
	}
	message := ""
	if object.Message != nil && string(object.Message) != "null" {
		text, ok := jsonString(object.Message)
		if !ok {
			return nil
		}
		message = r.Outside(text, redact.ValueLimit)
	}
	e := &RPCError{Code: *object.Code, Message: message}
	e.msg = r.Message(e.format())
	return e
}

// errorObject reads a non-200 body as StatusError.RPC says; nil otherwise.
func errorObject(body []byte, r *redact.Redactor) *RPCError {
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
	return rpcError(members["error"], r) // nil also for a missing error member
}

// isVersion2 reports whether raw, a member's JSON text, is the string "2.0".
func isVersion2(raw json.RawMessage) bool {
	version, ok := jsonString(raw)
	return ok && version == "2.0"
}

// describeValue describes a JSON value that a provider sent, never in its own
// syntax, whose optional escapes (\/, \u0061) could spell a secret past
// redaction: a string decoded from its own bytes, and said to be one; a number,
// true, false or null as written; an object or an array by its kind alone,
// since writing it again would add escapes of its own. A nil raw is
// "missing".
func describeValue(raw json.RawMessage, r *redact.Redactor) string {
	if raw == nil {
		return "missing"
	}
	if text, ok := jsonString(raw); ok {
		return `the string "` + r.Outside(text, redact.ValueLimit) + `"`
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return `"` + r.Outside(string(raw), redact.ValueLimit) + `"`
}

// jsonString decodes raw, the JSON text of one value, when it is a string.
// Its escapes are decoded and every other byte is kept as it is, an invalid
// UTF-8 byte too, where encoding/json would write the three bytes of U+FFFD
// instead and so hide a secret that holds such a byte. A lone surrogate
// escape decodes to one '?'.
func jsonString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner), true
	}
	b := make([]byte, 0, len(inner))
	for i := 0; i < len(inner); i++ {
		if inner[i] != '\\' {
			b = append(b, inner[i])
			continue
		}
		i++
		if i == len(inner) {
			return "", false
		}
		switch inner[i] {
		case '"', '\\', '/':
			b = append(b, inner[i])
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, n := unicodeEscape(inner[i+1:])
			if n == 0 {
				return "", false
			}
			b = utf8.AppendRune(b, r)
			i += n
		default:
			return "", false
		}
	}
	return string(b), true
}

// unicodeEscape reads the rune that text, which follows a "\\u", spells: four
// hex digits, and for a surrogate pair another "\\u" and four more. It
// returns how many bytes of text that takes, 0 when they are not hex digits.
// A lone surrogate reads as '?'.
func unicodeEscape(text []byte) (rune, int) {
	first, ok := hex4(text)
	if !ok {
		return 0, 0
	}
	if !utf16.IsSurrogate(first) {
		return first, 4
	}
	if len(text) >= 10 && text[4] == '\\' && text[5] == 'u' {
		second, ok := hex4(text[6:])
		if pair := utf16.DecodeRune(first, second); ok && pair != utf8.RuneError {
			return pair, 10
		}
	}
	return '?', 4
}

// hex4 reads four hex digits at the start of text.
func hex4(text []byte) (rune, bool) {
	if len(text) < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(text[:4]), 16, 32)
	if err != nil {
		return 0, false
	}
	return rune(v), true
}
