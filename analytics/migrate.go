package analytics

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migration is one versioned file of migrations/, NNNN_name.sql.
type Migration struct {
	Version    uint32
	Name       string
	Statements []string // with {db} still in place
	// Checksum is over the statements only, so editing a comment of an
	// applied migration is fine but changing its SQL is refused.
	Checksum string
}

var (
	migrationName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)
	// A statement ends with ';' at the end of a line: the documented
	// separator of migrations/ (18.16 runs one statement per request).
	statementEnd = regexp.MustCompile(`;[ \t]*(\n|$)`)
	identifier   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// Migrations returns the embedded migrations in version order.
func Migrations() ([]Migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("unable to list migrations: %w", err)
	}
	var out []Migration
	seen := map[uint32]string{}
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("unable to load migration %s: name is not NNNN_name.sql", e.Name())
		}
		v, _ := strconv.ParseUint(m[1], 10, 32)
		if prev, dup := seen[uint32(v)]; dup {
			return nil, fmt.Errorf("unable to load migrations: %s and %s share version %d", prev, e.Name(), v)
		}
		seen[uint32(v)] = e.Name()
		b, err := migrationFiles.ReadFile(path.Join("migrations", e.Name()))
		if err != nil {
			return nil, fmt.Errorf("unable to read migration %s: %w", e.Name(), err)
		}
		stmts := SplitStatements(string(b))
		if len(stmts) == 0 {
			return nil, fmt.Errorf("unable to load migration %s: no statements", e.Name())
		}
		sum := sha256.Sum256([]byte(strings.Join(stmts, "\n;\n")))
		out = append(out, Migration{Version: uint32(v), Name: m[2], Statements: stmts, Checksum: hex.EncodeToString(sum[:])})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// SplitStatements drops comment lines (those starting with --) and splits
// the rest on semicolons that end a line.
func SplitStatements(sql string) []string {
	var kept []string
	for _, line := range strings.Split(sql, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		kept = append(kept, strings.TrimRight(line, " \t\r"))
	}
	var out []string
	for _, s := range statementEnd.Split(strings.Join(kept, "\n"), -1) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// ClickHouse error codes Migrate tolerates when re-running a statement that
// a crashed earlier run already executed: 18.16 has no ADD COLUMN IF NOT
// EXISTS, so a re-run ALTER meets DUPLICATE_COLUMN or, as 18.16 and current
// servers answer ADD COLUMN (measured on 18.16 by 0005), ILLEGAL_COLUMN
// "Cannot add column X: column with this name already exists".
const (
	codeDuplicateColumn    = 15
	codeIllegalColumn      = 44
	codeTableAlreadyExists = 57
	codeUnknownDatabase    = 81
)

// Migrate creates database if needed and applies, in version order, every
// migration not yet recorded in database.schema_migrations. It is
// idempotent: applied migrations are skipped (and refused if their SQL
// changed since), and every statement is itself safe to re-run (IF NOT
// EXISTS), so two recorders starting at once, or a run that crashed half way
// through a migration, converge on the same schema. It returns the
// migrations it applied.
func Migrate(ctx context.Context, conn driver.Conn, database string) ([]Migration, error) {
	return migrate(ctx, conn, database, ^uint32(0))
}

// migrate is Migrate up to version last (tests build older schemas with it).
func migrate(ctx context.Context, conn driver.Conn, database string, last uint32) ([]Migration, error) {
	if !identifier.MatchString(database) {
		return nil, fmt.Errorf("unable to migrate: database name %q is not an identifier", database)
	}
	all, err := Migrations()
	if err != nil {
		return nil, err
	}
	if err := conn.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+database); err != nil {
		return nil, fmt.Errorf("unable to create database %s: %w", database, err)
	}
	if err := conn.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+database+`.schema_migrations (
		version    UInt32,
		name       String,
		checksum   String,
		applied_at DateTime('UTC')
	) ENGINE = ReplacingMergeTree() ORDER BY version`); err != nil {
		return nil, fmt.Errorf("unable to create %s.schema_migrations: %w", database, err)
	}
	applied, err := appliedMigrations(ctx, conn, database)
	if err != nil {
		return nil, err
	}
	var done []Migration
	for _, m := range all {
		if m.Version > last {
			break
		}
		if sum, ok := applied[m.Version]; ok {
			if sum != m.Checksum {
				return done, fmt.Errorf("unable to migrate %s: migration %04d_%s changed after it was applied (add a new migration instead)", database, m.Version, m.Name)
			}
			continue
		}
		for i, stmt := range m.Statements {
			q := strings.ReplaceAll(stmt, "{db}", database)
			if err := conn.Exec(ctx, q); err != nil && !alreadyDone(err) {
				return done, fmt.Errorf("unable to apply migration %04d_%s statement %d to %s: %w", m.Version, m.Name, i+1, database, err)
			}
		}
		// INSERT ... SELECT: over the native protocol an INSERT ... VALUES
		// makes 18.16 wait for a data block that Exec never sends.
		if err := conn.Exec(ctx, "INSERT INTO "+database+".schema_migrations (version, name, checksum, applied_at) SELECT ?, ?, ?, ?",
			m.Version, m.Name, m.Checksum, time.Now().UTC()); err != nil {
			return done, fmt.Errorf("unable to record migration %04d_%s in %s: %w", m.Version, m.Name, database, err)
		}
		done = append(done, m)
	}
	return done, nil
}

func appliedMigrations(ctx context.Context, conn driver.Conn, database string) (map[uint32]string, error) {
	rows, err := conn.Query(ctx, "SELECT version, any(checksum) FROM "+database+".schema_migrations GROUP BY version")
	if err != nil {
		return nil, fmt.Errorf("unable to read %s.schema_migrations: %w", database, err)
	}
	defer rows.Close()
	out := map[uint32]string{}
	for rows.Next() {
		var v uint32
		var sum string
		if err := rows.Scan(&v, &sum); err != nil {
			return nil, fmt.Errorf("unable to read %s.schema_migrations: %w", database, err)
		}
		out[v] = sum
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("unable to read %s.schema_migrations: %w", database, err)
	}
	return out, nil
}

func alreadyDone(err error) bool {
	var ex *clickhouse.Exception
	if errors.As(err, &ex) {
		return ex.Code == codeDuplicateColumn || ex.Code == codeTableAlreadyExists ||
			// 44 is also a mistyped column; only the re-run is tolerated.
			(ex.Code == codeIllegalColumn && strings.Contains(ex.Message, "already exists"))
	}
	return false
}

// IsUnknownDatabase reports whether err is ClickHouse's "database does not
// exist", which readers turn into "has the recorder run yet?".
func IsUnknownDatabase(err error) bool {
	var ex *clickhouse.Exception
	return errors.As(err, &ex) && ex.Code == codeUnknownDatabase
}
