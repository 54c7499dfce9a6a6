package blocklag

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/yermakovsa/failnext"
)

// Config describes the providers a [Monitor] compares and how much lag it
// tolerates. Pass the same Endpoints to [failnext.Config] so that the IDs
// agree. [New] says which values it rejects.
type Config struct {
	// Endpoints lists the providers, each an Ethereum HTTP JSON-RPC URL under
	// a unique ID. New copies the slice. A URL may carry an API key in its
	// userinfo, path or query; blocklag never prints those parts.
	Endpoints []failnext.Endpoint

	// MaxLag is how many blocks a provider may be behind the reference height
	// and still be eligible. Zero keeps only the providers at the reference.
	MaxLag uint64

	// Base sends blocklag's own probes. Nil means [http.DefaultTransport].
	// blocklag never closes or reconfigures it: the caller owns it.
	Base http.RoundTripper

	// ProbeTimeout, when positive, bounds each probe on its own, so that one
	// provider that hangs or drips its answer is published ineligible instead
	// of running out the Check's context and keeping the old snapshot. A probe
	// that runs out fails with a [*ProbeError] that says it timed out and
	// wraps [context.DeadlineExceeded]. A value below a provider's normal
	// latency makes that provider flap. Zero means no per-probe limit;
	// negative values are rejected by New.
	ProbeTimeout time.Duration

	// Quorum, when above one, takes the reference height as the Quorum-th
	// highest successful height (or the lowest one, when fewer probes
	// succeeded), so that a single provider reporting an absurd height cannot
	// make every honest one look behind. With only Quorum providers, lag
	// detection is effectively off, since the reference is then the lowest
	// height. Zero or one means the highest height; negative values are
	// rejected by New.
	Quorum int

	// ChainID, when non-zero, is the chain every provider must serve (1 for
	// Ethereum mainnet). A provider's height counts only once it has answered
	// eth_chainId with this value; until then each Check also asks it, and a
	// provider that names another chain or fails to answer fails its probe in
	// that Check. A confirmation is kept for the Monitor's lifetime, and is
	// recorded even by a Check that publishes nothing. Zero means no chain
	// check: eth_chainId is never sent.
	ChainID uint64
}

// endpoint is a validated provider: its ID, its URL as configured, which
// every probe requests, and that URL parsed, which transportError redacts.
type endpoint struct {
	id     failnext.EndpointID
	url    string
	target *url.URL
}

// validate checks cfg and returns the endpoints in configured order. Its
// errors name an endpoint by index and ID and never repeat its URL.
func (cfg *Config) validate() ([]endpoint, error) {
	switch {
	case len(cfg.Endpoints) == 0:
		return nil, errors.New("blocklag: no endpoints")
	case cfg.ProbeTimeout < 0:
		return nil, fmt.Errorf("blocklag: ProbeTimeout %v is negative", cfg.ProbeTimeout)
	case cfg.Quorum < 0:
		return nil, fmt.Errorf("blocklag: Quorum %d is negative", cfg.Quorum)
	}
	eps := make([]endpoint, len(cfg.Endpoints))
	seen := make(map[failnext.EndpointID]int, len(cfg.Endpoints))
	for i, ep := range cfg.Endpoints {
		if ep.ID == "" {
			return nil, fmt.Errorf("blocklag: endpoint %d: empty ID", i)
		}
		if first, dup := seen[ep.ID]; dup {
			return nil, fmt.Errorf("blocklag: endpoint %d (%q): ID already used by endpoint %d", i, ep.ID, first)
		}
		seen[ep.ID] = i
		target, err := checkURL(ep.URL)
		if err != nil {
			return nil, fmt.Errorf("blocklag: endpoint %d (%q): %v", i, ep.ID, err)
		}
		eps[i] = endpoint{id: ep.ID, url: ep.URL, target: target}
	}
	return eps, nil
}

// checkURL applies the same URL rules as failnext.New and returns the
// parsed URL. Its errors describe the problem without quoting the URL.
func checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, errors.New("URL does not parse")
	case !u.IsAbs():
		return nil, errors.New("URL is not absolute")
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("URL scheme must be http or https")
	case u.Host == "":
		return nil, errors.New("URL has no host")
	case strings.Contains(raw, "#"):
		return nil, errors.New("URL contains a fragment (#)")
	}
	return u, nil
}
