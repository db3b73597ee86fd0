package loadtest

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
)

// BusiestLeader is the node id of the broker that leads the most
// partitions (the internal topics' included: the group and transaction
// coordinators move with their partition's leader), ties to the lowest id,
// and the partitions each broker leads.
func BusiestLeader(ctx context.Context, adm *kadm.Client) (int32, map[int32]int, error) {
	md, err := adm.Metadata(ctx)
	if err != nil {
		return -1, nil, fmt.Errorf("unable to read the cluster's metadata: %w", err)
	}
	led := map[int32]int{}
	for _, td := range md.Topics {
		for _, pd := range td.Partitions {
			if pd.Leader >= 0 {
				led[pd.Leader]++
			}
		}
	}
	var best int32 = -1
	for id, n := range led {
		if best < 0 || n > led[best] || n == led[best] && id < best {
			best = id
		}
	}
	if best < 0 {
		return -1, led, fmt.Errorf("unable to find a partition leader in the cluster's metadata")
	}
	return best, led, nil
}

// GroupCoordinator is the node id of the broker that coordinates group.
func GroupCoordinator(ctx context.Context, adm *kadm.Client, group string) (int32, error) {
	c, ok := adm.FindGroupCoordinators(ctx, group)[group]
	switch {
	case !ok:
		return -1, fmt.Errorf("unable to find the coordinator of group %s: no answer", group)
	case c.Err != nil:
		return -1, fmt.Errorf("unable to find the coordinator of group %s: %w", group, c.Err)
	}
	return c.NodeID, nil
}
