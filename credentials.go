package blocklag

import "net/http"

// OwnCredentials returns a RoundTripper for [failnext.Config.Base] that
// sends every attempt with its own endpoint's credentials and no other's.
// failnext sends each attempt to the whole URL of the endpoint it picks but
// keeps the request's headers from one endpoint to the next, so without it
// an Authorization or Referer made from one provider's URL would reach
// another provider.
//
// For each attempt it sends a clone of the request without any
// Authorization or Referer header, and with Basic auth from the attempt's
// URL when that URL holds a user name or password. Proxy-Authorization
// stays, the request it is handed is left as it was, and nothing else
// changes. A nil base means [http.DefaultTransport].
//
// Give the application's http.Client a URL that holds no key, such as the
// first endpoint's scheme and host alone: failnext replaces the whole
// destination of every attempt anyway, and then no error text, Referer or
// trace of the application's can show a key.
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
	attempt.Header.Del("Authorization")
	attempt.Header.Del("Referer")
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
