package blocklagprom_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// alertmanagerFile is the routing and inhibition the module ships.
const alertmanagerFile = "alertmanager.yml"

// A real Alertmanager, loaded with the shipped alertmanager.yml as it is,
// holds the alerts that the shipped rules raise in these incidents, and
// suppresses what a rejected key explains and nothing else:
//   - on mainnet, c's key is rejected and so is e's chain, while a lags, b
//     hangs and d is rate limited, so that few providers are eligible and
//     the verdicts go stale;
//   - on sepolia, of the same instance, every key is rejected, so that no
//     check publishes;
//   - the providers c and a are ineligible for causes of their own on
//     another chain, another instance and another job.
func TestAlertmanagerInhibitsOnlyWhatARejectedKeyExplains(t *testing.T) {
	bin := toolOf(t, "prometheus-alertmanager", "prometheus-alertmanager", "alertmanager")
	am := startAlertmanager(t, bin)
	mainnet := target{job: "blocklag", instance: "node-1:2112", chain: "mainnet"}
	sepolia := target{job: "blocklag", instance: "node-1:2112", chain: "sepolia"}
	holesky := target{job: "blocklag", instance: "node-1:2112", chain: "holesky"}
	otherInstance := target{job: "blocklag", instance: "node-2:2112", chain: "sepolia"}
	otherJob := target{job: "blocklag-canary", instance: "node-1:2112", chain: "mainnet"}

	rejectedC := mainnet.alert("ProviderMisconfigured", "c", "unauthorized")
	rejectedE := mainnet.alert("ProviderMisconfigured", "e", "wrong_chain")
	rejectedA := sepolia.alert("ProviderMisconfigured", "a", "unauthorized")
	rejectedB := sepolia.alert("ProviderMisconfigured", "b", "unauthorized")
	tests := []struct {
		name  string
		alert labels
		by    []labels // the alerts that inhibit it, if any
	}{
		{
			name:  "a lagging provider stays ineligible beside another's rejected key",
			alert: mainnet.alert("ProviderIneligible", "a", ""),
		},
		{
			name:  "a hung provider stays ineligible",
			alert: mainnet.alert("ProviderIneligible", "b", ""),
		},
		{
			name:  "a rate limited provider stays ineligible",
			alert: mainnet.alert("ProviderIneligible", "d", ""),
		},
		{
			name:  "a rate limited provider stays rate limited",
			alert: mainnet.alert("ProviderRateLimited", "d", "rate_limited"),
		},
		{
			name:  "a rejected key explains its own provider being ineligible",
			alert: mainnet.alert("ProviderIneligible", "c", ""),
			by:    []labels{rejectedC},
		},
		{
			name:  "a rejected chain explains its own provider being ineligible",
			alert: mainnet.alert("ProviderIneligible", "e", ""),
			by:    []labels{rejectedE},
		},
		{
			name:  "a rejected key notifies",
			alert: rejectedC,
		},
		{
			name:  "a rejected chain notifies",
			alert: rejectedE,
		},
		{
			name:  "few eligible providers stay reported beside rejected keys",
			alert: mainnet.alert("FewEligible", "", ""),
		},
		{
			name:  "stale verdicts stay reported beside rejected keys",
			alert: mainnet.alert("VerdictsStale", "", ""),
		},
		{
			name:  "every key rejected still reports never publishing",
			alert: sepolia.alert("NeverPublished", "", ""),
		},
		{
			name:  "every key rejected still reports stale verdicts",
			alert: sepolia.alert("VerdictsStale", "", ""),
		},
		{
			name:  "every key rejected explains the first provider being ineligible",
			alert: sepolia.alert("ProviderIneligible", "a", ""),
			by:    []labels{rejectedA},
		},
		{
			name:  "every key rejected explains the second provider being ineligible",
			alert: sepolia.alert("ProviderIneligible", "b", ""),
			by:    []labels{rejectedB},
		},
		{
			name:  "every rejected key notifies",
			alert: rejectedA,
		},
		{
			name:  "every rejected key notifies on its own",
			alert: rejectedB,
		},
		{
			name:  "the same provider on another chain stays ineligible",
			alert: holesky.alert("ProviderIneligible", "c", ""),
		},
		{
			name:  "the same provider on another instance stays ineligible",
			alert: otherInstance.alert("ProviderIneligible", "a", ""),
		},
		{
			name:  "the same provider of another job stays ineligible",
			alert: otherJob.alert("ProviderIneligible", "c", ""),
		},
	}
	// Alertmanager's inhibitor takes the alerts in the order they came,
	// and finds inhibitions among those it has taken: once the alert
	// posted last is seen inhibited (by the one posted just before it, on
	// a target of its own), it holds every alert of the test.
	var posted []labels
	for _, tt := range tests {
		posted = append(posted, tt.alert)
	}
	last := target{job: "blocklag", instance: "sentinel:2112", chain: "mainnet"}
	lastAlert := last.alert("ProviderIneligible", "z", "")
	am.post(t, append(posted, last.alert("ProviderMisconfigured", "z", "unauthorized"), lastAlert)...)
	waitFor(t, "the alert posted last to be inhibited", func() (bool, string) {
		a := am.alerts(t)[fmt.Sprint(lastAlert)]
		return a.Status.State == "suppressed", fmt.Sprintf("%+v", a)
	})

	got := am.alerts(t)
	named := map[string]string{} // each alert's labels, by its fingerprint
	for key, a := range got {
		named[a.Fingerprint] = key
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, ok := got[fmt.Sprint(tt.alert)]
			if !ok {
				t.Fatalf("Alertmanager does not hold %v", tt.alert)
			}
			var by []string
			for _, fp := range a.Status.InhibitedBy {
				by = append(by, named[fp])
			}
			// Alertmanager 0.25 names one of the alerts that inhibit
			// another; later versions name them all.
			switch {
			case tt.by == nil && (a.Status.State != "active" || by != nil):
				t.Errorf("%v is %s, inhibited by %q; want active", tt.alert, a.Status.State, by)
			case tt.by != nil && (a.Status.State != "suppressed" || by == nil || !allIn(by, tt.by)):
				t.Errorf("%v is %s, inhibited by %q; want suppressed, by one or more of %v",
					tt.alert, a.Status.State, by, tt.by)
			}
		})
	}
}

