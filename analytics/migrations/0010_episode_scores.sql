-- Scores as the field reports them (issue 37): an episode's raw reward (on
-- MiniWoB++ its score, in [-1, 1]; 1 is a strict success) and time-decayed
-- reward, from its done reward. Rows recorded before read 0.
ALTER TABLE {db}.episodes ADD COLUMN raw_reward Float64 AFTER success;
ALTER TABLE {db}.episodes ADD COLUMN decayed_reward Float64 AFTER raw_reward;
