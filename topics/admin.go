package topics

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Change is one thing Apply did.
type Change struct {
	Topic  string
	Action string // "create", "add-partitions", "set-config"
	Detail string
}

func (c Change) String() string { return fmt.Sprintf("%s %s: %s", c.Action, c.Topic, c.Detail) }

// Drift is one difference between the catalog and the cluster.
type Drift struct {
	Topic string
	What  string // "missing", "partitions", "replication", or a config name
	Want  string
	Have  string
}

func (d Drift) String() string {
	return fmt.Sprintf("%s: %s is %s, want %s", d.Topic, d.What, d.Have, d.Want)
}

// Apply makes the cluster match the catalog: it creates missing topics,
// increases partition counts that are too low and sets topic configs that
// differ. Run twice, the second run changes nothing. Partition counts are
// never decreased and replication factors never changed (Kafka cannot do the
// first, and the second is a reassignment an operator must plan); Check
// reports both.
func Apply(ctx context.Context, cl *kgo.Client, c *Catalog) ([]Change, error) {
	c, err := Resolve(ctx, cl, c)
	if err != nil {
		return nil, err
	}
	adm := kadm.NewClient(cl)
	have, err := describe(ctx, cl, adm, c)
	if err != nil {
		return nil, err
	}
	var changes []Change
	var created, grown []string
	for _, s := range c.Specs {
		name := c.Name(s.Name)
		cur, ok := have[name]
		if !ok {
			cfg := map[string]*string{}
			for k, v := range s.Configs() {
				cfg[k] = kadm.StringPtr(v)
			}
			resp, err := adm.CreateTopic(ctx, s.Partitions, s.Replication, cfg, name)
			if err == nil {
				err = resp.Err
			}
			if errors.Is(err, kerr.TopicAlreadyExists) {
				// Created a moment ago and not yet in this broker's metadata:
				// nothing to do, and nothing changed.
				continue
			}
			if err != nil {
				return changes, fmt.Errorf("unable to create topic %s: %w", name, err)
			}
			created = append(created, name)
			changes = append(changes, Change{name, "create", fmt.Sprintf("%d partitions, rf %d", s.Partitions, s.Replication)})
			continue
		}
		if cur.partitions < s.Partitions {
			resp, err := adm.UpdatePartitions(ctx, int(s.Partitions), name)
			if err == nil {
				err = resp.Error()
			}
			if err != nil {
				return changes, fmt.Errorf("unable to add partitions to %s: %w", name, err)
			}
			grown = append(grown, name)
			changes = append(changes, Change{name, "add-partitions", fmt.Sprintf("%d -> %d", cur.partitions, s.Partitions)})
		}
		var alters []kadm.AlterConfig
		for _, k := range sortedKeys(s.Configs()) {
			want := s.Configs()[k]
			if cur.configs[k] != want {
				alters = append(alters, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: kadm.StringPtr(want)})
				changes = append(changes, Change{name, "set-config", fmt.Sprintf("%s %s -> %s", k, cur.configs[k], want)})
			}
		}
		if len(alters) > 0 {
			resp, err := adm.AlterTopicConfigs(ctx, alters, name)
			if err == nil {
				for _, r := range resp {
					if r.Err != nil {
						err = r.Err
					}
				}
			}
			if err != nil {
				return changes, fmt.Errorf("unable to set configs of %s: %w", name, err)
			}
		}
	}
	if err := waitVisible(ctx, cl, c, append(created, grown...)); err != nil {
		return changes, err
	}
	return changes, nil
}