// allIn reports whether every one of names, fmt.Sprint of a label set, is
// in set.
func allIn(names []string, set []labels) bool {
	for _, n := range names {
		if !slices.ContainsFunc(set, func(l labels) bool { return fmt.Sprint(l) == n }) {
			return false
		}
	}
	return true
}

// target is the target labels of one Monitor: a scrape's job and
// instance, and the chain label the program adds.
type target struct{ job, instance, chain string }

// labels is an alert's label set.
type labels map[string]string

// alert returns the labels with which the shipped rules raise the alert
// Blocklag+name on tg; empty provider and reason are left out. The alerts
// that say the verdicts are stale or were never published are the
// critical ones.
func (tg target) alert(name, provider, reason string) labels {
	l := labels{
		"alertname": "Blocklag" + name,
		"job":       tg.job,
		"instance":  tg.instance,
		"chain":     tg.chain,
		"severity":  "warning",
	}
	if name == "VerdictsStale" || name == "NeverPublished" {
		l["severity"] = "critical"
	}
	if provider != "" {
		l["provider"] = provider
	}
	if reason != "" {
		l["reason"] = reason
	}
	return l
}

// alertmanager is an Alertmanager's base URL.
type alertmanager string

// startAlertmanager starts Alertmanager with the shipped alertmanager.yml,
// keeping its data in a temporary directory, and returns its API once it
// is ready. Clustering is off: it would take a fixed port.
func startAlertmanager(t *testing.T, bin string) alertmanager {
	t.Helper()
	addr, _ := startServer(t, "Alertmanager", t.TempDir(), func(addr, data string) *exec.Cmd {
		return exec.Command(bin,
			"--config.file="+alertmanagerFile,
			"--storage.path="+data,
			"--web.listen-address="+addr,
			"--cluster.listen-address=")
	})
	return alertmanager("http://" + addr)
}

// post sends alerts that began a minute ago and end in an hour, so that
// none resolves while the test runs, however slowly.
func (am alertmanager) post(t *testing.T, alerts ...labels) {
	t.Helper()
	var body []map[string]any
	now := time.Now()
	for _, l := range alerts {
		body = append(body, map[string]any{
			"labels":   l,
			"startsAt": now.Add(-time.Minute),
			"endsAt":   now.Add(time.Hour),
		})
	}
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := apiClient.Post(string(am)+"/api/v2/alerts", "application/json", bytes.NewReader(data))
	if err != nil {
		t.Fatalf("POST alerts: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST alerts: %s", resp.Status)
	}
}

// amAlert is what the test reads of an alert in Alertmanager's API.
type amAlert struct {
	Fingerprint string
	Labels      labels
	Status      struct {
		State       string
		InhibitedBy []string
	}
}

// alerts returns every alert Alertmanager holds, by fmt.Sprint of its
// labels (which sorts them), with its state as of now.
func (am alertmanager) alerts(t *testing.T) map[string]amAlert {
	t.Helper()
	var list []amAlert
	getJSON(t, string(am), "/api/v2/alerts", nil, &list)
	out := map[string]amAlert{}
	for _, a := range list {
		out[fmt.Sprint(a.Labels)] = a
	}
	return out
}
