-- Language-model policies (issue 39): what a model generated for each
-- action. The per-token ids and log-probs stay on the actions topic (and
-- in event_log); a row keeps the reply, its length in tokens, and whether
-- it named a valid action. Empty and 0 for the features network.
ALTER TABLE {db}.actions ADD COLUMN lm_backend String AFTER greedy;
ALTER TABLE {db}.actions ADD COLUMN lm_model String AFTER lm_backend;
ALTER TABLE {db}.actions ADD COLUMN lm_text String AFTER lm_model;
ALTER TABLE {db}.actions ADD COLUMN lm_output_tokens UInt32 AFTER lm_text;
ALTER TABLE {db}.actions ADD COLUMN lm_prompt_tokens UInt32 AFTER lm_output_tokens;
ALTER TABLE {db}.actions ADD COLUMN lm_finish_reason String AFTER lm_prompt_tokens;
ALTER TABLE {db}.actions ADD COLUMN lm_invalid UInt8 AFTER lm_finish_reason;
ALTER TABLE {db}.actions ADD COLUMN lm_invalid_reason String AFTER lm_invalid;
ALTER TABLE {db}.actions ADD COLUMN lm_latency_ms UInt32 AFTER lm_invalid_reason;
ALTER TABLE {db}.actions ADD COLUMN lm_attempts UInt32 AFTER lm_latency_ms;

-- A model server's refused or garbled reply is dead-lettered with its own
-- reason code. Widening an Enum8 only adds a name.
ALTER TABLE {db}.dead_letters MODIFY COLUMN reason_code Enum8('unspecified' = 0, 'decode_error' = 1, 'unknown_type' = 2, 'missing_action' = 3, 'join_timeout' = 4, 'stale' = 5, 'schema_invalid' = 6, 'other' = 7, 'model_reply' = 8);
ALTER TABLE {db}.bad_records MODIFY COLUMN reason_code Enum8('unspecified' = 0, 'decode_error' = 1, 'unknown_type' = 2, 'missing_action' = 3, 'join_timeout' = 4, 'stale' = 5, 'schema_invalid' = 6, 'other' = 7, 'model_reply' = 8);
