package blocklag

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/yermakovsa/failnext"
)

// Config is the providers a [Monitor] compares, and options off at zero.
type Config struct {
	Endpoints []failnext.Endpoint // as given to failnext.Config; New copies the slice
	MaxLag    uint64              // how many blocks below the reference an eligible provider may be
	// Base sends the probes (nil: [http.DefaultTransport]) to their URLs, ending
	// each with its context. Never failnext, which would measure another provider
	// under this ID; a Clone of http.DefaultTransport keeps its dial timeouts.
	Base http.RoundTripper
	// ProbeTimeout bounds each probe; one that runs out fails as a timeout and
	// the others stand. Below a provider's usual latency it flaps.
	ProbeTimeout time.Duration
	// Quorum, above one, makes the reference the Quorum-th highest height (the
	// lowest, when fewer probes succeed), so that one provider far ahead cannot
	// make the others ineligible. It stays eligible with lag 0 unless MaxAhead
	// leaves it out; ChainID is what keeps out another chain.
	Quorum   int
	MaxAhead uint64 // with Quorum above one, how far above the reference an eligible provider may be
	// ChainID is the chain every provider must serve (1: Ethereum mainnet): a
	// height counts once its provider has answered eth_chainId with it.
	ChainID uint64
}

// endpoint is a validated provider, its URL as configured.
type endpoint struct {
	id  failnext.EndpointID
	url string
}

// validate checks cfg and returns its endpoints, or an error that names
// the endpoint and the rule it breaks.
func (cfg *Config) validate() ([]endpoint, error) {
	switch {
	case len(cfg.Endpoints) == 0:
		return nil, errors.New("blocklag: no endpoints")
	case cfg.ProbeTimeout < 0:
		return nil, fmt.Errorf("blocklag: ProbeTimeout %v is negative", cfg.ProbeTimeout)
	case cfg.Quorum < 0:
		return nil, fmt.Errorf("blocklag: Quorum %d is negative", cfg.Quorum)
	case cfg.MaxAhead > 0 && cfg.Quorum <= 1:
		return nil, errors.New("blocklag: MaxAhead needs Quorum above 1: with the highest height as reference, no provider is ahead of it")
	}
	eps := make([]endpoint, len(cfg.Endpoints))
	seen := make(map[failnext.EndpointID]int, len(cfg.Endpoints))
	for i, ep := range cfg.Endpoints {
		switch first, dup := seen[ep.ID]; {
		case ep.ID == "":
			return nil, fmt.Errorf("blocklag: endpoint %d: empty ID", i)
		case !printableID(ep.ID):
			// %q escapes what makes the ID unfit, so the message stays one
			// printable line that shows where the trouble is.
			return nil, fmt.Errorf("blocklag: endpoint %d: ID %q holds a character that is not printable or not valid UTF-8; IDs reach logs, JSON and metric labels as they are", i, ep.ID)
		case dup:
			return nil, fmt.Errorf("blocklag: endpoint %d (%q): ID already used by endpoint %d", i, ep.ID, first)
		}
		seen[ep.ID] = i
		if err := checkURL(ep.URL); err != nil {
			return nil, fmt.Errorf("blocklag: endpoint %d (%q): %v", i, ep.ID, err)
		}
		eps[i] = endpoint{id: ep.ID, url: ep.URL}
	}
	return eps, nil
}

// printableID reports whether id is valid UTF-8 made only of runes that
// strconv.IsPrint accepts.
func printableID(id failnext.EndpointID) bool {
	return utf8.ValidString(string(id)) && !strings.ContainsFunc(string(id), func(r rune) bool { return !strconv.IsPrint(r) })
}

// checkURL applies failnext.New's URL rules, and a few more that catch
// common mistakes, in errors that say what to do and quote of the URL at
// most its scheme, which cannot hold a secret.
func checkURL(raw string) error {
	// url.Parse takes "127.0.0.1:8545" for a path and "localhost:8545" for
	// a URL of scheme "localhost": a network URL needs "://".
	scheme, rest, found := strings.Cut(raw, "://")
	switch {
	case strings.TrimSpace(raw) != raw:
		return errors.New("URL begins or ends with white space (often a newline or space from an environment variable): remove it")
	case strings.Contains(raw, "#"):
		return errors.New("URL contains '#', which starts a fragment: remove it, or write it as %23 if it belongs to a user name, password, path or query")
	case !found || !isScheme(scheme):
		return errors.New("URL has no scheme: it must start with http:// or https://")
	case !strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https"):
		return fmt.Errorf("URL scheme %q is not supported: it must be http or https", scheme)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return parseProblem(rest, err)
	}
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
		return errors.New("URL has a ':' after its host but no port: remove the ':' or give a port from 1 to 65535")
	// The port's digits are not quoted: "http://admin:98765432/x@host/"
	// reads as the port 98765432 of a password holding '/'.
	case u.Port() != "" && (portErr != nil || port < 1 || port > 65535):
		return errBadPort(rest)
	}
	return nil
}

// isScheme matches the form of a URL scheme.
var isScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`).MatchString

// parseProblem explains why url.Parse rejected a URL with a well-formed
// scheme followed by "://", from rest, the text after "://" (which holds
// no '#'). It looks for each mistake itself rather than reading parseErr's
// text, which quotes the URL and differs between Go releases.
func parseProblem(rest string, parseErr error) error {
	var escape url.EscapeError
	var badHost url.InvalidHostError
	authority, _, _ := strings.Cut(rest, "?")
	authority, _, _ = strings.Cut(authority, "/")
	hostport := authority[strings.LastIndex(authority, "@")+1:]
	host, port := hostport, ""
	if colon := strings.LastIndex(hostport, ":"); colon > strings.LastIndex(hostport, "]") {
		host, port = hostport[:colon], hostport[colon+1:]
	}
	switch {
	case strings.ContainsFunc(rest, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return errors.New("URL holds a control character (such as a tab or a newline): remove it")
	case errors.As(parseErr, &escape):
		return errors.New("URL holds an invalid percent-escape: each '%' must be followed by two hex digits (write a literal '%' as %25), and a host name takes none")
	case !validUserinfo(authority[:len(authority)-len(hostport)]):
		return errors.New("URL user name or password holds a character that must be percent-escaped")
	case strings.ContainsFunc(port, func(r rune) bool { return r < '0' || r > '9' }):
		return errBadPort(rest)
	case strings.Contains(host, "["), strings.Contains(host, "]"):
		return errNotIPv6
	case strings.Contains(host, ":"):
		return errMultipleColons
	case errors.As(parseErr, &badHost):
		return errors.New("URL host holds a character that a host name cannot hold")
	}
	return errors.New("URL does not parse")
}

// errBadPort says that the port is not one, from rest, the text after
// "://": with an '@' after the host, the "port" is likely a password
// holding '/' or '?'.
func errBadPort(rest string) error {
	authority := rest[:strings.IndexAny(rest+"/", "/?")]
	if strings.Contains(rest[len(authority):], "@") {
		return errors.New("URL port is not a number from 1 to 65535; if the user name or password holds '/' or '?', write it as %2F or %3F")
	}
	return errors.New("URL port is not a number from 1 to 65535")
}

var errNotIPv6 = errors.New("URL host is malformed: only an IPv6 address goes in brackets, as in http://[2001:db8::7]:8545")

var errMultipleColons = errors.New("URL host holds more than one ':': an IPv6 address must be in brackets, as in http://[::1]:8545")

// validUserinfo matches the characters that url.Parse accepts in a user
// name and password, as RFC 3986 lists them.
var validUserinfo = regexp.MustCompile(`^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$`).MatchString
