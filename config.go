package blocklag

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/yermakovsa/failnext"
)

// Config lists the providers a [Monitor] compares. Every option is off at
// its zero value.
type Config struct {
	Endpoints []failnext.Endpoint // the list given to failnext.Config; New copies it
	MaxLag    uint64              // how many blocks below the reference an eligible provider may be
	// Base sends the probes; nil means [http.DefaultTransport], and a clone of it is the one to start
	// from. It must send each probe to its URL and end it with its context, and not be failnext.
	Base http.RoundTripper
	// ProbeTimeout bounds each probe. A probe that runs out fails as a timeout, and the other
	// probes' results stand.
	ProbeTimeout time.Duration
	// Quorum, above one, makes the reference the Quorum-th highest height, or the lowest when fewer
	// probes succeed, so that one provider far ahead cannot make the others ineligible. That provider
	// stays eligible unless MaxAhead leaves it out; ChainID is what keeps out another chain.
	Quorum   int
	MaxAhead uint64 // with Quorum above one, how far above the reference an eligible provider may be
	// ChainID is the chain every provider must serve (1 is Ethereum mainnet): a height counts once
	// its provider has answered eth_chainId with it.
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
		return nil, errors.New("blocklag: MaxAhead needs Quorum above 1: " +
			"with the highest height as reference, no provider is ahead of it")
	}
	eps := make([]endpoint, len(cfg.Endpoints))
	seen := make(map[failnext.EndpointID]int, len(cfg.Endpoints))
	for i, ep := range cfg.Endpoints {
		first, dup := seen[ep.ID]
		switch {
		case ep.ID == "":
			return nil, fmt.Errorf("blocklag: endpoint %d: empty ID", i)
		case !printableID(ep.ID):
			// %q escapes what makes the ID unfit, so the message stays one
			// printable line that shows where the trouble is.
			return nil, fmt.Errorf("blocklag: endpoint %d: ID %q holds a character that is not printable "+
				"or not valid UTF-8; IDs reach logs, JSON and metric labels as they are", i, ep.ID)
		case dup:
			return nil, fmt.Errorf("blocklag: endpoint %d (%q): ID already used by endpoint %d",
				i, ep.ID, first)
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
	if !utf8.ValidString(string(id)) {
		return false
	}
	return !strings.ContainsFunc(string(id), func(r rune) bool { return !strconv.IsPrint(r) })
}
