package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// The episode view's SQL. Like the saved queries, it is fixed text with
// bound parameters: the page can only choose their values. Raw tables are
// ReplacingMergeTrees, so a row may be there twice until a merge: LIMIT 1
// BY event_id (or episode_id) reads each once. All of it runs on 18.16.
const (
	// @frames = '1' keeps the episodes with at least one stored frame.
	sqlEpisodes = `SELECT episode_id, family, task_id, toString(split) AS split_name, toString(kind) AS kind_name, success, aborted,
       truncated, length, total_return, policy_name, produced_at,
       episode_id IN (SELECT episode_id FROM frames WHERE @run = '' OR run = @run) AS has_frames
FROM episodes
WHERE produced_at >= @since AND produced_at < @until AND (@run = '' OR run = @run)
  AND (@family = '' OR family = @family OR task_id = @family)
  AND (@split = '' OR toString(split) = @split) AND (@kind = '' OR toString(kind) = @kind)
  AND (@success = '' OR toString(success) = @success)
  AND (@frames = '' OR episode_id IN (SELECT episode_id FROM frames WHERE @run = '' OR run = @run))
ORDER BY produced_at DESC, episode_id
LIMIT 1 BY episode_id
LIMIT 200`

	sqlEpisode = `SELECT episode_id, family, task_id, toString(split) AS split_name, toString(kind) AS kind_name, success, aborted,
       truncated, length, total_return, policy_name, produced_at, 0 AS has_frames
FROM episodes WHERE episode_id = @episode LIMIT 1`

	sqlEpisodeObs = `SELECT event_id, step, frame_sha256, frame_format, width, height, element_bids, element_boxes, stable,
       stability_score, terminal, url
FROM obs WHERE episode_id = @episode
ORDER BY step, produced_at_ns LIMIT 1 BY event_id`

	sqlEpisodeActions = `SELECT step, obs_event_id, raw, toString(action_type) AS action_name, bid, x, y, to_x, to_y
FROM actions WHERE episode_id = @episode
ORDER BY step, produced_at_ns LIMIT 1 BY event_id`

	// The last reward of each step (a retried step may have two).
	sqlEpisodeRewards = `SELECT step, reward, done, success
FROM rewards WHERE episode_id = @episode
ORDER BY step, produced_at_ns DESC LIMIT 1 BY step`

	sqlStoredFrames = `SELECT DISTINCT hash FROM frames WHERE hash IN (SELECT arrayJoin(@hashes))`

	sqlFrame = `SELECT bytes, format FROM frames WHERE hash = @hash LIMIT 1`
)

// maxSteps bounds the steps one episode answer carries.
const maxSteps = 1000

type episodeRow struct {
	ID         string    `ch:"episode_id" json:"episode_id"`
	Family     string    `ch:"family" json:"family"`
	TaskID     string    `ch:"task_id" json:"task_id"`
	Split      string    `ch:"split_name" json:"split"`
	Kind       string    `ch:"kind_name" json:"kind"`
	Success    uint8     `ch:"success" json:"success"`
	Aborted    uint8     `ch:"aborted" json:"aborted"`
	Truncated  uint8     `ch:"truncated" json:"truncated"`
	Length     uint32    `ch:"length" json:"length"`
	Return     float64   `ch:"total_return" json:"total_return"`
	Policy     string    `ch:"policy_name" json:"policy_name"`
	ProducedAt time.Time `ch:"produced_at" json:"produced_at"`
	HasFrames  uint8     `ch:"has_frames" json:"has_frames"`
}

type obsRow struct {
	EventID        string      `ch:"event_id"`
	Step           uint32      `ch:"step"`
	FrameSHA256    string      `ch:"frame_sha256"`
	FrameFormat    string      `ch:"frame_format"`
	Width          uint32      `ch:"width"`
	Height         uint32      `ch:"height"`
	Bids           []string    `ch:"element_bids"`
	Boxes          [][]float32 `ch:"element_boxes"`
	Stable         uint8       `ch:"stable"`
	StabilityScore float64     `ch:"stability_score"`
	Terminal       uint8       `ch:"terminal"`
	URL            string      `ch:"url"`
}

type actionRow struct {
	Step       uint32  `ch:"step"`
	ObsEventID string  `ch:"obs_event_id"`
	Raw        string  `ch:"raw"`
	Type       string  `ch:"action_name"`
	Bid        string  `ch:"bid"`
	X          float32 `ch:"x"`
	Y          float32 `ch:"y"`
	ToX        float32 `ch:"to_x"`
	ToY        float32 `ch:"to_y"`
}