// waitVisible returns once every broker has every named topic in its
// metadata with the catalog's partition count. CreateTopics and
// CreatePartitions return when the controller has committed the change;
// brokers learn of it a moment later, each on its own, and a consumer,
// DescribeConfigs or Check that reaches a broker in between would see the
// old state (UNKNOWN_TOPIC_OR_PARTITION on a three-broker cluster).
func waitVisible(ctx context.Context, cl *kgo.Client, c *Catalog, names []string) error {
	if len(names) == 0 {
		return nil
	}
	want := map[string]int32{}
	for _, s := range c.Specs {
		want[c.Name(s.Name)] = s.Partitions
	}
	req := kmsg.NewPtrMetadataRequest()
	for _, n := range names {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(n)
		req.Topics = append(req.Topics, rt)
	}
	for {
		missing, err := notVisible(ctx, cl, req, want)
		if err != nil {
			return err
		}
		if len(missing) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("unable to see topics with their partitions on every broker (%s): %w", strings.Join(missing, "; "), ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// notVisible asks every broker of the cluster for req's topics and names
// each topic a broker does not know yet with want's partitions.
func notVisible(ctx context.Context, cl *kgo.Client, req *kmsg.MetadataRequest, want map[string]int32) ([]string, error) {
	first, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("unable to list topics: %w", err)
	}
	var missing []string
	for _, b := range first.Brokers {
		kr, err := cl.Broker(int(b.NodeID)).Request(ctx, req)
		if err != nil {
			// A broker that is down cannot be waited for; the ones
			// that answer are what clients reach.
			continue
		}
		resp := kr.(*kmsg.MetadataResponse)
		seen := map[string]bool{}
		for _, t := range resp.Topics {
			if t.Topic != nil && t.ErrorCode == 0 && int32(len(t.Partitions)) >= want[*t.Topic] {
				seen[*t.Topic] = true
			}
		}
		for _, rt := range req.Topics {
			if !seen[*rt.Topic] {
				missing = append(missing, fmt.Sprintf("%s not on broker %d", *rt.Topic, b.NodeID))
			}
		}
	}
	return missing, nil
}

// Check reports every difference between the catalog and the cluster.
func Check(ctx context.Context, cl *kgo.Client, c *Catalog) ([]Drift, error) {
	c, err := Resolve(ctx, cl, c)
	if err != nil {
		return nil, err
	}
	have, err := describe(ctx, cl, kadm.NewClient(cl), c)
	if err != nil {
		return nil, err
	}
	var drifts []Drift
	for _, s := range c.Specs {
		name := c.Name(s.Name)
		cur, ok := have[name]
		if !ok {
			drifts = append(drifts, Drift{name, "missing", "present", "absent"})
			continue
		}
		if cur.partitions != s.Partitions {
			drifts = append(drifts, Drift{name, "partitions", fmt.Sprint(s.Partitions), fmt.Sprint(cur.partitions)})
		}
		if cur.replication != s.Replication {
			drifts = append(drifts, Drift{name, "replication", fmt.Sprint(s.Replication), fmt.Sprint(cur.replication)})
		}
		for _, k := range sortedKeys(s.Configs()) {
			if want := s.Configs()[k]; cur.configs[k] != want {
				drifts = append(drifts, Drift{name, k, want, cur.configs[k]})
			}
		}
	}
	return drifts, nil
}

// Resolve is c.ForBrokers with the number of brokers of the cluster cl
// reaches. It counts the brokers the controller has registered, fenced ones
// included (DescribeCluster v2, Kafka 4.0): a broker that is down for a
// restart still holds its replicas, and a topic created meanwhile must not
// get fewer. Older brokers answer with the live ones only.
func Resolve(ctx context.Context, cl *kgo.Client, c *Catalog) (*Catalog, error) {
	if !slices.ContainsFunc(c.Specs, func(s Spec) bool { return s.Replication == AutoReplication }) {
		return c, nil
	}
	n, err := brokerCount(ctx, cl)
	if err != nil {
		return nil, err
	}
	return c.ForBrokers(n), nil
}

func brokerCount(ctx context.Context, cl *kgo.Client) (int, error) {
	req := kmsg.NewPtrDescribeClusterRequest()
	req.IncludeFencedBrokers = true
	resp, err := req.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		return 0, fmt.Errorf("unable to count the cluster's brokers: %w", err)
	}
	return len(resp.Brokers), nil
}

type topicState struct {
	partitions  int32
	replication int16
	configs     map[string]string
}

// describe reads the catalog's topics as the cluster has them.
func describe(ctx context.Context, cl *kgo.Client, adm *kadm.Client, c *Catalog) (map[string]topicState, error) {
	names := c.Names()
	// A raw metadata request, not kadm.ListTopics: kadm answers from the
	// client's metadata cache (MetadataMinAge, 5s by default), so a topic
	// created a moment ago would look missing.
	req := kmsg.NewPtrMetadataRequest()
	for _, n := range names {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(n)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("unable to list topics: %w", err)
	}
	out := map[string]topicState{}
	var present []string
	for _, t := range resp.Topics {
		if t.Topic == nil || !slices.Contains(names, *t.Topic) {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			if errors.Is(err, kerr.UnknownTopicOrPartition) {
				continue
			}
			return nil, fmt.Errorf("unable to describe topic %s: %w", *t.Topic, err)
		}
		rf := 0
		for _, p := range t.Partitions {
			rf = max(rf, len(p.Replicas))
		}
		out[*t.Topic] = topicState{partitions: int32(len(t.Partitions)), replication: int16(rf), configs: map[string]string{}}
		present = append(present, *t.Topic)
	}
	if len(present) == 0 {
		return out, nil
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, present...)
	if err != nil {
		return nil, fmt.Errorf("unable to describe topic configs: %w", err)
	}
	for _, rc := range rcs {
		if rc.Err != nil {
			return nil, fmt.Errorf("unable to describe configs of %s: %w", rc.Name, rc.Err)
		}
		st := out[rc.Name]
		for _, cfg := range rc.Configs {
			if cfg.Value != nil {
				st.configs[cfg.Key] = *cfg.Value
			}
		}
	}
	return out, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
