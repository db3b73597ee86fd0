-- Which run each row belongs to, and what each episode was (issue 20).
--
-- run: the topic prefix of the run that produced the row (the catalog
-- prefix, e.g. 'run-20261201-170234.'), written by the recorder from its
-- configuration into every table it fills, so that runs sharing a database
-- are told apart by more than time. Rows recorded before this migration
-- read '' (unknown run). Saved queries filter on it with @run ('' = all).
--
-- kind: what the episode was for, 'sample' (a training episode, sampled
-- actions), 'greedy' (held-out evaluation, the most likely actions) or
-- 'demo' (webenv's scripted solution, policy "oracle"). The recorder
-- derives it from each event's own fields (analytics/kind.go): tasks from
-- Task.demo and Task.greedy, actions from their source and Action.greedy,
-- observations and transitions from their source and the split (held-out
-- episodes are the greedy ones: the curriculum and `replay eval` run
-- held-out tasks greedily and training tasks sampled), episodes from their
-- policy name ("oracle"), source and split. Rows recorded before this
-- migration read the same rule from their stored columns (the DEFAULT
-- expressions below), except what they did not store: an action recorded
-- before Action.greedy existed, or a transition (no split column), reads
-- 'unspecified' unless it was a demonstration, and an observation of a
-- demonstration reads 'sample' (actors then stamped it source = policy).
--
-- 18.16 has no ADD COLUMN IF NOT EXISTS: a re-run ALTER meets
-- DUPLICATE_COLUMN (or ILLEGAL_COLUMN "already exists"), which Migrate
-- tolerates; every other statement is re-runnable as it stands.
ALTER TABLE {db}.tasks ADD COLUMN run String AFTER recorded_at;
ALTER TABLE {db}.obs ADD COLUMN run String AFTER recorded_at;
ALTER TABLE {db}.actions ADD COLUMN run String AFTER recorded_at;
ALTER TABLE {db}.rewards ADD COLUMN run String AFTER recorded_at;
ALTER TABLE {db}.telemetry ADD COLUMN run String AFTER recorded_at;
ALTER TABLE {db}.transitions ADD COLUMN run String AFTER recorded_at;
ALTER TABLE {db}.episodes ADD COLUMN run String AFTER recorded_at;
ALTER TABLE {db}.weights ADD COLUMN run String AFTER recorded_at;
ALTER TABLE {db}.dead_letters ADD COLUMN run String AFTER recorded_at;
ALTER TABLE {db}.bad_records ADD COLUMN run String AFTER recorded_at;
ALTER TABLE {db}.event_log ADD COLUMN run String AFTER recorded_at;
ALTER TABLE {db}.consumer_lag ADD COLUMN run String AFTER taken_by;
-- Task.greedy and Task.demo, recorded (they were left out: split and source
-- told them apart). Older rows read the rule the curriculum follows.
ALTER TABLE {db}.tasks ADD COLUMN greedy UInt8 DEFAULT split = 'test' AFTER start_url;
ALTER TABLE {db}.tasks ADD COLUMN demo UInt8 DEFAULT policy_name = 'oracle' OR source = 'demo' AFTER greedy;
ALTER TABLE {db}.tasks ADD COLUMN kind Enum8('unspecified' = 0, 'sample' = 1, 'greedy' = 2, 'demo' = 3) DEFAULT CAST(multiIf(demo, 'demo', greedy, 'greedy', 'sample') AS Enum8('unspecified' = 0, 'sample' = 1, 'greedy' = 2, 'demo' = 3)) AFTER demo;

-- Action.greedy: the action was the most likely one (an evaluation episode).
ALTER TABLE {db}.actions ADD COLUMN greedy UInt8 AFTER raw;
ALTER TABLE {db}.actions ADD COLUMN kind Enum8('unspecified' = 0, 'sample' = 1, 'greedy' = 2, 'demo' = 3) DEFAULT CAST(multiIf(policy_name = 'oracle' OR source = 'demo', 'demo', greedy, 'greedy', 'unspecified') AS Enum8('unspecified' = 0, 'sample' = 1, 'greedy' = 2, 'demo' = 3)) AFTER greedy;
ALTER TABLE {db}.obs ADD COLUMN kind Enum8('unspecified' = 0, 'sample' = 1, 'greedy' = 2, 'demo' = 3) DEFAULT CAST(multiIf(source = 'demo', 'demo', split = 'test', 'greedy', split = 'train', 'sample', 'unspecified') AS Enum8('unspecified' = 0, 'sample' = 1, 'greedy' = 2, 'demo' = 3)) AFTER split;
ALTER TABLE {db}.transitions ADD COLUMN kind Enum8('unspecified' = 0, 'sample' = 1, 'greedy' = 2, 'demo' = 3) DEFAULT CAST(multiIf(policy_name = 'oracle' OR source = 'demo', 'demo', 'unspecified') AS Enum8('unspecified' = 0, 'sample' = 1, 'greedy' = 2, 'demo' = 3)) AFTER tier;
ALTER TABLE {db}.episodes ADD COLUMN kind Enum8('unspecified' = 0, 'sample' = 1, 'greedy' = 2, 'demo' = 3) DEFAULT CAST(multiIf(policy_name = 'oracle' OR source = 'demo', 'demo', split = 'test', 'greedy', split = 'train', 'sample', 'unspecified') AS Enum8('unspecified' = 0, 'sample' = 1, 'greedy' = 2, 'demo' = 3)) AFTER split;

-- The views' tables get run in their key (ADD COLUMN with MODIFY ORDER BY
-- may only append a column added by the same ALTER). Rows aggregated
-- before read run ''. Each view is then replaced by one that writes run:
-- the new view is created before the old one is dropped, so no insert in
-- between is missed; an event both saw is in two rows (run '' and its run)
-- whose uniqExact states merge into one when a query does not filter by
-- run, and only the second counts when it does.
ALTER TABLE {db}.throughput_1m ADD COLUMN run String AFTER minute, MODIFY ORDER BY (minute, topic, producer, run);

