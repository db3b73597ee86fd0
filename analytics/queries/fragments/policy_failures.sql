-- The policy's failed episodes that ended in the window, one row each
-- (episode_id, family, kind): no success and not aborted (truncated ones
-- included); demonstrations are left out (their failures are not the
-- policy's). The failure analysis queries join it to what those episodes did.
SELECT episode_id, family, kind
FROM episodes
WHERE produced_at >= @since AND produced_at < @until AND (@run = '' OR run = @run)
      AND success = 0 AND aborted = 0 AND kind != 'demo'
LIMIT 1 BY episode_id
