package main

// This file is the -dev demo, apart from the loop in main.go, which knows
// nothing of it: a program copied from main.go leaves this file out.
//
// -dev starts two go-ethereum dev nodes in the process while the flags are
// parsed, points ETH_RPC_URLS at them, and makes the loop check every 3
// seconds and read every 2, unless -check-every or -read-every say
// otherwise. After -dev-duration it stops the program as Ctrl-C would.

import (
	"errors"
	"flag"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/yermakovsa/failnext-blocklag/examples/goethereum/internal/devnet"
)

// backupStopsAfter is when the demo stops its fresh node, the backup.
const backupStopsAfter = 20 * time.Second

func init() {
	flag.BoolFunc("dev", "run against two go-ethereum dev nodes started in this process; "+
		"the ETH_RPC_ variables are not read", startDev)
	flag.Var(&demoEnd, "dev-duration", "with -dev, stop after this long (0: run until Ctrl-C)")
}

// demoEnd is the -dev-duration flag: it holds the demo's length and, once
// -dev has started the demo, the timer that ends it. The flags may come in
// either order, so each of them sets the timer.
var demoEnd = demoTimer{after: time.Minute}

type demoTimer struct {
	after time.Duration
	timer *time.Timer // nil until -dev starts the demo, and when after is 0
	dev   bool        // whether -dev has started the demo
}

func (d *demoTimer) String() string { return d.after.String() }

func (d *demoTimer) Set(s string) error {
	after, err := time.ParseDuration(s)
	if err != nil || after < 0 {
		return errors.New("want a duration such as 90s, or 0")
	}
	d.after = after
	d.reset()
	return nil
}

// reset starts the timer anew from now, once -dev has started the demo.
func (d *demoTimer) reset() {
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	if d.dev && d.after > 0 {
		d.timer = time.AfterFunc(d.after, endDemo)
	}
}

// endDemo stops the program as Ctrl-C would, so that it shuts down cleanly
// and exits with status 0.
func endDemo() {
	slog.Info("dev: the demo is over (-dev-duration)")
	self, err := os.FindProcess(os.Getpid())
	if err == nil {
		err = self.Signal(os.Interrupt)
	}
	if err != nil {
		slog.Error("dev: cannot stop the demo; press Ctrl-C", "err", err)
	}
}

// startDev starts the demo's dev nodes, unless value is false (-dev=false):
// a primary that seals a block every 4 seconds and a backup that seals one
// every second and stops after 20.
func startDev(value string) error {
	on, err := strconv.ParseBool(value)
	if err != nil {
		return err
	}
	if !on || demoEnd.dev {
		return nil
	}
	demo, err := devnet.StartDemo(backupStopsAfter)
	if err != nil {
		return err
	}
	os.Unsetenv("ETH_RPC_PRIMARY_URL")
	os.Unsetenv("ETH_RPC_BACKUP_URL")
	os.Setenv("ETH_RPC_URLS", "primary="+demo.Primary.URL+" backup="+demo.Backup.URL)
	if err := setUnlessGiven("check-every", "3s"); err != nil {
		return err
	}
	if err := setUnlessGiven("read-every", "2s"); err != nil {
		return err
	}
	demoEnd.dev = true
	demoEnd.reset()
	return nil
}

// setUnlessGiven sets the flag name to value unless the command line has
// set it already; a later setting on the command line wins anyway.
func setUnlessGiven(name, value string) error {
	f := flag.Lookup(name)
	if f == nil {
		return errors.New("main.go defines no -" + name + " flag")
	}
	given := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == name {
			given = true
		}
	})
	if given {
		return nil
	}
	return f.Value.Set(value)
}
