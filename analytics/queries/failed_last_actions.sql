-- Failure analysis: the most frequent last actions of failed episodes, per task family and kind (from actions and episodes).
-- A failed episode has no success and was not aborted (truncated ones
-- included); its last action is the one of its highest step, read among
-- the actions of the window and the hour before it. pct_of_failed is the
-- share of the family's failed episodes of that kind (those with a recorded
-- action) that ended on that action type; example is the smallest
-- BrowserGym text of the group. Demonstrations are left out.
SELECT family, kind, action_type, count() AS episodes, any(failed) AS failed_episodes,
       round(100 * episodes / failed_episodes, 1) AS pct_of_failed, min(raw) AS example
FROM
(
    SELECT family, kind, failed, action_type, raw
    FROM
    (
        SELECT family, kind, count() AS failed, groupArray(last_type) AS types, groupArray(last_raw) AS raws
        FROM
        (
            {{policy_failures}}
        )
        ANY INNER JOIN
        (
            SELECT episode_id, argMax(action_type, step) AS last_type, argMax(raw, step) AS last_raw
            FROM actions
            WHERE produced_at >= @since - 3600 AND produced_at < @until AND (@run = '' OR run = @run)
            GROUP BY episode_id
        ) USING episode_id
        GROUP BY family, kind
    )
    ARRAY JOIN types AS action_type, raws AS raw
)
GROUP BY family, kind, action_type
ORDER BY family, kind, episodes DESC, action_type
