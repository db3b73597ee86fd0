-- The window's actions per second, policy and version (n), with their
-- staleness: max(version of the policy published on the weights topic
-- before that second) - the version acted with, at least 0 (0 too when no
-- weights of the policy were recorded). The staleness and
-- staleness_over_time queries aggregate it.
SELECT
    second,
    -- The action's time goes into the lambda as an array (replicate)
    -- rather than a captured column: 18.16 loses captured columns
    -- after a JOIN.
    greatest(toInt64(arrayReduce('max', arrayFilter((v, p, t) -> p < t, versions, published, replicate(second_ns, versions))))
             - toInt64(policy_version), 0) AS staleness,
    n
FROM
(
    SELECT second, toInt64(toUInt32(second)) * 1000000000 AS second_ns, policy_name, policy_version,
           uniqExactMerge(actions) AS n
    FROM action_versions_1s
    WHERE second >= @since AND second < @until AND (@run = '' OR run = @run)
    GROUP BY second, policy_name, policy_version
)
ANY LEFT JOIN
(
    SELECT policy_name, groupArray(version) AS versions, groupArray(produced_at_ns) AS published
    FROM (SELECT policy_name, version, produced_at_ns FROM weights FINAL WHERE (@run = '' OR run = @run))
    GROUP BY policy_name
) USING policy_name
