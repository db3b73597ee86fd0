-- transitions: where the next state's record is (Transition.next_obs_topic,
-- next_obs_partition, next_obs_offset; issue 18). A transition names s_t+1
-- by reference instead of embedding it: next_obs_event_id (the existing
-- column, now from the message's next_obs_event_id) finds it in obs, and
-- these three find its record byte for byte in event_log (topic, partition,
-- offset). Rows written before this migration read '' and 0. 18.16 has no
-- ADD COLUMN IF NOT EXISTS: a re-run meets DUPLICATE_COLUMN, which Migrate
-- tolerates.
ALTER TABLE {db}.transitions ADD COLUMN next_obs_topic String AFTER next_obs_event_id;

ALTER TABLE {db}.transitions ADD COLUMN next_obs_partition Int32 AFTER next_obs_topic;

ALTER TABLE {db}.transitions ADD COLUMN next_obs_offset Int64 AFTER next_obs_partition;
