// Command dashboard writes blocklagprom's Grafana dashboard as JSON.
//
// It builds the dashboard with the Grafana Foundation SDK, whose types come
// from Grafana's own schemas, so that a field Grafana does not know fails
// to compile here rather than being dropped on import. It lives in a module
// of its own so that neither blocklag nor blocklagprom requires the SDK.
//
// The output depends on nothing but this program: the same binary writes
// the same bytes every run, which lets CI compare the committed file with a
// fresh one.
//
//	go run . -o ../dashboard.json
package main

// dashboard.go says why the classic, deprecated dashboard model.
//lint:file-ignore SA1019 the classic model is the one every Grafana imports

//go:generate go run . -o ../dashboard.json

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

func main() {
	out := flag.String("o", "", "write the dashboard to this file instead of standard output")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "dashboard: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	text, err := render()
	if err != nil {
		fmt.Fprintln(os.Stderr, "dashboard:", err)
		os.Exit(1)
	}
	if *out == "" {
		_, err = os.Stdout.Write(text)
	} else {
		err = os.WriteFile(*out, text, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dashboard:", err)
		os.Exit(1)
	}
}

// render returns the dashboard as indented JSON ending in a newline.
// encoding/json writes struct fields in their declared order and map keys
// sorted, so the bytes are the same every run.
func render() ([]byte, error) {
	d, err := build().Build()
	if err != nil {
		return nil, err
	}
	number(&d)
	text, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(text, '\n'), nil
}

// number gives every panel and row an id, 1 upwards in the order they
// are laid out. The SDK leaves them unset; fixed ids keep links to one
// panel (viewPanel=N) working across regenerations that only add panels
// at the end.
func number(d *dashboard.Dashboard) {
	var id uint32
	for _, p := range d.Panels {
		id++
		switch {
		case p.Panel != nil:
			p.Panel.Id = cog.ToPtr(id)
		case p.RowPanel != nil:
			p.RowPanel.Id = id
		}
	}
}
