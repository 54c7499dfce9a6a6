// Package blocklagprom exports a blocklag Monitor's verdicts and the numbers
// they rest on as Prometheus gauges, and what its checks did as counters,
// so that an operator can graph provider lag and alert when checks stop, a
// provider fails or the chain stands still. The module ships those alerts
// as a rules file, alerts.yml.
//
// One line registers them:
//
//	reg.MustRegister(blocklagprom.NewCollector(monitor))
//
// The collector only reads the Monitor and runs no check: the program keeps
// calling [blocklag.Monitor.Check] on its own schedule. The example Serve is
// a complete program that does so and serves /metrics.
//
// The metrics, and when each is present, are listed in the [README]. Each
// one's help text says in a sentence what its number is; what the numbers
// mean, such as when a provider or the front counts as advanced, is
// documented on [blocklag.Status], [blocklag.EndpointStatus] and
// [blocklag.Stats].
//
// # Two chains on one registry
//
// Two collectors have the same metric names and labels, so registering a
// second one directly fails. Register each through
// [prometheus.WrapRegistererWith] with its own value of a label of your
// choosing, such as chain="mainnet" and chain="sepolia", as the example
// TwoChains does; the alerts can then be grouped by that label.
//
// [README]: https://github.com/yermakovsa/failnext-blocklag/blob/main/blocklagprom/README.md#metrics
package blocklagprom
