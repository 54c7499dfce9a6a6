package blocklagprom

import "github.com/prometheus/client_golang/prometheus"

// CollectorOf is NewCollector over any source of a Status and a Stats, so
// that the package's external tests can hand the collector ones built by
// hand, with every field set as they like, and count its reads.
func CollectorOf(m monitor) prometheus.Collector {
	return collector{monitor: m}
}
