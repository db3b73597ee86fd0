package eventspb

import (
	"crypto/sha256"
	"time"

	"github.com/google/uuid"
)

// SchemaVersion is stamped on every envelope this build produces. Bump it
// when fields are added that consumers may want to branch on; it never
// decreases.
const SchemaVersion uint32 = 1

// NewEnvelope returns an envelope with a fresh event id, the current schema
// version and produced-at now. Callers fill episode, step and source.
func NewEnvelope(producer string) *Envelope {
	now := time.Now()
	return &Envelope{
		EventId:            NewEventID(),
		SchemaVersion:      SchemaVersion,
		Producer:           producer,
		ProducedAtUnixNano: now.UnixNano(),
	}
}

// NewEventID returns a UUIDv7 string: the millisecond timestamp first, so
// ids sort by creation time (ClickHouse sorting keys, Kafka log inspection),
// then random bits, so two producers never collide in practice. google/uuid
// also keeps ids of one process in order within a millisecond.
func NewEventID() string {
	// NewV7 fails only when crypto/rand does, which aborts the program
	// instead of returning an error since Go 1.24.
	return uuid.Must(uuid.NewV7()).String()
}

// DeterministicID returns a UUID-shaped id derived from seed and parts
// (version 8, "custom", per RFC 9562): the same inputs always give the same
// id, so an event emitted again (a replay, or a retry after a crash) carries
// the id of the first and downstream de-duplication by event id drops it.
func DeterministicID(seed string, parts ...string) string {
	h := sha256.New()
	h.Write([]byte(seed))
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	// Not uuid.NewHash: it hashes a namespace first, which would change
	// every id already written (and the golden files that pin them).
	var u uuid.UUID
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x80 // version 8
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	return u.String()
}
