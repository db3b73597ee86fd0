-- Trajectories you can look at (issue 20).
--
-- obs keeps each element's bid and box (wire-frame pixels,
-- [x, y, w, h]), in the observation's element order, so that the dashboard
-- can outline the element an action names (actions.bid). Rows recorded
-- before this migration read empty arrays: their steps show no outline.
ALTER TABLE {db}.obs ADD COLUMN element_bids Array(String) AFTER elements;
ALTER TABLE {db}.obs ADD COLUMN element_boxes Array(Array(Float32)) AFTER element_bids;

-- frames: the wire frames (JPEG as the actor encodes them) of
-- every greedy evaluation episode and of a deterministic sample of the
-- others (the recorder's -recorder-frame-sample, 1 in 20 by default),
-- keyed by content: hash is the hex sha256 of bytes, the obs row's
-- frame_sha256. A frame seen twice (a static page, a re-delivered
-- record) is one row once merged (ReplacingMergeTree; readers take any
-- one copy). Partitioned by run so that a run's frames are pruned with
-- ALTER TABLE frames DROP PARTITION 'run-prefix.' (18.16 has no TTL): a
-- frame two runs share is kept once per run.
CREATE TABLE IF NOT EXISTS {db}.frames (
    hash        String,
    run         String,
    format      String,
    width       UInt32,
    height      UInt32,
    bytes       String,
    episode_id  String,
    recorded_at DateTime('UTC')
) ENGINE = ReplacingMergeTree() PARTITION BY run ORDER BY hash;
