-- rewards: the page's time-decayed reward and whether the page's own time
-- limit ended the episode (Reward.decayed_reward, Reward.timed_out; issue
-- 16). MiniWoB++ results are reported on the raw reward (success = raw > 0)
-- and on the time-decayed one; both are kept. Rows written before this
-- migration read 0 for both. 18.16 has no ADD COLUMN IF NOT EXISTS: a re-run
-- meets DUPLICATE_COLUMN, which Migrate tolerates.
ALTER TABLE {db}.rewards ADD COLUMN decayed_reward Float64 AFTER raw_reward;

ALTER TABLE {db}.rewards ADD COLUMN timed_out UInt8 AFTER aborted;