type rewardRow struct {
	Step    uint32  `ch:"step"`
	Reward  float64 `ch:"reward"`
	Done    uint8   `ch:"done"`
	Success uint8   `ch:"success"`
}

// stepView is one observation of an episode and what was done from it.
type stepView struct {
	Step           uint32    `json:"step"`
	ObsEventID     string    `json:"obs_event_id"`
	Frame          string    `json:"frame"`        // hex sha256, the frames table's hash
	FrameStored    bool      `json:"frame_stored"` // false: the episode was not sampled (or it predates frames)
	Width          uint32    `json:"width"`
	Height         uint32    `json:"height"`
	Stable         bool      `json:"stable"`
	StabilityScore float64   `json:"stability_score"`
	Terminal       bool      `json:"terminal"`
	URL            string    `json:"url"`
	Action         string    `json:"action"` // BrowserGym form; empty when no action was taken from this frame
	ActionType     string    `json:"action_type,omitempty"`
	Bid            string    `json:"bid,omitempty"`
	Box            []float32 `json:"box,omitempty"`   // the acted element's [x, y, w, h] in frame pixels
	Point          []float32 `json:"point,omitempty"` // a coordinate action's [x, y]
	To             []float32 `json:"to,omitempty"`    // a drag's release point [x, y]
	Reward         *float64  `json:"reward,omitempty"`
	Done           bool      `json:"done"`
	Success        bool      `json:"success"`
}

type episodeList struct {
	Episodes []episodeRow `json:"episodes"`
	Error    string       `json:"error,omitempty"`
}

type episodeDetail struct {
	Episode *episodeRow `json:"episode,omitempty"`
	Steps   []stepView  `json:"steps"`
	Error   string      `json:"error,omitempty"`
}

// serveEpisodes lists the window's episodes, newest first, filtered by
// ?run, ?family (a family or a task id), ?split, ?kind, ?success (1 or 0)
// and ?frames=1 (only those with stored frames).
func (d *Dashboard) serveEpisodes(w http.ResponseWriter, r *http.Request) {
	since, until, err := window(r, time.Now().UTC())
	if err != nil {
		writeJSON(w, http.StatusBadRequest, episodeList{Error: err.Error()})
		return
	}
	q := r.URL.Query()
	args := []any{clickhouse.Named("since", since.UTC().Truncate(time.Second)), clickhouse.Named("until", until.UTC().Truncate(time.Second))}
	for _, k := range []string{"run", "family", "split", "kind", "success", "frames"} {
		args = append(args, clickhouse.Named(k, q.Get(k)))
	}
	out := episodeList{Episodes: []episodeRow{}}
	err = d.query(r.Context(), func(ctx context.Context, conn queryer) error {
		return conn.Select(ctx, &out.Episodes, sqlEpisodes, args...)
	})
	if err != nil {
		out.Error = err.Error()
		writeJSON(w, http.StatusServiceUnavailable, out)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// serveEpisode answers ?id=EPISODE: its row and its steps, each an
// observation with the action chosen from it and that step's reward.
func (d *Dashboard) serveEpisode(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	if id == "" {
		writeJSON(w, http.StatusBadRequest, episodeDetail{Error: "missing id: /api/episode?id=EPISODE_ID"})
		return
	}
	var (
		eps     []episodeRow
		obs     []obsRow
		actions []actionRow
		rewards []rewardRow
		stored  []struct {
			Hash string `ch:"hash"`
		}
	)
	ep := clickhouse.Named("episode", id)
	err := d.query(r.Context(), func(ctx context.Context, conn queryer) error {
		for _, s := range []struct {
			dest any
			sql  string
		}{{&eps, sqlEpisode}, {&obs, sqlEpisodeObs}, {&actions, sqlEpisodeActions}, {&rewards, sqlEpisodeRewards}} {
			if err := conn.Select(ctx, s.dest, s.sql, ep); err != nil {
				return err
			}
		}
		if len(obs) > maxSteps {
			obs = obs[:maxSteps]
		}
		hashes := make([]string, 0, len(obs))
		for _, o := range obs {
			if o.FrameSHA256 != "" {
				hashes = append(hashes, o.FrameSHA256)
			}
		}
		if len(hashes) == 0 {
			return nil
		}
		return conn.Select(ctx, &stored, sqlStoredFrames, clickhouse.Named("hashes", hashes))
	})
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, episodeDetail{Steps: []stepView{}, Error: err.Error()})
		return
	}
	if len(eps) == 0 && len(obs) == 0 {
		writeJSON(w, http.StatusNotFound, episodeDetail{Steps: []stepView{}, Error: fmt.Sprintf("episode %q has no recorded episode or observation", id)})
		return
	}
	have := map[string]bool{}
	for _, s := range stored {
		have[s.Hash] = true
	}
	out := episodeDetail{Steps: steps(obs, actions, rewards, have)}
	if len(eps) > 0 {
		out.Episode = &eps[0]
	}
	writeJSON(w, http.StatusOK, out)
}

