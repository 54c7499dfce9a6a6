package blocklag

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// splitAuthority returns the authority of raw, the text of a URL that
// holds "://", as written: from "://" up to the first '/' or '?'; and the
// rest of raw after it.
func splitAuthority(raw string) (string, string) {
	_, after, _ := strings.Cut(raw, "://")
	end := strings.IndexAny(after, "/?")
	if end < 0 {
		return after, ""
	}
	return after[:end], after[end:]
}

// checkURL applies failnext.New's rules to a URL, and a few more that catch
// common mistakes. Its errors say what to do, and quote of the URL at most
// its scheme, which cannot hold a secret.
func checkURL(raw string) error {
	// url.Parse takes "127.0.0.1:8545" for a path and "localhost:8545" for
	// a URL of scheme "localhost": a network URL needs "://".
	scheme, _, found := strings.Cut(raw, "://")
	switch {
	case strings.TrimSpace(raw) != raw:
		return errors.New("URL begins or ends with white space " +
			"(often a newline or space from an environment variable): remove it")
	case strings.Contains(raw, "#"):
		return errors.New("URL contains '#', which starts a fragment: remove it, " +
			"or write it as %23 if it belongs to a user name, password, path or query")
	case !found || !isScheme(scheme):
		return errors.New("URL has no scheme: it must start with http:// or https://")
	case !strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https"):
		return fmt.Errorf("URL scheme %q is not supported: it must be http or https", scheme)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return parseProblem(raw, err)
	}
	return hostProblem(raw, u)
}

// hostProblem checks the host and port of u, which url.Parse accepted from
// raw.
func hostProblem(raw string, u *url.URL) error {
	ip, ipErr := netip.ParseAddr(u.Hostname())
	port, portErr := strconv.Atoi(u.Port())
	bracketed := strings.HasPrefix(u.Host, "[")
	switch {
	case u.Hostname() == "":
		return errors.New("URL has no host: it must look like https://host/ or http://host:port/")
	// Some Go releases accept the next two; New says the same under all.
	case !bracketed && strings.Contains(u.Hostname(), ":"):
		return errMultipleColons
	case bracketed && (ipErr != nil || !ip.Is6()):
		return errNotIPv6
	case strings.HasSuffix(u.Host, ":"):
		return errors.New("URL has a ':' after its host but no port: " +
			"remove the ':' or give a port from 1 to 65535")
	// The port's digits are not quoted: "http://admin:98765432/x@host/"
	// reads as the port 98765432 of a password holding '/'.
	case u.Port() != "" && (portErr != nil || port < 1 || port > 65535):
		return errBadPort(raw)
	}
	return nil
}

// isScheme matches the form of a URL scheme.
var isScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`).MatchString

// parseProblem explains why url.Parse rejected raw, a URL that begins with a
// well-formed scheme and "://" and holds no '#'. It looks for each mistake
// itself rather than reading parseErr's text, which quotes the URL and
// differs between Go releases.
func parseProblem(raw string, parseErr error) error {
	var escape url.EscapeError
	var badHost url.InvalidHostError
	authority, _ := splitAuthority(raw)
	userinfo := ""
	host := authority
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		userinfo = authority[:at]
		host = authority[at+1:]
	}
	port := ""
	if colon := strings.LastIndex(host, ":"); colon > strings.LastIndex(host, "]") {
		port = host[colon+1:]
		host = host[:colon]
	}
	switch {
	case strings.ContainsFunc(raw, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return errors.New("URL holds a control character (such as a tab or a newline): remove it")
	case errors.As(parseErr, &escape):
		return errors.New("URL holds an invalid percent-escape: each '%' must be followed by " +
			"two hex digits (write a literal '%' as %25), and a host name takes none")
	case !validUserinfo(userinfo):
		return errors.New("URL user name or password holds a character that must be percent-escaped")
	case strings.ContainsFunc(port, func(r rune) bool { return r < '0' || r > '9' }):
		return errBadPort(raw)
	case strings.Contains(host, "["), strings.Contains(host, "]"):
		return errNotIPv6
	case strings.Contains(host, ":"):
		return errMultipleColons
	case errors.As(parseErr, &badHost):
		return errors.New("URL host holds a character that a host name cannot hold")
	}
	return errors.New("URL does not parse")
}

// errBadPort says that the port of raw is not a number. With an '@' after
// the host, the "port" is likely a password that holds '/' or '?'.
func errBadPort(raw string) error {
	_, rest := splitAuthority(raw)
	if strings.Contains(rest, "@") {
		return errors.New("URL port is not a number from 1 to 65535; " +
			"if the user name or password holds '/' or '?', write it as %2F or %3F")
	}
	return errors.New("URL port is not a number from 1 to 65535")
}

var errNotIPv6 = errors.New("URL host is malformed: only an IPv6 address goes in brackets, " +
	"as in http://[2001:db8::7]:8545")

var errMultipleColons = errors.New("URL host holds more than one ':': " +
	"an IPv6 address must be in brackets, as in http://[::1]:8545")

// validUserinfo matches the characters that url.Parse accepts in a user
// name and password, as RFC 3986 lists them.
var validUserinfo = regexp.MustCompile(`^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$`).MatchString
