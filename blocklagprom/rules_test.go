package blocklagprom_test

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// The rules file the module ships, and promtool's unit tests of it.
const (
	rulesFile     = "alerts.yml"
	rulesTestFile = "testdata/alerts_test.yml"
)

// promtool runs promtool with args and fails the test with its output
// when it fails.
func promtool(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command(tool(t, "promtool"), args...).CombinedOutput()
	if err != nil {
		t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// The rules file is valid and passes every lint that promtool has.
func TestRulesPassPromtoolCheckWithEveryLint(t *testing.T) {
	promtool(t, "check", "rules", "--lint=all", "--lint-fatal", rulesFile)
}

// Every alert passes its unit tests, in which it fires and stays quiet
// where it should.
func TestRulesPassTheirUnitTests(t *testing.T) {
	promtool(t, "test", "rules", rulesTestFile)
}

// Every alert of the rules file has unit tests, at least one evaluation in
// which it is expected quiet and one in which it is expected to fire, so
// that an alert added to the file cannot go untested.
func TestEveryAlertHasUnitTestsThatFireAndStayQuiet(t *testing.T) {
	alerts := scan(t, rulesFile, `^\s*- alert: (\w+)\s*$`)
	if len(alerts) == 0 {
		t.Fatalf("%s has no alerts", rulesFile)
	}
	alertname := regexp.MustCompile(`^\s*alertname: (\w+)\s*$`)
	expAlerts := regexp.MustCompile(`^\s*exp_alerts:(.*)$`)
	tested := map[string]map[bool]bool{} // alert name -> whether it fires -> seen
	var name string
	for _, line := range lines(t, rulesTestFile) {
		if m := alertname.FindStringSubmatch(line); m != nil {
			name = m[1]
		}
		if m := expAlerts.FindStringSubmatch(line); m != nil && name != "" {
			if tested[name] == nil {
				tested[name] = map[bool]bool{}
			}
			tested[name][strings.TrimSpace(m[1]) != "[]"] = true
			name = ""
		}
	}
	for _, a := range alerts {
		if !tested[a][true] || !tested[a][false] {
			t.Errorf("%s: %s has no unit test in which it fires, and one in which it stays quiet (%v)",
				rulesTestFile, a, tested[a])
		}
	}
}

// Every alert routes as the monitoring mixins do (severity critical or
// warning) and explains itself: a summary, a description, and a
// runbook_url whose anchor is a section of the README named after it.
func TestEveryAlertHasASeverityAnnotationsAndARunbook(t *testing.T) {
	headings := map[string]bool{}
	for _, h := range scan(t, "README.md", `^#+ (.+)$`) {
		headings[strings.ToLower(strings.ReplaceAll(h, " ", "-"))] = true
	}
	alertLine := regexp.MustCompile(`^\s*- alert: (\w+)`)
	field := regexp.MustCompile(`^\s*(severity|summary|description|runbook_url): *(.*)$`)
	found := map[string]map[string]string{} // alert -> field -> value
	var alert string
	for _, line := range lines(t, rulesFile) {
		if m := alertLine.FindStringSubmatch(line); m != nil {
			alert = m[1]
			found[alert] = map[string]string{}
		} else if m := field.FindStringSubmatch(line); m != nil && alert != "" {
			found[alert][m[1]] = m[2]
		}
	}
	if len(found) == 0 {
		t.Fatalf("%s has no alerts", rulesFile)
	}
	const runbooks = "https://github.com/yermakovsa/failnext-blocklag/blob/main/blocklagprom/README.md#"
	for alert, f := range found {
		if f["severity"] != "critical" && f["severity"] != "warning" {
			t.Errorf("%s: severity %q, want critical or warning", alert, f["severity"])
		}
		if f["summary"] == "" || strings.Contains(f["summary"], "{{") {
			t.Errorf("%s: summary %q, want one static sentence", alert, f["summary"])
		}
		if _, ok := f["description"]; !ok {
			t.Errorf("%s: no description", alert)
		}
		anchor, ok := strings.CutPrefix(f["runbook_url"], runbooks)
		if !ok || anchor != strings.ToLower(alert) || !headings[anchor] {
			t.Errorf("%s: runbook_url %q, want %s%s, a section of README.md",
				alert, f["runbook_url"], runbooks, strings.ToLower(alert))
		}
	}
}

// scan returns the first group of every line of file that matches expr.
func scan(t *testing.T, file, expr string) []string {
	t.Helper()
	re := regexp.MustCompile(expr)
	var found []string
	for _, line := range lines(t, file) {
		if m := re.FindStringSubmatch(line); m != nil {
			found = append(found, m[1])
		}
	}
	return found
}

func lines(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		out = append(out, s.Text())
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
