-- The learner's training statistics by policy version (from weights): loss, approx KL, clip fraction, entropy and the staleness of the transitions it trained on.
-- One row per policy and version, in publication order, with the update
-- count it was published after: the numbers describe the last update
-- before that version. trained_staleness is the mean policy lag of that
-- update's samples (the version being trained minus the version that acted
-- the sample), max_trained_staleness the largest. A metric the learner did
-- not report reads 0.
SELECT
    policy_name,
    version,
    min(produced_at) AS published_at,
    any(updates) AS updates,
    round(any(metric_values[indexOf(metric_names, 'loss')]), 4) AS loss,
    round(any(metric_values[indexOf(metric_names, 'approx_kl')]), 4) AS approx_kl,
    round(any(metric_values[indexOf(metric_names, 'clip_frac')]), 4) AS clip_frac,
    round(any(metric_values[indexOf(metric_names, 'entropy')]), 4) AS entropy,
    round(any(metric_values[indexOf(metric_names, 'staleness')]), 2) AS trained_staleness,
    round(any(metric_values[indexOf(metric_names, 'max_staleness')]), 2) AS max_trained_staleness
FROM weights
WHERE produced_at >= @since AND produced_at < @until AND (@run = '' OR run = @run)
GROUP BY policy_name, version
ORDER BY policy_name, version
