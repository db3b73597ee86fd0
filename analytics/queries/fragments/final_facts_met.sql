-- Each episode's final reward's facts_met (met), for the rewards of the
-- window and the hour before it.
SELECT episode_id, argMax(facts_met, step) AS met
FROM rewards
WHERE produced_at >= @since - 3600 AND produced_at < @until AND (@run = '' OR run = @run) AND done = 1
GROUP BY episode_id
