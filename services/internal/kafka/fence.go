package kafka

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Fenced reports whether err says a transactional producer was fenced: a
// newer producer initialised the same transactional id (the coordinator
// bumped the epoch and aborted what the old one had open), so this one can
// no longer write or commit. Retrying cannot help; only the newer producer
// may go on.
func Fenced(err error) bool {
	return errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch)
}
