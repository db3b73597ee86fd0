-- Learning curve: the policy's success rate over time by difficulty tier, kind and split (from success_by_kind_1m).
-- One row per time bucket, tier, kind and split: sample (training
-- episodes, sampled actions) and greedy (held-out evaluation) are separate
-- curves. Demonstrations are not the policy's and are left out, as are
-- aborted episodes.
SELECT
    toDateTime(intDiv(toUInt32(minute), @bucket) * @bucket, 'UTC') AS bucket,
    tier,
    kind,
    split,
    sum(e) - sum(ab) AS episodes,
    if(episodes = 0, 0, round(100 * sum(s) / episodes, 1)) AS success_pct
FROM
(
    SELECT minute, tier, family, site, split, kind, policy_name, policy_version,
           uniqExactMerge(episodes) AS e, uniqExactIfMerge(successes) AS s, uniqExactIfMerge(aborts) AS ab
    FROM success_by_kind_1m
    WHERE minute >= toStartOfMinute(@since) AND minute < @until AND (@run = '' OR run = @run) AND kind != 'demo'
    GROUP BY minute, tier, family, site, split, kind, policy_name, policy_version
)
GROUP BY bucket, tier, kind, split
ORDER BY bucket, tier, kind, split
