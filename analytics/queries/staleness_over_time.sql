-- Policy staleness over time: how many versions behind the newest published weights the actions' policy was, per time bucket (from action_versions_1s and weights).
-- One row per time bucket: the actions, their mean staleness and the
-- largest; an action's staleness is as in the staleness query.
SELECT
    toDateTime(intDiv(toUInt32(second), @bucket) * @bucket, 'UTC') AS bucket,
    sum(n) AS actions,
    round(sum(staleness * n) / actions, 2) AS mean_staleness,
    max(staleness) AS max_staleness
FROM
(
    {{action_staleness}}
)
GROUP BY bucket
ORDER BY bucket
