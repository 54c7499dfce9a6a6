package blocklag

import (
	"encoding/base64"
	"net/url"
	"strings"
)

// secretForms returns the canonical forms of the secrets that the URL raw
// holds, as ProbeError's doc lists them: its user name and password, with
// "user:password" and its base64 as a Basic Authorization header carries it;
// its whole path, unless "/"; its whole query; and each path segment and each
// query value that looks like a key.
func secretForms(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil // New accepts no such URL
	}
	parts := splitURL(raw)
	var secrets []string
	var forms []string
	name, password, _ := strings.Cut(parts.userinfo, ":")
	if name != "" || password != "" {
		secrets = append(secrets, parts.userinfo, name, password)
		forms = append(forms, basicAuthForms(u.User)...)
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
			forms = append(forms, canonical(s))
		}
	}
	return forms
}

// basicAuthForms returns the canonical forms of the user name and password
// as an Authorization header carries them: "user:password" in standard and
// URL-safe base64, each with and without its padding.
func basicAuthForms(user *url.Userinfo) []string {
	password, _ := user.Password()
	pair := []byte(user.Username() + ":" + password)
	var forms []string
	for _, encoding := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		encoded := encoding.EncodeToString(pair)
		forms = append(forms, canonical(encoded))
		forms = append(forms, canonical(strings.TrimRight(encoded, "=")))
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
// or letters only, and masking them would garble other providers' names.
func looksLikeKey(part string) bool {
	if len(part) >= 20 {
		return true
	}
	return len(part) >= 8 && strings.ContainsAny(part, "0123456789")
}
