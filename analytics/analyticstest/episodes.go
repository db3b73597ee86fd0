package analyticstest

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// The recorded episodes of EpisodeDataset: their frames are FrameW x FrameH
// JPEGs, each of one colour (FrameColors, by step), and the page's two
// elements b1 and b2 sit at Boxes (wire-frame pixels, [x, y, w, h]).
const (
	FrameW = 160
	FrameH = 120
)

var (
	FrameColors = []color.RGBA{{40, 80, 200, 255}, {40, 160, 60, 255}, {128, 128, 128, 255}}
	// TrainColor is the training episode's frame: a frame of its own, so
	// that whether it is stored depends on its episode's sampling only.
	TrainColor = color.RGBA{200, 120, 40, 255}
	Boxes      = map[string][4]float32{"b1": {20, 30, 40, 20}, "b2": {90, 60, 50, 30}}
)

// EpisodeDataset is two recorded episodes with frames, at T0+1m:
//
//   - <prefix>eval-1: greedy (held-out split test) click/seed-9, policy pi
//     v2, successful in 2 steps. Observations at steps 0, 1 and 2 (the
//     last terminal) with frames of FrameColors[step], stability scores
//     0.5, 0.75 and 1; actions click("b1") at step 0 and fill("b2", "hi")
//     at step 1, each naming its observation; rewards 0 (step 0) and 1
//     (step 1, done, success).
//   - <prefix>train-1: a training episode (split train, kind sample) of
//     family type, failed in 1 step: one observation (TrainColor), the
//     action click("b2") and reward 0 (done).
func EpisodeDataset(prefix string) []Item {
	var items []Item
	offsets := map[string]int64{}
	n := 0
	add := func(topic string, m proto.Message, env *eventspb.Envelope) {
		n++
		env.EventId = fmt.Sprintf("%sev-%03d", prefix, n)
		env.SchemaVersion = eventspb.SchemaVersion
		env.Producer = "actor-1"
		env.ProducedAtUnixNano = T0.Add(time.Minute + time.Duration(n)*time.Second).UnixNano()
		b, err := eventspb.Marshal(m)
		if err != nil {
			panic(fmt.Sprintf("episode dataset event %d does not marshal: %v", n, err)) // a bug in this file
		}
		at := time.Unix(0, env.ProducedAtUnixNano).UTC()
		items = append(items, Item{Topic: topic, Record: analytics.Record{Topic: prefix + topic, Offset: offsets[topic], Value: b,
			Timestamp: at, RecordedAt: at, Run: prefix}})
		offsets[topic]++
	}
	elements := func() []*eventspb.Element {
		var out []*eventspb.Element
		for _, bid := range []string{"b1", "b2"} {
			b := Boxes[bid]
			out = append(out, &eventspb.Element{Bid: bid, Role: "button", Box: &eventspb.Box{X: b[0], Y: b[1], W: b[2], H: b[3]}})
		}
		return out
	}
	episode := func(id, family string, split eventspb.Split, actions []string, bids []string, success bool) {
		id = prefix + id
		task := &eventspb.TaskRef{TaskId: family + "/seed-9", Site: "s1", Family: family, Tier: eventspb.Tier_TIER_EASY, Split: split}
		greedy := split == eventspb.Split_SPLIT_TEST
		scores := []float64{0.5, 0.75, 1}
		for step := 0; step <= len(actions); step++ {
			terminal := step == len(actions)
			if terminal && !success {
				break // a failed episode's last observation was not sent
			}
			env := &eventspb.Envelope{EpisodeId: id, Step: uint32(step), Source: eventspb.Source_SOURCE_POLICY}
			c := FrameColors[step]
			if !greedy {
				c = TrainColor
			}
			add(topics.Obs, &eventspb.Observation{Envelope: env, Task: task, Frame: Frame(c), FrameFormat: "jpeg",
				Width: FrameW, Height: FrameH, Url: "http://127.0.0.1/" + family, Elements: elements(),
				Stable: true, StabilityScore: scores[step], Terminal: terminal}, env)
			if terminal {
				break
			}
			obsID := env.EventId
			aenv := &eventspb.Envelope{EpisodeId: id, Step: uint32(step), Source: eventspb.Source_SOURCE_POLICY}
			add(topics.Actions, &eventspb.Action{Envelope: aenv, Type: eventspb.ActionType_ACTION_TYPE_CLICK, Bid: bids[step],
				ObsEventId: obsID, Raw: actions[step], PolicyName: "pi", PolicyVersion: 2, Greedy: greedy}, aenv)
			last := step == len(actions)-1
			renv := &eventspb.Envelope{EpisodeId: id, Step: uint32(step), Source: eventspb.Source_SOURCE_POLICY}
			add(topics.Rewards, &eventspb.Reward{Envelope: renv, Reward: map[bool]float64{true: 1}[last && success],
				Done: last, Success: last && success}, renv)
		}
		eenv := &eventspb.Envelope{EpisodeId: id, Source: eventspb.Source_SOURCE_POLICY}
		add(topics.Episodes, &eventspb.Episode{Envelope: eenv, EpisodeId: id, TaskId: task.TaskId, Family: family, Site: "s1",
			Tier: task.Tier, Split: split, Length: uint32(len(actions)), Success: success, PolicyName: "pi",
			PolicyVersionsUsed: []uint64{2}, TotalReturn: map[bool]float64{true: 1}[success]}, eenv)
	}
	episode("eval-1", "click", eventspb.Split_SPLIT_TEST, []string{`click("b1")`, `fill("b2", "hi")`}, []string{"b1", "b2"}, true)
	episode("train-1", "type", eventspb.Split_SPLIT_TRAIN, []string{`click("b2")`}, []string{"b2"}, false)
	return items
}

// Frame is a FrameW x FrameH JPEG of one colour.
func Frame(c color.RGBA) []byte {
	img := image.NewRGBA(image.Rect(0, 0, FrameW, FrameH))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, 255
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
		panic(fmt.Sprintf("unable to encode a frame: %v", err)) // in-memory encoding of a valid image
	}
	return buf.Bytes()
}
