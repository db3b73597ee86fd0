package loadtest

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/services/joiner"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// VerifyInputs reads the catalog's input topics (obs, actions, rewards) to
// their end and compares each with the records the broker acknowledged to
// Generate: an acknowledged record missing from its place is lost (a
// broker that acknowledged and then forgot it), a record nobody was told of
// is duplicated (a producer retry written twice). The generator's own
// deliberate duplicates are acknowledged records like any other.
func VerifyInputs(ctx context.Context, newClient joiner.ClientFunc, cat *topics.Catalog, exp *Expected) ([]Verdict, error) {
	var out []Verdict
	for _, topic := range []string{topics.Obs, topics.Actions, topics.Rewards} {
		name := cat.Name(topic)
		acked := map[Landed]bool{}
		for _, l := range exp.Acked[name] {
			acked[l] = true
		}
		v := Verdict{Name: topic, Expected: len(acked)}
		seen := map[Landed]bool{}
		err := joiner.ReadUncommitted(ctx, newClient, name, nil, func(r *kgo.Record) error {
			at := Landed{r.Partition, r.Offset}
			switch {
			case acked[at] && !seen[at]:
				v.Found++
			default:
				v.Duplicated++
			}
			seen[at] = true
			return nil
		})
		if err != nil {
			return nil, err
		}
		v.Lost = v.Expected - v.Found
		out = append(out, v)
	}
	return out, nil
}