ALTER TABLE {db}.utilization_1m ADD COLUMN run String AFTER minute, MODIFY ORDER BY (minute, actor_id, executor_id, mode, event_id, run);

ALTER TABLE {db}.action_versions_1s ADD COLUMN run String AFTER second, MODIFY ORDER BY (second, policy_name, policy_version, run);

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.throughput_1m_from_tasks TO {db}.throughput_1m AS
SELECT toStartOfMinute(produced_at) AS minute, run, 'tasks' AS topic, producer, uniqExactState(event_id) AS events
FROM {db}.tasks GROUP BY minute, run, producer;

DROP TABLE IF EXISTS {db}.throughput_1m_tasks;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.throughput_1m_from_obs TO {db}.throughput_1m AS
SELECT toStartOfMinute(produced_at) AS minute, run, 'obs' AS topic, producer, uniqExactState(event_id) AS events
FROM {db}.obs GROUP BY minute, run, producer;

DROP TABLE IF EXISTS {db}.throughput_1m_obs;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.throughput_1m_from_actions TO {db}.throughput_1m AS
SELECT toStartOfMinute(produced_at) AS minute, run, 'actions' AS topic, producer, uniqExactState(event_id) AS events
FROM {db}.actions GROUP BY minute, run, producer;

DROP TABLE IF EXISTS {db}.throughput_1m_actions;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.throughput_1m_from_rewards TO {db}.throughput_1m AS
SELECT toStartOfMinute(produced_at) AS minute, run, 'rewards' AS topic, producer, uniqExactState(event_id) AS events
FROM {db}.rewards GROUP BY minute, run, producer;

DROP TABLE IF EXISTS {db}.throughput_1m_rewards;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.throughput_1m_from_telemetry TO {db}.throughput_1m AS
SELECT toStartOfMinute(produced_at) AS minute, run, 'telemetry' AS topic, producer, uniqExactState(event_id) AS events
FROM {db}.telemetry GROUP BY minute, run, producer;

DROP TABLE IF EXISTS {db}.throughput_1m_telemetry;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.throughput_1m_from_transitions TO {db}.throughput_1m AS
SELECT toStartOfMinute(produced_at) AS minute, run, 'transitions' AS topic, producer, uniqExactState(event_id) AS events
FROM {db}.transitions GROUP BY minute, run, producer;

DROP TABLE IF EXISTS {db}.throughput_1m_transitions;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.throughput_1m_from_episodes TO {db}.throughput_1m AS
SELECT toStartOfMinute(produced_at) AS minute, run, 'episodes' AS topic, producer, uniqExactState(event_id) AS events
FROM {db}.episodes GROUP BY minute, run, producer;

DROP TABLE IF EXISTS {db}.throughput_1m_episodes;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.throughput_1m_from_weights TO {db}.throughput_1m AS
SELECT toStartOfMinute(produced_at) AS minute, run, 'weights' AS topic, producer, uniqExactState(event_id) AS events
FROM {db}.weights GROUP BY minute, run, producer;

DROP TABLE IF EXISTS {db}.throughput_1m_weights;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.throughput_1m_from_dead_letters TO {db}.throughput_1m AS
SELECT toStartOfMinute(produced_at) AS minute, run, 'dlq' AS topic, producer, uniqExactState(event_id) AS events
FROM {db}.dead_letters GROUP BY minute, run, producer;

DROP TABLE IF EXISTS {db}.throughput_1m_dead_letters;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.utilization_1m_from_telemetry TO {db}.utilization_1m AS
SELECT toStartOfMinute(window_end) AS minute, run, actor_id, executor_id, mode, event_id,
       maxState(observe_us) AS observe, maxState(think_us) AS think, maxState(act_us) AS act,
       maxState(wait_us) AS wait, maxState(idle_us) AS idle, maxState(steps) AS steps_done
