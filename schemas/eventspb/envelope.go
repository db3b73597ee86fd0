package eventspb

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"time"
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
		EventId:            newEventID(now),
		SchemaVersion:      SchemaVersion,
		Producer:           producer,
		ProducedAtUnixNano: now.UnixNano(),
	}
}

// NewEventID returns a UUIDv7 string: the millisecond timestamp first, so
// ids sort by creation time (ClickHouse sorting keys, Kafka log inspection),
// then 74 random bits, so two producers never collide in practice.
func NewEventID() string { return newEventID(time.Now()) }

func newEventID(now time.Time) string {
	var u [16]byte
	_, _ = rand.Read(u[:]) // crypto/rand.Read never fails (it aborts the program instead).
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(now.UnixMilli()))
	copy(u[:6], ms[2:])
	u[6] = u[6]&0x0f | 0x70 // version 7
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	return FormatUUID(u)
}

// FormatUUID writes u in the canonical 8-4-4-4-12 hex form.
func FormatUUID(u [16]byte) string {
	var s [36]byte
	hex.Encode(s[0:8], u[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], u[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], u[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], u[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], u[10:16])
	return string(s[:])
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
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x80 // version 8
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	return FormatUUID(u)
}
