package blocklag

import (
	"net/http"
	"strings"
)

// OwnCredentials returns a failnext Config.Base that sends each attempt with
// its own endpoint's credentials only. failnext keeps a request's headers
// when it moves to another endpoint, so an Authorization or Referer made
// from one provider's URL would otherwise reach the next provider.
//
// Each attempt goes to base (nil: [http.DefaultTransport]) as a clone without
// Authorization or Referer, under any spelling of their names, and with
// Basic auth from the user name and password of its own URL. The request it
// is handed is left as it was. Since failnext replaces the whole destination
// of every attempt, the application's requests can use a URL without a key,
// so that no error, Referer or trace of its own shows one.
func OwnCredentials(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return ownCredentials{base: base}
}

// ownCredentials is the RoundTripper that OwnCredentials returns.
type ownCredentials struct {
	base http.RoundTripper
}

func (t ownCredentials) RoundTrip(req *http.Request) (*http.Response, error) {
	attempt := req.Clone(req.Context())
	if attempt.Header == nil {
		attempt.Header = http.Header{}
	}
	// A name as written in a map literal, such as "authorization", goes on
	// the wire as it is, and servers read it as the header.
	for name := range attempt.Header {
		if strings.EqualFold(name, "Authorization") || strings.EqualFold(name, "Referer") {
			delete(attempt.Header, name)
		}
	}
	setBasicAuth(attempt)
	return t.base.RoundTrip(attempt)
}

// setBasicAuth sets req's Authorization from the user name and password of
// its URL, as http.Client would, when the URL holds either.
func setBasicAuth(req *http.Request) {
	user := req.URL.User
	if user == nil {
		return
	}
	password, _ := user.Password()
	if user.Username() == "" && password == "" {
		return
	}
	req.SetBasicAuth(user.Username(), password)
}
