-- Success rate by task family, site, split, tier, kind and policy version (from success_by_kind_1m).
-- kind is sample (training), greedy (held-out evaluation) or demo:
-- demonstrations (policy "oracle", version 0) are rows of their own and
-- never add to the policy's. An episode counts for the newest policy
-- version that acted in it. Aborted episodes (infrastructure failures) are
-- listed but left out of success_pct = successes / (episodes - aborted).
SELECT
    family,
    site,
    split,
    tier,
    kind,
    policy_version,
    sum(e) AS episodes,
    sum(s) AS successes,
    sum(ab) AS aborted,
    if(episodes = aborted, 0, round(100 * successes / (episodes - aborted), 1)) AS success_pct
FROM
(
    SELECT minute, tier, family, site, split, kind, policy_name, policy_version,
           uniqExactMerge(episodes) AS e, uniqExactIfMerge(successes) AS s, uniqExactIfMerge(aborts) AS ab
    FROM success_by_kind_1m
    WHERE minute >= toStartOfMinute(@since) AND minute < @until AND (@run = '' OR run = @run)
    GROUP BY minute, tier, family, site, split, kind, policy_name, policy_version
)
GROUP BY family, site, split, tier, kind, policy_version
ORDER BY family, site, split, tier, kind, policy_version
