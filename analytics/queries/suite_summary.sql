-- Throughput and success per suite and kind: built-in families against MiniWoB++ tasks (families named miniwob/<task>) (from episode_lengths_by_kind_1m).
-- kind is sample (training), greedy (held-out evaluation) or demo.
-- success_pct leaves aborted episodes out; steps sums the episodes'
-- lengths; the rates are per active minute (a minute with at least one
-- episode of the suite and kind ending in it).
SELECT
    suite,
    kind,
    sum(n) AS episodes,
    sumIf(n, aborted = 1) AS aborted_episodes,
    sumIf(n, success = 1 AND aborted = 0) AS successes,
    if(episodes = aborted_episodes, 0, round(100 * successes / (episodes - aborted_episodes), 1)) AS success_pct,
    sum(length * n) AS steps,
    uniqExact(minute) AS active_minutes,
    round(episodes / active_minutes, 2) AS episodes_per_min,
    round(steps / active_minutes, 2) AS steps_per_min
FROM
(
    SELECT minute, if(family LIKE 'miniwob/%', 'miniwob', 'builtin') AS suite, kind, success, aborted, length,
           uniqExactMerge(episodes) AS n
    FROM episode_lengths_by_kind_1m
    WHERE minute >= toStartOfMinute(@since) AND minute < @until AND (@run = '' OR run = @run)
    GROUP BY minute, suite, kind, success, aborted, length
)
GROUP BY suite, kind
ORDER BY suite, kind
