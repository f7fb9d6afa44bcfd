// Command ferretdb-embedded runs FerretDB (a MongoDB wire-protocol compatible
// server) with its SQLite backend, for CI and local integration tests only.
//
// Why embed instead of `go install github.com/FerretDB/FerretDB/cmd/ferretdb`?
// The upstream command reads build/version/version.txt, which is generated at
// release time and absent from the module zip, so a `go install`-ed binary
// panics at startup. The public package github.com/FerretDB/FerretDB/ferretdb
// skips that check when used from another main module, so we wrap it here.
// Telemetry is always disabled by that package when embedded.
//
// Usage:
//
//	ferretdb-embedded -listen 127.0.0.1:27017 -dir /path/to/state
//	ferretdb-embedded -listen 127.0.0.1:27017 -postgresql-url postgres://user@127.0.0.1:5432/db
//
// It is built and started by .ci/services.sh (SQLite backend). The PostgreSQL backend is for the
// cluster benchmark (load-tests/README.md): FerretDB 1.x's SQLite backend answers every query,
// `_id` lookups included, with a scan of the whole collection, while its PostgreSQL backend
// filters rows in PostgreSQL.
package main

import (
	"context"
	"flag"
	"log"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27017", "TCP address to listen on")
	dir := flag.String("dir", "", "directory for SQLite state (created if missing)")
	pgURL := flag.String("postgresql-url", "", "use the PostgreSQL backend at this URL instead of SQLite")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *pgURL != "" {
		run(ctx, &ferretdb.Config{
			Listener:      ferretdb.ListenerConfig{TCP: *listen},
			Handler:       "postgresql",
			PostgreSQLURL: *pgURL,
		}, "PostgreSQL")
		return
	}

	if *dir == "" {
		log.Fatal("-dir or -postgresql-url is required")
	}

	abs, err := filepath.Abs(*dir)
	if err != nil {
		log.Fatal(err)
	}
	if err = os.MkdirAll(abs, 0o755); err != nil {
		log.Fatal(err)
	}

	// The SQLite backend wants a "file:" URI naming an existing directory,
	// with a trailing slash; each MongoDB database becomes one .sqlite file.
	sqliteURL := (&url.URL{Scheme: "file", Path: abs + "/"}).String()

	run(ctx, &ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *listen},
		Handler:   "sqlite",
		SQLiteURL: sqliteURL,
	}, "state in "+abs)
}

// run serves until ctx is cancelled (Ctrl-C / kill: a clean stop).
func run(ctx context.Context, conf *ferretdb.Config, where string) {
	f, err := ferretdb.New(conf)
	if err != nil {
		log.Fatal(err)
	}

	log.Printf("ferretdb-embedded: listening on %s, %s", conf.Listener.TCP, where)

	if err = f.Run(ctx); err != nil {
		log.Fatal(err)
	}
}
