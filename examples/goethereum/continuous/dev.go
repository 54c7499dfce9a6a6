package main

// This file is the -dev demo, apart from the loop in main.go: a program
// copied from main.go leaves this file out.
//
// Once the flags are parsed, -dev starts two go-ethereum dev nodes in the
// process, points ETH_RPC_URLS at them, and makes the loop check every 3
// seconds and read every 2, unless -check-every or -read-every say
// otherwise. It logs every read, routine ones included, since the demo
// tells a story read by read. After -dev-duration it stops the program as
// Ctrl-C would.

import (
	"errors"
	"flag"
	"log/slog"
	"os"
	"time"

	"github.com/yermakovsa/failnext-blocklag/examples/goethereum/internal/devnet"
)

// backupStopsAfter is when the demo stops its fresh node, the backup.
const backupStopsAfter = 20 * time.Second

var (
	devMode = flag.Bool("dev", false, "run against two go-ethereum dev nodes started in this process; "+
		"the ETH_RPC_ variables are not read")
	devDuration = flag.Duration("dev-duration", time.Minute,
		"with -dev, stop after this long (0: run until Ctrl-C)")
)

func init() {
	setUp = startDev
}

// startDev starts the demo when -dev is set, and does nothing otherwise:
// a primary that seals a block every 4 seconds and a backup that seals one
// every second and stops after 20.
func startDev() error {
	if !*devMode {
		return nil
	}
	if *devDuration < 0 {
		return errors.New("-dev-duration must be 0 or more")
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
	slog.SetLogLoggerLevel(slog.LevelDebug)
	if *devDuration > 0 {
		time.AfterFunc(*devDuration, endDemo)
	}
	return nil
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

// setUnlessGiven sets the flag name to value unless the command line has
// set it.
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