FROM {db}.telemetry GROUP BY minute, run, actor_id, executor_id, mode, event_id;

DROP TABLE IF EXISTS {db}.utilization_1m_telemetry;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.action_versions_1s_from_actions TO {db}.action_versions_1s AS
SELECT produced_at AS second, run, policy_name, policy_version, uniqExactState(event_id) AS actions
FROM {db}.actions GROUP BY second, run, policy_name, policy_version;

DROP TABLE IF EXISTS {db}.action_versions_1s_actions;

-- Success and episode lengths by kind. A key column added by ALTER cannot
-- have a DEFAULT, so the old rows of success_1m and episode_lengths_1m
-- could not get their kind: these are new tables, filled by new views and
-- back-filled from the episodes table (whose kind the DEFAULT above gives
-- to old rows). The back-fill may overlap what the new view wrote first,
-- and a re-run repeats it: uniqExact states count each episode once
-- whatever the copies. The old tables and views are then dropped.
CREATE TABLE IF NOT EXISTS {db}.success_by_kind_1m (
    minute         DateTime('UTC'),
    run            String,
    tier           Enum8('unspecified' = 0, 'easy' = 1, 'medium' = 2, 'hard' = 3),
    family         String,
    site           String,
    split          Enum8('unspecified' = 0, 'train' = 1, 'test' = 2),
    kind           Enum8('unspecified' = 0, 'sample' = 1, 'greedy' = 2, 'demo' = 3),
    policy_name    String,
    policy_version UInt64,
    episodes       AggregateFunction(uniqExact, String),
    successes      AggregateFunction(uniqExactIf, String, UInt8),
    aborts         AggregateFunction(uniqExactIf, String, UInt8)
) ENGINE = AggregatingMergeTree() PARTITION BY toYYYYMM(minute) ORDER BY (minute, run, tier, family, site, split, kind, policy_name, policy_version);

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.success_by_kind_1m_from_episodes TO {db}.success_by_kind_1m AS
SELECT toStartOfMinute(produced_at) AS minute, run, tier, family, site, split, kind, policy_name,
       arrayReduce('max', policy_versions_used) AS policy_version,
       uniqExactState(event_id) AS episodes,
       uniqExactIfState(event_id, success AND NOT aborted) AS successes,
       uniqExactIfState(event_id, aborted) AS aborts
FROM {db}.episodes GROUP BY minute, run, tier, family, site, split, kind, policy_name, policy_version;

INSERT INTO {db}.success_by_kind_1m
SELECT toStartOfMinute(produced_at) AS minute, run, tier, family, site, split, kind, policy_name,
       arrayReduce('max', policy_versions_used) AS policy_version,
       uniqExactState(event_id) AS episodes,
       uniqExactIfState(event_id, success AND NOT aborted) AS successes,
       uniqExactIfState(event_id, aborted) AS aborts
FROM {db}.episodes GROUP BY minute, run, tier, family, site, split, kind, policy_name, policy_version;

DROP TABLE IF EXISTS {db}.success_1m_episodes;

DROP TABLE IF EXISTS {db}.success_1m;

CREATE TABLE IF NOT EXISTS {db}.episode_lengths_by_kind_1m (
    minute    DateTime('UTC'),
    run       String,
    tier      Enum8('unspecified' = 0, 'easy' = 1, 'medium' = 2, 'hard' = 3),
    family    String,
    split     Enum8('unspecified' = 0, 'train' = 1, 'test' = 2),
    kind      Enum8('unspecified' = 0, 'sample' = 1, 'greedy' = 2, 'demo' = 3),
    success   UInt8,
    truncated UInt8,
    aborted   UInt8,
    length    UInt32,
    episodes  AggregateFunction(uniqExact, String)
) ENGINE = AggregatingMergeTree() PARTITION BY toYYYYMM(minute) ORDER BY (minute, run, tier, family, split, kind, success, truncated, aborted, length);

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.episode_lengths_by_kind_1m_from_episodes TO {db}.episode_lengths_by_kind_1m AS
SELECT toStartOfMinute(produced_at) AS minute, run, tier, family, split, kind, success, truncated, aborted, length,
       uniqExactState(event_id) AS episodes
FROM {db}.episodes GROUP BY minute, run, tier, family, split, kind, success, truncated, aborted, length;

INSERT INTO {db}.episode_lengths_by_kind_1m
SELECT toStartOfMinute(produced_at) AS minute, run, tier, family, split, kind, success, truncated, aborted, length,
       uniqExactState(event_id) AS episodes
FROM {db}.episodes GROUP BY minute, run, tier, family, split, kind, success, truncated, aborted, length;

DROP TABLE IF EXISTS {db}.episode_lengths_1m_episodes;

DROP TABLE IF EXISTS {db}.episode_lengths_1m;
