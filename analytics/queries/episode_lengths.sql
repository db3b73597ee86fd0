-- Episode lengths (steps) by tier, task family and kind: mean, median, 90th percentile and longest, with the success rate (from episode_lengths_by_kind_1m).
-- kind is sample (training), greedy (held-out evaluation) or demo
-- (scripted demonstrations, never the policy's). Percentiles are exact
-- (quantileExactWeighted over the length histogram). success_pct leaves
-- aborted episodes out, like success_rate.
SELECT
    tier,
    family,
    kind,
    sum(n) AS episodes,
    round(sum(length * n) / episodes, 2) AS mean_length,
    quantileExactWeighted(0.5)(length, n) AS p50,
    quantileExactWeighted(0.9)(length, n) AS p90,
    max(length) AS max_length,
    sumIf(n, truncated = 1) AS truncated_episodes,
    sumIf(n, aborted = 1) AS aborted_episodes,
    if(episodes = aborted_episodes, 0, round(100 * sumIf(n, success = 1 AND aborted = 0) / (episodes - aborted_episodes), 1)) AS success_pct
FROM
(
    SELECT tier, family, kind, success, truncated, aborted, length, uniqExactMerge(episodes) AS n
    FROM episode_lengths_by_kind_1m
    WHERE minute >= toStartOfMinute(@since) AND minute < @until AND (@run = '' OR run = @run)
    GROUP BY tier, family, kind, success, truncated, aborted, length
)
GROUP BY tier, family, kind
ORDER BY tier, family, kind
