-- MiniWoB++ tasks as the published tables score them, per task and kind (from episodes): the score (the mean raw reward, in [-1, 1]), strict success (raw reward 1) and success as raw reward > 0, and the mean time-decayed reward.
-- kind greedy is the held-out evaluation (test seeds); aborted episodes are
-- left out. Episodes recorded before their raw reward was (migration 0010)
-- read 0.
SELECT
    family,
    kind,
    count() AS episodes,
    round(avg(raw_reward), 3) AS score,
    round(100 * countIf(raw_reward >= 1) / episodes, 1) AS strict_pct,
    round(100 * countIf(raw_reward > 0) / episodes, 1) AS raw_positive_pct,
    round(avg(decayed_reward), 3) AS decayed
FROM
(
    SELECT episode_id, family, kind, raw_reward, decayed_reward
    FROM episodes
    WHERE produced_at >= @since AND produced_at < @until AND (@run = '' OR run = @run)
      AND family LIKE 'miniwob/%' AND aborted = 0
    LIMIT 1 BY episode_id
)
GROUP BY family, kind
ORDER BY family, kind
