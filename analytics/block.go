package analytics

import (
	"context"
	"fmt"
	"strings"
	"unsafe"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// column is one typed column of a Block. Its values are appended to a
// clickhouse-go batch column-wise (one Append of a typed slice per column),
// which avoids the per-value reflection of row-wise appends.
type column interface {
	name() string
	values() any
	reset()
	// appendFrom appends the values of o, a column of the same type.
	appendFrom(o column)
}

// col is a column holding values of type T; T is the Go type clickhouse-go
// accepts for the ClickHouse column type (string, uint32, int64, []string...).
type col[T any] struct {
	n string
	v []T
}

func (c *col[T]) name() string { return c.n }
func (c *col[T]) values() any  { return c.v }
func (c *col[T]) reset()       { clear(c.v); c.v = c.v[:0] }
func (c *col[T]) add(v T)      { c.v = append(c.v, v) }

func (c *col[T]) appendFrom(o column) { c.v = append(c.v, o.(*col[T]).v...) }

// strCol is a String column kept as one byte buffer plus end offsets
// rather than a []string: a batch of buffered rows then holds no pointers,
// so the garbage collector never scans it. Without this the recorder spends
// a large share of its CPU re-scanning the millions of string headers of
// the batches it holds while decoding the next ones.
type strCol struct {
	n    string
	buf  []byte
	ends []uint32
}

func (c *strCol) name() string { return c.n }

func (c *strCol) add(v string) {
	c.buf = append(c.buf, v...)
	c.ends = append(c.ends, uint32(len(c.buf)))
}

// values returns the strings as views into buf (no copy): they are only
// read by the driver's Append, which copies them, before the next Reset.
func (c *strCol) values() any {
	out := make([]string, len(c.ends))
	start := uint32(0)
	for i, end := range c.ends {
		if end > start {
			out[i] = unsafe.String(&c.buf[start], int(end-start))
		}
		start = end
	}
	return out
}

func (c *strCol) reset() {
	c.buf = c.buf[:0]
	c.ends = c.ends[:0]
}

func (c *strCol) appendFrom(o column) {
	oc := o.(*strCol)
	base := uint32(len(c.buf))
	c.buf = append(c.buf, oc.buf...)
	for _, e := range oc.ends {
		c.ends = append(c.ends, base+e)
	}
}

// last replaces the value of the last row (rows are only ever appended).
func (c *strCol) setLast(v string) {
	start := uint32(0)
	if n := len(c.ends); n > 1 {
		start = c.ends[n-2]
	}
	c.buf = append(c.buf[:start], v...)
	c.ends[len(c.ends)-1] = uint32(len(c.buf))
}

func newStrCol(b *Block, name string) *strCol {
	c := &strCol{n: name}
	b.cols = append(b.cols, c)
	return c
}

// Block buffers the rows of one table, column by column, for one INSERT.
type Block struct {
	table string
	cols  []column
	rows  int
}

// newCol adds a column to b; columns are inserted in the order they are
// added, by name, so a block may name a subset of the table's columns.
func newCol[T any](b *Block, name string) *col[T] {
	c := &col[T]{n: name}
	b.cols = append(b.cols, c)
	return c
}

// Table is the table the block is inserted into.
func (b *Block) Table() string { return b.table }

// Len is the number of buffered rows.
func (b *Block) Len() int { return b.rows }

// Reset empties the block and keeps its capacity for the next batch.
func (b *Block) Reset() {
	for _, c := range b.cols {
		c.reset()
	}
	b.rows = 0
}

// insertSQL names every column: a table that gained columns in a later
// migration keeps accepting the blocks of an older build (they get defaults).
func (b *Block) insertSQL(database string) string {
	names := make([]string, len(b.cols))
	for i, c := range b.cols {
		names[i] = c.name()
	}
	return "INSERT INTO " + database + "." + b.table + " (" + strings.Join(names, ", ") + ")"
}

// Insert sends the block as one INSERT into database. Below ClickHouse's
// max_insert_block_size (1,048,576 rows) one INSERT becomes one part per
// partition, written atomically: it either all lands or none of it does.
func (b *Block) Insert(ctx context.Context, conn driver.Conn, database string) error {
	if b.rows == 0 {
		return nil
	}
	batch, err := conn.PrepareBatch(ctx, b.insertSQL(database))
	if err != nil {
		return fmt.Errorf("unable to prepare insert into %s.%s: %w", database, b.table, err)
	}
	for i, c := range b.cols {
		if err := batch.Column(i).Append(c.values()); err != nil {
			_ = batch.Abort()
			return fmt.Errorf("unable to append column %s of %s.%s: %w", c.name(), database, b.table, err)
		}
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("unable to insert %d rows into %s.%s: %w", b.rows, database, b.table, err)
	}
	return nil
}
