package joiner

import (
	"strconv"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// deterministicID returns a UUID-shaped id derived from parts (version 8,
// "custom", per RFC 9562): the same inputs and settings always give the same
// id, so a replay re-emits identical events and downstream de-duplication by
// event id recognises them.
func deterministicID(fingerprint string, parts ...string) string {
	return eventspb.DeterministicID(fingerprint, parts...)
}

func transitionID(fp, episode string, step uint32) string {
	return deterministicID(fp, "transition", episode, strconv.FormatUint(uint64(step), 10))
}

func episodeID(fp, episode string) string {
	return deterministicID(fp, "episode", episode)
}

func deadLetterID(fp string, src Source) string {
	return deterministicID(fp, "dlq", src.Topic, strconv.FormatInt(int64(src.Partition), 10), strconv.FormatInt(src.Offset, 10))
}