// steps pairs each observation with the action chosen from it (by the
// action's obs_event_id, else the last observation of the action's step)
// and gives that action's step reward.
func steps(obs []obsRow, actions []actionRow, rewards []rewardRow, stored map[string]bool) []stepView {
	out := make([]stepView, len(obs))
	byID := map[string]int{}
	lastOfStep := map[uint32]int{}
	for i, o := range obs {
		out[i] = stepView{Step: o.Step, ObsEventID: o.EventID, Frame: o.FrameSHA256, FrameStored: stored[o.FrameSHA256],
			Width: o.Width, Height: o.Height, Stable: o.Stable == 1, StabilityScore: o.StabilityScore, Terminal: o.Terminal == 1, URL: o.URL}
		byID[o.EventID] = i
		lastOfStep[o.Step] = i
	}
	reward := map[uint32]rewardRow{}
	for _, rw := range rewards {
		reward[rw.Step] = rw
	}
	for _, a := range actions {
		i, ok := byID[a.ObsEventID]
		if !ok {
			if i, ok = lastOfStep[a.Step]; !ok {
				continue // its observation was not recorded
			}
		}
		s := &out[i]
		s.Action, s.ActionType, s.Bid = a.Raw, a.Type, a.Bid
		if s.Action == "" {
			s.Action = a.Type + "(" + strconv.Quote(a.Bid) + ")"
		}
		o := obs[i]
		for j, bid := range o.Bids {
			if a.Bid != "" && bid == a.Bid && j < len(o.Boxes) && len(o.Boxes[j]) == 4 {
				s.Box = o.Boxes[j]
			}
		}
		if a.Bid == "" && (a.X != 0 || a.Y != 0) {
			s.Point = []float32{a.X, a.Y}
		}
		if a.ToX != 0 || a.ToY != 0 {
			s.To = []float32{a.ToX, a.ToY}
		}
		if rw, ok := reward[a.Step]; ok {
			v := rw.Reward
			s.Reward, s.Done, s.Success = &v, rw.Done == 1, rw.Success == 1
		}
	}
	return out
}

// frameHash is a frames table key: a hex sha256.
var frameHash = regexp.MustCompile(`^[0-9a-f]{64}$`)

// serveFrame answers /api/frames/{hash} with the stored image. A hash names
// its bytes, so the answer may be cached for good.
func (d *Dashboard) serveFrame(w http.ResponseWriter, r *http.Request) {
	hash := r.PathValue("hash")
	if !frameHash.MatchString(hash) {
		http.Error(w, "invalid frame hash: want 64 lowercase hex digits", http.StatusBadRequest)
		return
	}
	var rows []struct {
		Bytes  string `ch:"bytes"`
		Format string `ch:"format"`
	}
	err := d.query(r.Context(), func(ctx context.Context, conn queryer) error {
		return conn.Select(ctx, &rows, sqlFrame, clickhouse.Named("hash", hash))
	})
	switch {
	case err != nil:
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	case len(rows) == 0:
		http.Error(w, "frame "+hash+" is not stored", http.StatusNotFound)
		return
	}
	ct := "image/jpeg"
	if rows[0].Format == "png" {
		ct = "image/png"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	w.Header().Set("Content-Length", strconv.Itoa(len(rows[0].Bytes)))
	_, _ = w.Write([]byte(rows[0].Bytes))
}

// queryer is what the episode view needs of a connection.
type queryer interface {
	Select(ctx context.Context, dest any, query string, args ...any) error
}

// query runs fn on the shared connection under a deadline, dropping the
// connection when it fails (a restarted server: the next request dials).
func (d *Dashboard) query(ctx context.Context, fn func(context.Context, queryer) error) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := d.connection(ctx)
	if err != nil {
		return err
	}
	if err := fn(ctx, conn); err != nil {
		if !errors.Is(err, context.Canceled) {
			d.dropConnection(conn)
			d.log.Warn("dashboard episode query failed", "err", err)
		}
		return fmt.Errorf("unable to query the episode view: %w", err)
	}
	return nil
}
