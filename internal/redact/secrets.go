package redact

import (
	"encoding/base64"
	"net/url"
	"strings"
)

// secretForms returns the forms in which the secrets of the URL raw are
// found, each in both readings: its decoded value, and the secret as
// configured, which a stray '%' before a key that holds an escape hides
// from both readings of a text. The secrets are its user name and
// password, with "user:password" and its base64 as a Basic Authorization
// header carries it; its whole path, unless "/"; its whole query; and each
// path segment and each query value that looks like a key.
func secretForms(raw string) []string {
	parts := splitURL(raw)
	var secrets []string
	var forms []string
	name, password, _ := strings.Cut(parts.userinfo, ":")
	if name != "" || password != "" {
		secrets = append(secrets, parts.userinfo, name, password)
		forms = append(forms, basicAuthForms(raw)...)
	}
	if parts.path != "/" {
		secrets = append(secrets, parts.path)
	}
	secrets = append(secrets, parts.query)
	for _, segment := range strings.Split(parts.path, "/") {
		if looksLikeKey(segment) {
			secrets = append(secrets, segment)
		}
	}
	for _, value := range queryValues(parts.query) {
		if looksLikeKey(value) {
			secrets = append(secrets, value)
		}
	}
	for _, s := range secrets {
		if s != "" {
			forms = append(forms, reading(s, true))
			forms = append(forms, reading(s, false))
		}
	}
	return forms
}

// urlParts are the parts of a URL that may hold secrets, as written.
type urlParts struct {
	userinfo string // before the last '@' of the authority; "" without one
	path     string // from the first '/' after the authority up to any '?'
	query    string // after the first '?', without it
}

// splitURL splits raw, the text of a URL, as url.Parse splits it but
// without decoding anything. The authority runs from "://" to the first '/'
// or '?'.
func splitURL(raw string) urlParts {
	_, rest, found := strings.Cut(raw, "://")
	if !found {
		rest = raw
	}
	end := strings.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	authority := rest[:end]
	var parts urlParts
	parts.path, parts.query, _ = strings.Cut(rest[end:], "?")
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		parts.userinfo = authority[:at]
	}
	return parts
}

// basicAuthForms returns the forms of the user name and password of raw as
// an Authorization header carries them: "user:password" in standard and
// URL-safe base64, each with and without its padding.
func basicAuthForms(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return nil // New refuses such a URL
	}
	password, _ := u.User.Password()
	pair := []byte(u.User.Username() + ":" + password)
	var forms []string
	for _, encoding := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		encoded := encoding.EncodeToString(pair)
		forms = append(forms, reading(encoded, false))
		forms = append(forms, reading(strings.TrimRight(encoded, "="), false))
	}
	return forms
}

// queryValues returns the values of query's pairs as written, split at '&'
// and at ';', which some servers also read as a separator; a pair without
// '=' is a bare key, its own value.
func queryValues(query string) []string {
	pairs := strings.FieldsFunc(query, func(r rune) bool { return r == '&' || r == ';' })
	values := make([]string, len(pairs))
	for i, pair := range pairs {
		_, value, found := strings.Cut(pair, "=")
		if !found {
			value = pair
		}
		values[i] = value
	}
	return values
}

// looksLikeKey reports whether a path segment or query value, as written,
// is a secret on its own. Hosted providers' keys are long and hold digits,
// while the words of URL formats (v3, mainnet, ?network=ethereum) are short
// or letters only, and redacting them would garble other providers' names.
func looksLikeKey(part string) bool {
	if len(part) >= 20 {
		return true
	}
	return len(part) >= 8 && strings.ContainsAny(part, "0123456789")
}
